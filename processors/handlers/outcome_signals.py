"""Outcome signals (seed 002 §5.3, §9, §16): an `outcome.observed` reaches its contact's tasks through the
`ContactIndex` and closes, or revises, each as the completion evaluator (`domain/completion.py`) says; the dormant
check and the verification of a provisional outcome read the same signals later, from their timers. No send and no
model call: a signal is a fact."""

from __future__ import annotations

from loopline.domain import ids
from loopline.domain.completion import UNDOING_SIGNALS, Ignore, ObservedSignal, Revise, evaluate, someone_else
from loopline.domain.contact_index import ContactIndex
from loopline.domain.outreach import Close
from loopline.domain.status import TaskStatus
from loopline.domain.task import Task
from loopline.domain.task_types import TaskType, task_type
from loopline.processors.application import UnitOfWork
from loopline.processors.handlers.attribution import attribute_value
from loopline.processors.handlers.goal_signals import (
    contact_outcomes,
    goal_reached,
    task_view,
    verification_due,
    watch_dormant,
)
from loopline.processors.handlers.outreach import close
from loopline.processors.messages import Message, TimerFired
from loopline.processors.ports import Drafter


def on_outcome_observed(uow: UnitOfWork, msg: Message) -> str:
    """Keeps the signal for the contact, then applies it to each of their tasks whose type counts its kind."""
    signal = ObservedSignal.of(msg.ref, msg.at, msg.data)
    contact = str(msg.data["contact"])
    contact_outcomes(uow, msg.tenant, contact, msg.at).observe(signal)
    index = uow.get(ids.contact_index_id(msg.tenant, contact), ContactIndex)
    refs = sorted(set(index.tasks.values())) if index is not None else []
    tasks = [task for ref in refs if (task := uow.get(ids.task_id(msg.tenant, ref), Task)) is not None]
    said = [what for task in tasks if (what := apply_signal(uow, task, signal)) is not None]
    return "; ".join(said) or f"{signal.kind} kept for {contact}: no task of theirs counts it"


def apply_signal(uow: UnitOfWork, task: Task, signal: ObservedSignal) -> str | None:
    """What the signal does to one task, kept on it as evidence first; None for a type that does not count it, and
    for a closed task it leaves as it is (a contact who checks in daily adds nothing to their old tasks)."""
    kind = task_type(task.task_type)
    if signal.kind not in dict(kind.signal_outcomes):
        return None
    assert task.contact is not None
    other = someone_else(signal, task.contact, task.context)
    verdict = (Ignore(f"made by another member's account ({other}), not {task.contact}'s") if other is not None
               else evaluate(task_view(task), signal, task_type=kind))
    if isinstance(verdict, Ignore) and task.is_closed:
        return f"'{task.title}': {signal.kind} changes nothing ({verdict.reason})"
    task.note_outcome_signal(signal_ref=signal.ref, signal_kind=signal.kind, value=signal.value,
                             account=signal.account, effect=_effect(verdict), now=signal.at)
    if isinstance(verdict, Ignore):
        return f"'{task.title}': {signal.kind} changes nothing ({verdict.reason})"
    if isinstance(verdict, Close):
        return close(uow, task, verdict, signal.at, evidence=(signal.ref, signal.value))
    return revise(uow, task, kind, verdict, signal)


def revise(uow: UnitOfWork, task: Task, kind: TaskType, verdict: Revise, signal: ObservedSignal) -> str:
    """A closed task's outcome becomes the signal's (a late attribution) or is undone (a refund); its value follows."""
    outcome = kind.outcome(verdict.code)
    assert outcome is not None, f"{kind.name} maps {signal.kind} to {verdict.code}, which is not in its spectrum"
    before = task.outcome
    if verdict.cause == "undone":
        task.undo_outcome(code=verdict.code, kind=outcome.kind, reason=verdict.reason, signal_ref=signal.ref,
                          signal_kind=signal.kind, value=signal.value, now=signal.at)
    else:
        task.attribute_late(code=verdict.code, kind=outcome.kind, reason=verdict.reason, signal_ref=signal.ref,
                            signal_kind=signal.kind, value=signal.value, now=signal.at)
    value = attribute_value(uow, task, verdict.code, now=signal.at, signal_ref=signal.ref,
                            amount=None if signal.kind in UNDOING_SIGNALS else signal.value,
                            late=verdict.cause == "late_attribution")
    said = f"'{task.title}': outcome {before} became {verdict.code} ({verdict.reason}); now worth {value:g}"
    task.notify_user(kind="outcome_revised", message=f"{said}.", now=signal.at)
    return said


def _effect(verdict: Close | Revise | Ignore) -> str:
    if isinstance(verdict, Close):
        return f"closed as {verdict.outcome}: {verdict.reason}"
    if isinstance(verdict, Revise):
        return f"{verdict.cause.replace('_', ' ')}: {verdict.code} ({verdict.reason})"
    return f"no change: {verdict.reason}"


def dormant_check(uow: UnitOfWork, timer: TimerFired, drafter: Drafter) -> str | None:
    """A dormant task's periodic check (§6.4): a signal of its contact's it has not acted on closes it, else the next
    check is filed. Nothing is sent and no model asked."""
    task = uow.get(timer.target_id, Task)
    if task is None or task.status is not TaskStatus.DORMANT:
        return None
    found = goal_reached(uow, task)
    if found is None:
        watch_dormant(uow, task, timer.now)
        return None
    return close(uow, task, Close(found.outcome, found.status, f"{found.reason} (found by the dormant check)"),
                 timer.now)


def verify_outcome(uow: UnitOfWork, timer: TimerFired, drafter: Drafter) -> str | None:
    """A provisional outcome whose verification window passed with no confirming signal (a confirming one revised it
    already) is downgraded to the code its type names (§5.3: `verbal_commitment` to `engaged_conversation`)."""
    task = uow.get(timer.target_id, Task)
    due = verification_due(task) if task is not None else None
    if task is None or due is None or due > timer.now:
        return None
    kind = task_type(task.task_type)
    provisional = kind.outcome(str(task.outcome))
    assert provisional is not None and provisional.downgrades_to is not None, (
        f"{kind.name}'s provisional outcome {task.outcome} names no outcome to downgrade to")
    lower = kind.outcome(provisional.downgrades_to)
    assert lower is not None
    days = (due - task.last_activity_at).days
    reason = f"no signal confirmed {task.outcome} within {days} days of the close"
    task.downgrade_outcome(code=lower.code, kind=lower.kind, reason=reason, now=timer.now)
    value = attribute_value(uow, task, lower.code, now=timer.now)
    said = f"'{task.title}': outcome {provisional.code} downgraded to {lower.code} ({reason}); now worth {value:g}"
    task.notify_user(kind="outcome_revised", message=f"{said}.", now=timer.now)
    return said

