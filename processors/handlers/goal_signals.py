"""A task's goal signals read on the write side (seed 002 §6.4, §16.2, §30): the contact's observed outcome signals,
the stale guard before a send, and the timers that look at them later (the dormant check, the verification of a
provisional outcome). Nothing here sends or asks the model."""

from __future__ import annotations

from datetime import datetime, timedelta

from loopline.domain import ids
from loopline.domain.completion import TaskView, evaluate, someone_else
from loopline.domain.contact_outcomes import ContactOutcomes
from loopline.domain.outreach import DEFAULT_DORMANT_CHECK_DAYS, Close
from loopline.domain.task import Task
from loopline.domain.task_types import task_type
from loopline.domain.timers import TimerKind
from loopline.processors.application import UnitOfWork
from loopline.processors.handlers.loops_and_timers import set_timer, task_history


def task_view(task: Task) -> TaskView:
    """What the completion evaluator reads of the task; a closed task closed at its last activity (nothing after a
    close is activity)."""
    return TaskView(status=task.status, outcome=task.outcome, created_on=task.created_on,
                    closed_at=task.last_activity_at if task.is_closed else None,
                    reached_out=task.touch > 0 or task.messages_used > 0 or task.turns_used > 0)


def contact_outcomes(uow: UnitOfWork, tenant: str, contact: str, now: datetime) -> ContactOutcomes:
    outcomes_id = ids.contact_outcomes_id(tenant, contact)
    return uow.get_or_create(outcomes_id, ContactOutcomes,
                             lambda: ContactOutcomes.create(id=outcomes_id, tenant=tenant, contact=contact, now=now))


def goal_reached(uow: UnitOfWork, task: Task) -> Close | None:
    """The close the contact's outcome signals since the task's creation (since the owner last reopened it) call for,
    if one does (the first that counts): a signal the task has not acted on, because it came while the task awaited
    review or out of order.

    It is the stale guard of §30, read before every touch (`self_resolved` when nothing reached the contact yet):
    signals are pushed into the log, so the kept ones are as fresh as it is, and reading them costs one aggregate,
    where §30.2 waits 4 hours between refreshes from an outside API."""
    assert task.contact is not None
    outcomes = uow.get(ids.contact_outcomes_id(task.tenant, task.contact), ContactOutcomes)
    if outcomes is None:
        return None
    kind = task_type(task.task_type)
    reopened: datetime | None = None
    for signal in outcomes.since(task.created_on):
        if someone_else(signal, task.contact, task.context) is None:
            verdict = evaluate(task_view(task), signal, task_type=kind)
            if isinstance(verdict, Close):
                reopened = reopened or _last_reopened(uow, task)
                if signal.at >= reopened:
                    return verdict
    return None


def _last_reopened(uow: UnitOfWork, task: Task) -> datetime:
    """When the owner last reopened the task (its creation if never): the signals before were in view when they said
    it is not done, so none of them closes it again (the one that closed it would credit its value twice). Read only
    when a signal would close the task, so the guard before an ordinary touch reads no history."""
    return max((event.timestamp for event in task_history(uow, task) if isinstance(event, Task.Reopened)),
               default=task.created_on)


def watch_dormant(uow: UnitOfWork, task: Task, now: datetime) -> None:
    """Files the dormant task's next check (§6.4) `dormant_check_days` from now."""
    days = (task.outreach or {}).get("dormant_check_days") or DEFAULT_DORMANT_CHECK_DAYS
    set_timer(uow, kind=TimerKind.DORMANT_CHECK, target_id=task.id, due=now + timedelta(days=days), now=now)


def verification_due(task: Task) -> datetime | None:
    """When the task's provisional outcome is downgraded if no signal confirms it: its type's longest verification
    window after the close; None for an outcome that is not provisional."""
    kind = task_type(task.task_type)
    outcome = kind.outcome(task.outcome) if task.outcome else None
    if outcome is None or not outcome.provisional or not task.is_closed:
        return None
    window = max((signal.verification_window_days for signal in kind.goal.signals), default=0)
    return task.last_activity_at + timedelta(days=window)


def watch_provisional(uow: UnitOfWork, task: Task, now: datetime) -> None:
    """A task closed with a provisional outcome (`verbal_commitment`) is verified when its window ends."""
    due = verification_due(task)
    if due is not None:
        set_timer(uow, kind=TimerKind.OUTCOME_VERIFICATION, target_id=task.id, due=due, now=now)

