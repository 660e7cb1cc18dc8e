"""What each synthesis tool call does (processors/model/synthesis_tools.py), answered as its tool_result.

Every call but `schedule_next_run` is an action of the run (`ProactiveRun.take_action`): past the run's budget of 3,
the refusal text is the call's result (is_error), so the model is told why and to schedule its next run. A call whose
input is unusable (a task that does not exist, a missing field) is answered with what is wrong and spends nothing; so
is one the domain refuses before changing anything (a paused routine to trigger, a task in review to escalate), with
the domain's reason, while the turn's other calls and its answer stand.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from loopline.domain import ids
from loopline.domain.errors import DomainError
from loopline.domain.outreach import Escalate
from loopline.domain.proactive_run import ProactiveRun
from loopline.domain.proposal_rules import requires_approval
from loopline.domain.task import Task
from loopline.domain.task_provenance import Provenance
from loopline.domain.routine import Routine
from loopline.processors.application import UnitOfWork
from loopline.processors.handlers.commands import cancel_task, create_task
from loopline.processors.handlers.commands_types import TaskCancel, TaskCreate
from loopline.processors.handlers.escalation import escalate
from loopline.processors.handlers.owner_notices import notify_owner
from loopline.processors.handlers.proposals import offer
from loopline.processors.handlers.routines import RoutineControl, run_routine_now
from loopline.processors.messages import Message

BRAIN = "loopline"


@dataclass(frozen=True)
class ToolResult:
    text: str
    is_error: bool = False

    def block(self, tool_use_id: str) -> dict[str, Any]:
        return {"type": "tool_result", "tool_use_id": tool_use_id, "content": self.text, "is_error": self.is_error}


class Unusable(Exception):
    """A tool call's input names nothing Loopline has, or lacks a field: answered, nothing spent."""


def act(uow: UnitOfWork, run: ProactiveRun, call: dict[str, Any], now: datetime) -> ToolResult:
    """One tool call of the model's turn, carried out or refused; its result goes back to the model."""
    name, args = call.get("name", ""), dict(call.get("input") or {})
    if name == "schedule_next_run":
        return _schedule_next_run(run, args, now)
    action = ACTIONS.get(name)
    if action is None:
        return ToolResult(f"unknown tool {name!r}; the tools are {', '.join([*ACTIONS, 'schedule_next_run'])}", True)
    try:
        prepared = action(uow, run, args, now)
    except Unusable as error:
        return ToolResult(f"{name}: {error}", True)
    refused = run.budget_refusal(name)
    if refused is None:
        before = uow.unsaved_events()
        try:
            done = prepared()
        except DomainError as error:
            if uow.unsaved_events() != before:
                raise  # refused half-way through: only undoing the whole turn undoes what it had changed
            refused = f"{name} was refused: {error}"
        else:
            run.take_action(tool=name, detail=_detail(name, args), now=now)
            return ToolResult(done)
    run.refuse_action(tool=name, reason=refused, now=now)
    return ToolResult(refused, True)


Prepared = Callable[[], str]


def _need(args: dict[str, Any], field: str) -> str:
    value = args.get(field)
    if not isinstance(value, str) or not value.strip():
        raise Unusable(f"{field} is missing: give it as text")
    return value.strip()


def _task(uow: UnitOfWork, run: ProactiveRun, args: dict[str, Any]) -> Task:
    task = uow.get(ids.task_id(run.tenant, _need(args, "task_ref")), Task)
    if task is None or task.is_closed:
        raise Unusable(f"task_ref {args['task_ref']!r} is no open task of {run.tenant}")
    return task


def _create_task(uow: UnitOfWork, run: ProactiveRun, args: dict[str, Any], now: datetime) -> Prepared:
    task_id, title = _need(args, "task_id"), _need(args, "title")
    priority = args.get("priority") if args.get("priority") in ("low", "medium", "high") else None
    description = str(args.get("description") or "")

    def create() -> str:
        if requires_approval("task", priority):
            proposal = offer(uow, tenant=run.tenant, proposal_ref=f"{run.run_ref}-{task_id}", title=title,
                             summary=description or title, theme="synthesis", impact=priority or "medium",
                             source="synthesis", now=now)
            return f"proposed {proposal.proposal_ref} for the owner's approval ({priority or 'medium'} priority)"
        msg = Message(kind="timer", ref=run.run_ref, type="task.create", tenant=run.tenant, at=now)
        cmd = TaskCreate(task_id=task_id, title=title, description=description or None, priority=priority)
        return create_task(uow, msg, cmd, provenance=Provenance("synthesis", run.run_ref, BRAIN))
    return create


def _escalate_task(uow: UnitOfWork, run: ProactiveRun, args: dict[str, Any], now: datetime) -> Prepared:
    task, reason = _task(uow, run, args), _need(args, "reason")
    return lambda: escalate(uow, task, Escalate(f"the proactive run: {reason}", "synthesis"), now)


def _notify(uow: UnitOfWork, run: ProactiveRun, args: dict[str, Any], now: datetime) -> Prepared:
    text = _need(args, "text")
    return lambda: f"the notice was {notify_owner(uow, run.tenant, text, now=now)}"


def _trigger_workflow(uow: UnitOfWork, run: ProactiveRun, args: dict[str, Any], now: datetime) -> Prepared:
    routine_id = _need(args, "routine_id")
    if uow.get(ids.routine_id(run.tenant, routine_id), Routine) is None:
        raise Unusable(f"routine_id {routine_id!r} is no routine of {run.tenant}")
    msg = Message(kind="timer", ref=run.run_ref, type="routine.run_now", tenant=run.tenant, at=now)
    cmd = RoutineControl(routine_id=routine_id, reason=str(args.get("reason") or "the proactive run asked for it"))
    return lambda: run_routine_now(uow, msg, cmd)


def _decide_escalation(uow: UnitOfWork, run: ProactiveRun, args: dict[str, Any], now: datetime) -> Prepared:
    """Extend (the task gets another turn: the run's close wakes it with its escalation, as every escalation not
    cancelled), notify the owner, or cancel the task (seed 000 lifecycle 5)."""
    task, decision = _task(uow, run, args), args.get("decision")
    if not any(item["task_ref"] == task.ref for item in run.pending_escalations):
        raise Unusable(f"task_ref {task.ref!r} has no escalation waiting for this run")
    note = str(args.get("note") or "decided by the proactive run")
    if decision == "extend":
        return lambda: f"'{task.title}' gets another turn when this run closes ({note})"
    if decision == "notify":
        return lambda: f"the notice was {notify_owner(uow, run.tenant, f'{task.title}: {note}', now=now)}"
    if decision == "cancel":
        msg = Message(kind="timer", ref=run.run_ref, type="task.cancel", tenant=run.tenant, at=now)
        return lambda: cancel_task(uow, msg, TaskCancel(task_id=task.ref, reason=note))
    raise Unusable(f"decision {decision!r}: choose extend, notify or cancel")


def _schedule_next_run(run: ProactiveRun, args: dict[str, Any], now: datetime) -> ToolResult:
    try:
        hours = float(args.get("in_hours"))  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return ToolResult("in_hours is missing: give the hours until the next run as a number", True)
    run.schedule_next(requested_at=now + timedelta(hours=hours), reason=str(args.get("reason") or "asked by the model"),
                      now=now)
    return ToolResult(f"the next run is at {run.next_run_at.isoformat()}")


def _detail(name: str, args: dict[str, Any]) -> str:
    return "; ".join(f"{key}={value}" for key, value in sorted(args.items()))[:300] or name


ACTIONS: dict[str, Callable[[UnitOfWork, ProactiveRun, dict[str, Any], datetime], Prepared]] = {
    "create_task": _create_task,
    "escalate_task": _escalate_task,
    "notify": _notify,
    "trigger_workflow": _trigger_workflow,
    "send_brief": _notify,
    "decide_escalation": _decide_escalation,
}
"""Every synthesis tool that spends an action (`domain/proactive_run.py` ACTION_TOOLS), by name."""
