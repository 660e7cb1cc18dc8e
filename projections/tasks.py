"""The `tasks` read model (with each task's inbox): what `tasks list` and `tasks show` print; the queries are
`projections/task_queries.py`."""

from __future__ import annotations

from typing import Any

from sqlalchemy import JSON, Boolean, Column, Integer, String, Table, Text
from sqlalchemy.engine import Connection

from loopline.domain.outreach import planned_touches
from loopline.domain.task import Task
from loopline.domain.task_outcomes import OutcomeRevision
from loopline.domain.task_priority import SCORE_URGENCY, is_urgency_request
from loopline.domain.timeutil import format_time
from loopline.projections import writes
from loopline.projections.runner import metadata

tasks = Table(
    "tasks", metadata,
    Column("aggregate_id", String(36), primary_key=True),
    Column("tenant", String(200), nullable=False, index=True),
    Column("task_id", String(200), nullable=False),
    Column("title", Text, nullable=False),
    Column("description", Text, nullable=False),
    Column("task_type", String(64), nullable=False),
    Column("status", String(32), nullable=False, index=True),
    Column("priority", String(16)),
    Column("contact", String(200)),
    Column("created_at", String(40), nullable=False),
    Column("updated_at", String(40), nullable=False),
    Column("expires_at", String(40)),
    Column("open_loops", Integer, nullable=False),
    Column("actions", Integer, nullable=False),
    Column("inbox", Integer, nullable=False),
    Column("notifications", Integer, nullable=False),
    Column("last_note", Text),
    Column("status_reason", Text),
    Column("stalled_since", String(40)),
    # What Loopline does with an acting task (DESIGN11 §6): its plan, budgets used, next step and outcome.
    Column("cadence", String(32)),
    Column("touches", Integer),
    Column("touch", Integer, nullable=False),
    Column("on_exhaustion", String(16)),
    Column("messages_budget", Integer),
    Column("messages_used", Integer, nullable=False),
    Column("turns_budget", Integer),
    Column("turns_used", Integer, nullable=False),
    Column("ends_at", String(40)),
    Column("next_action", String(32)),
    Column("next_action_at", String(40)),
    Column("next_action_reason", Text),
    Column("decisions", Integer, nullable=False),
    Column("deferrals", Integer, nullable=False),
    Column("outcome", String(64)),
    Column("outcome_kind", String(16)),
    Column("outcome_provisional", Boolean),
    Column("away", JSON),  # the contact's automatic reply pausing the cadence: until when, and what gave it away
    # A subtask's parent and requirement (seed 002 §14); a parent's children are the rows naming it.
    Column("parent_id", String(200), index=True),
    Column("requirement", String(16)),
    Column("subtasks_derived", String(32)),
)

task_inbox = Table(
    "task_inbox", metadata,
    Column("aggregate_id", String(36), primary_key=True),
    Column("signal_id", String(200), primary_key=True),
    Column("type", String(64), nullable=False),
    Column("received_at", String(40), nullable=False),
    Column("data", JSON, nullable=False),
)


def _update(conn: Connection, event: Any, add: dict[str, int] | None = None, **values: Any) -> None:
    """Activity (the events that move a task, as Task._moved sees it) clears the stalled flag."""
    quiet = isinstance(event, QUIET) or (
        isinstance(event, Task.WokenUp) and event.cause == "escalation"
    )
    values = values if quiet else {"stalled_since": None, **values}
    writes.update(
        conn, tasks, str(event.originator_id), set={"updated_at": format_time(event.timestamp), **values}, add=add
    )


QUIET = (
    Task.UserNotified, Task.StallFlagged, Task.WakeupScheduled, Task.LoopLinked, Task.LoopClosed, Task.OutreachPlanned,
    Task.ContextMerged, Task.DecisionRequested, Task.DecisionHeld, Task.DecisionRecorded, Task.DecisionFailed,
    Task.SendDeferred, Task.OutcomeSet, Task.TouchSent, Task.NextTouchScheduled, Task.OutOfOfficeReceived,
    Task.ReplyNoted, Task.SendReturned, Task.OutcomeSignalReceived, Task.AttributedLate, Task.OutcomeDowngraded,
    Task.OutcomeUndone, Task.OutcomeOverridden, Task.PriorityRuled,
)
"""Events that are no activity of their own: a send is activity through its ActionRecorded, a close through Completed."""


def _created(conn: Connection, event: Task.Created, position: int) -> None:
    writes.insert(conn, tasks, {
        "aggregate_id": str(event.originator_id), "tenant": event.tenant, "task_id": event.ref, "title": event.title,
        "description": event.description, "task_type": event.task_type, "status": event.status,
        "priority": event.priority, "contact": event.contact, "created_at": format_time(event.timestamp),
        "updated_at": format_time(event.timestamp), "expires_at": format_time(event.expires_at), "open_loops": 0,
        "actions": 0, "inbox": 0, "notifications": 0, "last_note": None, "status_reason": event.reason,
        "stalled_since": None, "cadence": None, "touches": None, "touch": 0, "on_exhaustion": None,
        "messages_budget": None, "messages_used": 0, "turns_budget": None, "turns_used": 0, "ends_at": None,
        **NO_NEXT_ACTION, "decisions": 0, "deferrals": 0, "outcome": None, "outcome_kind": None,
        "outcome_provisional": None, "away": None, "parent_id": None, "requirement": None, "subtasks_derived": None,
    })


def _action(conn: Connection, event: Task.ActionRecorded, position: int) -> None:
    _update(conn, event, add={"actions": 1}, status=event.status, last_note=event.summary)


def _loop_linked(conn: Connection, event: Task.LoopLinked, position: int) -> None:
    _update(conn, event, add={"open_loops": 1})


def _loop_closed(conn: Connection, event: Task.LoopClosed, position: int) -> None:
    _update(conn, event, add={"open_loops": -1})


def _signal(conn: Connection, event: Task.SignalReceived, position: int) -> None:
    _update(  # word from the contact ends an absence, as in the task (an automatic reply starts it again)
        conn, event, add={"inbox": 1, "open_loops": -len(event.resolved_loops)}, status=event.status, away=None,
    )
    writes.insert(conn, task_inbox, {
        "aggregate_id": str(event.originator_id), "signal_id": event.signal_ref, "type": event.signal_type,
        "received_at": format_time(event.timestamp), "data": event.data,
    })


def _reply_noted(conn: Connection, event: Task.ReplyNoted, position: int) -> None:
    """A reply another task of the contact answers is in this task's inbox too, saying which task answers it."""
    _update(conn, event, add={"inbox": 1}, away=None)  # she wrote: not away any more
    writes.insert(conn, task_inbox, {
        "aggregate_id": str(event.originator_id), "signal_id": event.signal_ref, "type": "email.received",
        "received_at": format_time(event.timestamp), "data": {**event.data, "answered_by": event.answered_by},
    })


def _status(reason_field: str | None, *, stops: bool = False):
    """`stops`: the task leaves Loopline's hands (closed, or with the owner), so nothing is next."""

    def handler(conn: Connection, event: Any, position: int) -> None:
        values: dict[str, Any] = {"status": event.status, **(NO_NEXT_ACTION if stops else {})}
        if reason_field:
            values["status_reason"] = getattr(event, reason_field)
        _update(conn, event, **values)

    return handler


def _noted(conn: Connection, event: Task.ProgressNoted, position: int) -> None:
    _update(conn, event, status=event.status, last_note=event.notes)


def _notified(conn: Connection, event: Task.UserNotified, position: int) -> None:
    _update(conn, event, add={"notifications": 1})


NO_NEXT_ACTION = {"next_action": None, "next_action_at": None, "next_action_reason": None}


def _moved(event: Any) -> dict[str, Any]:
    return {"status": event.status} if hasattr(event, "status") else {}


def _planned(conn: Connection, event: Task.OutreachPlanned, position: int) -> None:
    _update(
        conn, event, cadence=event.cadence, touches=planned_touches(event.budget_messages, event.intervals),
        on_exhaustion=event.on_exhaustion, messages_budget=event.budget_messages, turns_budget=event.budget_turns,
        ends_at=format_time(event.ends_at),
    )


def _touch_sent(conn: Connection, event: Task.TouchSent, position: int) -> None:
    _update(
        conn, event, touch=event.touch, messages_used=event.messages_used, next_action="touch" if event.next_touch_at else None,
        next_action_at=format_time(event.next_touch_at), next_action_reason=None, **_moved(event),
    )


def _deferred(conn: Connection, event: Task.SendDeferred, position: int) -> None:
    _update(
        conn, event, add={"deferrals": 1}, next_action="deferred_send", next_action_at=format_time(event.until),
        next_action_reason=event.reason, **_moved(event),
    )


def _decision_requested(conn: Connection, event: Task.DecisionRequested, position: int) -> None:
    if event.point == SCORE_URGENCY:  # a score beside the task's work: never its next action
        return _update(conn, event)
    # A reply evaluated is a turn (seed 002 §6.5), counted once however often the model is asked again.
    turn = {"turns_used": 1} if event.point == "evaluate_reply" and event.attempt == 1 else {}
    _update(
        conn, event, add=turn, next_action=event.point, next_action_at=format_time(event.timestamp),
        next_action_reason=event.reason, **_moved(event),
    )


def _decision_recorded(conn: Connection, event: Task.DecisionRecorded, position: int) -> None:
    cleared = {} if event.point == SCORE_URGENCY else NO_NEXT_ACTION  # a score answered leaves the work's next action
    _update(conn, event, add={"decisions": 1}, **cleared, **_moved(event))


def _decision_failed(conn: Connection, event: Task.DecisionFailed, position: int) -> None:
    """Without a retry time the task escalates (its Escalated event follows and clears the next action); a failed
    urgency score is not asked again and leaves the next action as it was."""
    if is_urgency_request(event.request_ref):
        return _update(conn, event)
    _update(
        conn, event, next_action="decision_retry", next_action_at=format_time(event.retry_at),
        next_action_reason=f"model unavailable (attempt {event.attempt}): {event.error}", **_moved(event),
    )


def _decision_held(conn: Connection, event: Task.DecisionHeld, position: int) -> None:
    _update(
        conn, event, next_action="held_model_call", next_action_at=format_time(event.until),
        next_action_reason=f"{event.point} waits for a model-call limit ({event.rule}): {event.why}",
    )


def _next_touch(conn: Connection, event: Task.NextTouchScheduled, position: int) -> None:
    _update(
        conn, event, next_action="touch", next_action_at=format_time(event.next_touch_at), next_action_reason=event.reason,
        **_moved(event),
    )


def _out_of_office(conn: Connection, event: Task.OutOfOfficeReceived, position: int) -> None:
    back = f"back on {event.returns_on}" if event.returns_on else "no return date given, so a week"
    _update(
        conn, event, next_action="touch", next_action_at=format_time(event.next_touch_at),
        next_action_reason=f"the contact is out of office, {back}", **_moved(event),
        away={"until": format_time(event.until), "returns_on": event.returns_on, "recognised_by": event.sign},
    )


def _outcome(conn: Connection, event: Task.OutcomeSet, position: int) -> None:
    _update(conn, event, outcome=event.code, outcome_kind=event.kind, outcome_provisional=event.provisional)


def _outcome_revised(conn: Connection, event: OutcomeRevision | Task.OutcomeOverridden, position: int) -> None:
    """A closed task's outcome revised by a signal or its verification window (`domain/task_outcomes.py`), or by the
    owner (`domain/task_progress.py`)."""
    _update(conn, event, outcome=event.code, outcome_kind=event.kind, outcome_provisional=False)


def _reopened(conn: Connection, event: Task.Reopened, position: int) -> None:
    """Back to work (`domain/task_progress.py`): no outcome, and its time budget from the reopening."""
    ends_at = format_time(event.expires_at)
    plan = {"ends_at": ends_at} if writes.row(conn, tasks, str(event.originator_id))["cadence"] else {}
    _update(conn, event, status=event.status, status_reason=event.reason, outcome=None, outcome_kind=None,
            outcome_provisional=None, expires_at=ends_at, **plan)


def _dormant(conn: Connection, event: Task.WentDormant, position: int) -> None:
    _update(
        conn, event, status=event.status, status_reason=event.reason, next_action="dormant_end",
        next_action_at=format_time(event.until), next_action_reason=None,
    )


def _linked(conn: Connection, event: Task.SubtaskLinked, position: int) -> None:
    budgets = {"messages_budget": event.budget_messages, "turns_budget": event.budget_turns} if event.acting else {}
    writes.update(conn, tasks, str(event.originator_id),
                  set={"parent_id": event.parent_ref, "requirement": event.requirement, **budgets})


def _derived(conn: Connection, event: Task.SubtasksDerived, position: int) -> None:
    _update(conn, event, status=event.status, status_reason=event.reason, subtasks_derived=event.derived)


name = "tasks"
cost = 2  # seconds to rebuild bench/rebuild.py's store alone, to share rebuild work evenly
tables = (tasks, task_inbox)
handlers = {
    Task.Created: _created,
    Task.ActionRecorded: _action,
    Task.LoopLinked: _loop_linked,
    Task.LoopClosed: _loop_closed,
    Task.SignalReceived: _signal,
    Task.ReplyNoted: _reply_noted,
    Task.ProgressNoted: _noted,
    Task.UserNotified: _notified,
    Task.Reviewed: _status("reason"),
    Task.GuidanceGiven: _status("text"),
    Task.Escalated: _status("reason", stops=True),
    Task.Completed: _status("summary", stops=True),
    Task.Cancelled: _status("reason", stops=True),
    Task.Expired: _status("reason", stops=True),
    Task.WaitStarted: _status("reason"),
    Task.WaitEnded: _status("reason"),
    Task.WorkflowOutputRecorded: lambda conn, event, position: _update(conn, event),
    Task.WakeupScheduled: lambda conn, event, position: _update(conn, event),
    Task.WokenUp: _status(None),  # the status changes; why the task is in it (e.g. escalated) does not
    Task.StallFlagged: lambda conn, event, position: _update(conn, event, stalled_since=format_time(event.timestamp)),
    Task.OutreachPlanned: _planned,
    Task.ContextMerged: lambda conn, event, position: _update(conn, event),
    Task.TouchSent: _touch_sent,
    Task.SendDeferred: _deferred,
    Task.SendReturned: lambda conn, event, position: _update(conn, event, messages_used=event.messages_used),
    Task.DecisionRequested: _decision_requested,
    Task.DecisionRecorded: _decision_recorded,
    Task.DecisionFailed: _decision_failed,
    Task.DecisionHeld: _decision_held,
    Task.OutcomeSet: _outcome,
    Task.AttributedLate: _outcome_revised,
    Task.OutcomeDowngraded: _outcome_revised,
    Task.OutcomeUndone: _outcome_revised,
    Task.OutcomeOverridden: _outcome_revised,
    Task.Reopened: _reopened,
    Task.WentDormant: _dormant,
    Task.NextTouchScheduled: _next_touch,
    Task.OutOfOfficeReceived: _out_of_office,
    Task.SubtaskLinked: _linked,
    Task.SubtaskHeld: _status("reason"),
    Task.SubtasksDerived: _derived,
    Task.PriorityRuled: lambda conn, event, position: _update(conn, event, priority=event.priority),
}
