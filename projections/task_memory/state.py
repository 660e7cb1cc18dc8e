"""The task's state document, changed by each event it follows; every change also logs the event, records
its message in the conversation and archives workflow outputs older than 7 days."""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy.engine import Connection

from loopline.domain import ids
from loopline.domain.open_loop import OpenLoop
from loopline.domain.task import Task
from loopline.domain.task_outcomes import OutcomeRevision
from loopline.domain.timeutil import format_time
from loopline.projections import writes
from loopline.projections.task_memory.conversation import record_turn
from loopline.projections.task_memory.log import append_line
from loopline.projections.task_memory.schema import memory_files, memory_tasks
from loopline.projections.task_memory.workflows import archive_old_outputs, store_output
from loopline.domain.outreach import planned_touches

DONE_SHOWN = 10  # the latest actions kept for progress.md
EXPIRED_SHOWN = 5  # the latest expired loops kept for progress.md


def _load(conn: Connection, aggregate_id: str) -> dict[str, Any]:
    row = writes.row(conn, memory_tasks, aggregate_id)
    assert row is not None, f"task {aggregate_id} has events but no Created event was projected"
    return row["state"]


def _save(conn: Connection, aggregate_id: str, state: dict[str, Any], **columns: Any) -> None:
    writes.update(conn, memory_tasks, aggregate_id, set={"state": state, **columns})


def _handle(change):
    """Wraps a state change: load the task's state, change it, log the event, rotate, save."""

    def handler(conn: Connection, event: Any, position: int) -> None:
        aggregate_id = _owner(event)
        state = _load(conn, aggregate_id)
        columns = change(conn, aggregate_id, state, event) or {}
        record_turn(conn, aggregate_id, state, event)
        state["updated_at"] = format_time(event.timestamp)
        append_line(conn, aggregate_id, state, event)
        archive_old_outputs(conn, aggregate_id, state, event.timestamp)
        _save(conn, aggregate_id, state, **columns)

    return handler


def _owner(event: Any) -> str:
    if isinstance(event, OpenLoop.Registered):
        return str(ids.task_id(event.tenant, event.task_ref))
    return str(event.originator_id)


def prefetch(conn: Connection, events: list[Any]) -> None:
    """The state of every task the batch touches, in a few queries rather than one per task."""
    handled = tuple(cls for cls in handlers if cls is not Task.Created)
    created = {str(event.originator_id) for event in events if isinstance(event, Task.Created)}  # new this batch
    owners = (_owner(event) for event in events if isinstance(event, handled))
    writes.preload(conn, memory_tasks, [owner for owner in owners if owner not in created])


def _created(conn: Connection, event: Task.Created, position: int) -> None:
    aggregate_id = str(event.originator_id)
    at = format_time(event.timestamp)
    state = {
        "task_id": event.ref, "title": event.title, "description": event.description, "task_type": event.task_type,
        "status": event.status, "created_at": at, "updated_at": at, "expires_at": format_time(event.expires_at),
        "contact": event.contact, "primary_conversation_id": event.context.get("conversation_id"),
        "context": event.context, "done": [], "actions": 0, "notes": None, "waiting_on": {}, "expired_loops": [],
        "wakeups": {}, "inbox": {"count": 0, "latest": None}, "workflows": {"outputs": {}, "oldest_inline": None},
        "stalled_since": None, "escalation": None, "outcome": None, "turns": 0, "outreach": None,
        "log": {"lines": 0, "start": 1, "summaries": []},
    }
    append_line(conn, aggregate_id, state, event)
    writes.insert(conn, memory_tasks, {
        "aggregate_id": aggregate_id, "tenant": event.tenant, "task_id": event.ref, "archived_at": None, "state": state,
    })


def _moved(state: dict[str, Any], event: Any) -> None:
    if hasattr(event, "status"):
        state["status"] = str(event.status)
    state["stalled_since"] = None


def _action(conn: Connection, aggregate_id: str, state: dict[str, Any], event: Task.ActionRecorded) -> None:
    state["actions"] += 1
    state["done"] = [*state["done"], {
        "at": format_time(event.timestamp), "action": event.action, "summary": event.summary, "by": event.performed_by,
    }][-DONE_SHOWN:]
    _moved(state, event)


def _loop_registered(conn: Connection, aggregate_id: str, state: dict[str, Any], event: OpenLoop.Registered) -> None:
    state["waiting_on"][event.ref] = {
        "description": event.description, "channel": event.channel, "deadline": format_time(event.deadline),
        "if_unresolved": event.if_unresolved, "origin": event.origin,
    }


def _loop_closed(conn: Connection, aggregate_id: str, state: dict[str, Any], event: Task.LoopClosed) -> None:
    loop = state["waiting_on"].pop(event.loop_ref, None)
    if event.resolved_by == "expired" and loop is not None:
        state["expired_loops"] = [*state["expired_loops"], {
            "loop_id": event.loop_ref, "description": loop["description"], "deadline": loop["deadline"],
            "expired_at": format_time(event.timestamp),
        }][-EXPIRED_SHOWN:]


def _signal(conn: Connection, aggregate_id: str, state: dict[str, Any], event: Task.SignalReceived) -> None:
    for loop_ref in event.resolved_loops:
        state["waiting_on"].pop(loop_ref, None)
    state["inbox"]["count"] += 1
    number = state["inbox"]["count"]
    path = f"inbox/{number:04d}_{_safe(event.signal_ref)}.json"
    state["inbox"]["latest"] = {"path": path, "type": event.signal_type, "at": format_time(event.timestamp)}
    writes.insert(conn, memory_files, {
        "aggregate_id": aggregate_id, "path": path, "kind": "inbox", "at": format_time(event.timestamp),
        "content": json.dumps({
            "signal_id": event.signal_ref, "type": event.signal_type, "received_at": format_time(event.timestamp),
            "resolved_loops": event.resolved_loops, "data": event.data,
        }, indent=2, sort_keys=True),
    })
    _moved(state, event)


def _noted(conn: Connection, aggregate_id: str, state: dict[str, Any], event: Task.ProgressNoted) -> None:
    state["notes"] = {"at": format_time(event.timestamp), "text": event.notes}
    _moved(state, event)


def _status(outcome_field: str | None = None, status: str | None = None, archive: bool = False):
    def change(conn: Connection, aggregate_id: str, state: dict[str, Any], event: Any) -> dict[str, Any] | None:
        _moved(state, event)
        if status:
            state["status"] = status
        if isinstance(event, Task.Escalated):
            state["escalation"] = event.reason
        if isinstance(event, (Task.GuidanceGiven, Task.OwnerAnswered)):
            state["escalation"] = None
        if outcome_field:
            state["outcome"] = getattr(event, outcome_field)
        return {"archived_at": format_time(event.timestamp)} if archive else None

    return change


def _reviewed(conn: Connection, aggregate_id: str, state: dict[str, Any], event: Task.Reviewed) -> dict[str, Any] | None:
    _moved(state, event)
    if event.status == "cancelled":
        state["outcome"] = event.reason
        return {"archived_at": format_time(event.timestamp)}
    return None


def _wakeup_scheduled(conn: Connection, aggregate_id: str, state: dict[str, Any], event: Task.WakeupScheduled) -> None:
    state["wakeups"][event.wake_ref] = {"at": format_time(event.at), "loop_id": event.loop_ref, "reason": event.reason}


def _woken(conn: Connection, aggregate_id: str, state: dict[str, Any], event: Task.WokenUp) -> None:
    state["wakeups"].pop(event.wake_ref, None)
    if event.cause == "escalation":  # as in Task.WokenUp: a nudge is not activity
        state["status"] = str(event.status)
    else:
        _moved(state, event)


def _stalled(conn: Connection, aggregate_id: str, state: dict[str, Any], event: Task.StallFlagged) -> None:
    state["stalled_since"] = format_time(event.timestamp)


def _only_logged(conn: Connection, aggregate_id: str, state: dict[str, Any], event: Any) -> None:
    return None


def _planned(conn: Connection, aggregate_id: str, state: dict[str, Any], event: Task.OutreachPlanned) -> None:
    state["outreach"] = {
        "cadence": event.cadence, "touches": planned_touches(event.budget_messages, event.intervals), "touch": 0,
        "messages": event.budget_messages, "messages_used": 0, "ends_at": format_time(event.ends_at), "outcome": None,
    }


def _touch_sent(conn: Connection, aggregate_id: str, state: dict[str, Any], event: Task.TouchSent) -> None:
    state["outreach"]["touch"] = event.touch
    state["outreach"]["messages_used"] = event.messages_used


def _outcome_set(conn: Connection, aggregate_id: str, state: dict[str, Any], event: Task.OutcomeSet) -> None:
    state["outreach"]["outcome"] = {"code": event.code, "kind": event.kind, "provisional": event.provisional}


def _outcome_revised(conn: Connection, aggregate_id: str, state: dict[str, Any],
                     event: OutcomeRevision | Task.OutcomeOverridden) -> None:
    state["outreach"]["outcome"] = {"code": event.code, "kind": event.kind, "provisional": False}


def _overridden(conn: Connection, aggregate_id: str, state: dict[str, Any], event: Task.OutcomeOverridden) -> None:
    """The owner's outcome (`domain/task_progress.py`): a task Loopline works shows it as any revised outcome."""
    if state["outreach"] is not None:
        _outcome_revised(conn, aggregate_id, state, event)
    else:
        state["outcome"] = f"{event.code} (the owner's: {event.reason})"


def _reopened(conn: Connection, aggregate_id: str, state: dict[str, Any], event: Task.Reopened) -> dict[str, Any]:
    """Back to work: no outcome, its files out of the archive."""
    _moved(state, event)
    state["outcome"], state["expires_at"] = None, format_time(event.expires_at)
    if state["outreach"] is not None:
        state["outreach"] = {**state["outreach"], "outcome": None, "ends_at": format_time(event.expires_at)}
    return {"archived_at": None}


def _context_merged(conn: Connection, aggregate_id: str, state: dict[str, Any], event: Task.ContextMerged) -> None:
    state["context"] = {**state["context"], **event.context}


def _safe(ref: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in ref)[:120]


handlers = {
    Task.Created: _created,
    Task.ActionRecorded: _handle(_action),
    OpenLoop.Registered: _handle(_loop_registered),
    Task.LoopClosed: _handle(_loop_closed),
    Task.SignalReceived: _handle(_signal),
    Task.ReplyNoted: _handle(_only_logged),  # its turn in the conversation; the inbox file is the answering task's
    Task.ProgressNoted: _handle(_noted),
    Task.UserNotified: _handle(_only_logged),
    Task.Reviewed: _handle(_reviewed),
    Task.GuidanceGiven: _handle(_status()),
    Task.OwnerAnswered: _handle(_status()),
    Task.DraftHeldBack: _handle(_only_logged),
    Task.FirstDraftEdited: _handle(_only_logged),
    Task.Escalated: _handle(_status(status="escalated")),
    Task.Completed: _handle(_status("summary", "completed", archive=True)),
    Task.Cancelled: _handle(_status("reason", "cancelled", archive=True)),
    Task.Expired: _handle(_status("reason", "expired", archive=True)),
    Task.WaitStarted: _handle(_status()),
    Task.WaitEnded: _handle(_status()),
    Task.WorkflowOutputRecorded: _handle(store_output),
    Task.WakeupScheduled: _handle(_wakeup_scheduled),
    Task.WokenUp: _handle(_woken),
    Task.StallFlagged: _handle(_stalled),
    Task.OutreachPlanned: _handle(_planned),
    Task.ContextMerged: _handle(_context_merged),
    Task.TouchSent: _handle(_touch_sent),
    Task.OutcomeSet: _handle(_outcome_set),
    Task.OutcomeSignalReceived: _handle(_only_logged),
    Task.AttributedLate: _handle(_outcome_revised),
    Task.OutcomeDowngraded: _handle(_outcome_revised),
    Task.OutcomeUndone: _handle(_outcome_revised),
    Task.OutcomeOverridden: _handle(_overridden),
    Task.Reopened: _handle(_reopened),
    Task.GoalProgressed: _handle(_only_logged),
    Task.Evaluated: _handle(_only_logged),
    Task.OutcomeRated: _handle(_only_logged),
    Task.WentDormant: _handle(_status()),
    Task.DecisionRequested: _handle(_only_logged),
    Task.DecisionRecorded: _handle(_only_logged),
    Task.DecisionFailed: _handle(_only_logged),
    Task.DecisionHeld: _handle(_only_logged),
    Task.SendDeferred: _handle(_only_logged),
    Task.SendReturned: _handle(_only_logged),
    Task.NextTouchScheduled: _handle(_only_logged),
    Task.OutOfOfficeReceived: _handle(_only_logged),
    Task.SubtaskLinked: _handle(_only_logged),
    Task.SubtaskHeld: _handle(_status()),
    Task.SubtaskAdded: _handle(_only_logged),
    Task.SubtaskMoved: _handle(_only_logged),
    Task.SubtasksDerived: _handle(_status()),
}
