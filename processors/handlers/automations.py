"""Automation tasks (seed 002 §31.5): a task of an `automation` type carries out the one action its context names
(`{"action": "call_webhook", "params": {...}}`) through the action executor as soon as it starts, with no contact
and no conversation. The action taken (its channel's outbox retries it) closes the task `executed`; one the owner
must approve first waits for `action.approve` (or `action.reject`: `not_executed`); one that cannot run goes to the
owner."""

from __future__ import annotations

from datetime import datetime

from loopline.domain import ids
from loopline.domain.action_log import DROPPED, TAKEN, ActionLog
from loopline.domain.actions import InvalidAction
from loopline.domain.outreach import Close, Escalate
from loopline.domain.status import TaskStatus
from loopline.domain.task import Task
from loopline.domain.task_types import task_type
from loopline.processors.application import UnitOfWork
from loopline.processors.handlers.actions import approve_action, ask_for_action, reject_action
from loopline.processors.handlers.commands_actions import ActionDecision
from loopline.processors.handlers.escalation import escalate
from loopline.processors.handlers.loops_and_timers import load_task
from loopline.processors.handlers.outreach import close
from loopline.processors.messages import Message

ENDINGS = {TAKEN: ("executed", "its {action} was carried out"), DROPPED: ("not_executed", "its {action} was dropped")}
"""What the state of the task's own action ends it as (`domain/action_log.py`): its outcome and why."""


def is_automation(task: Task) -> bool:
    return task_type(task.task_type).category == "automation" and not task.is_acting


def _key(task: Task) -> str:
    return f"{task.ref}/automation"


def run_automation(uow: UnitOfWork, task: Task, now: datetime) -> str | None:
    action, params = task.context.get("action"), task.context.get("params") or {}
    try:
        ask_for_action(uow, task, action=str(action), params=params if isinstance(params, dict) else {"params": params},
                       key=_key(task), requested_by="loopline", now=now)
    except InvalidAction as refused:  # refused before anything was written: the owner decides what to run
        return escalate(uow, task, Escalate(f"the automation cannot run: {refused}; give its context an action and "
                                            "params Loopline carries out (see Actions beyond email)", "no_automation"),
                        now)
    return _end_when_settled(uow, task, now)


def _end_when_settled(uow: UnitOfWork, task: Task, now: datetime) -> str | None:
    log = uow.get(ids.action_log_id(task.tenant, task.ref), ActionLog)
    own = log.actions.get(_key(task)) if log is not None else None
    if task.is_closed or own is None or own["state"] not in ENDINGS:
        return None
    outcome, why = ENDINGS[own["state"]]
    return close(uow, task, Close(outcome, TaskStatus.COMPLETED, why.format(action=own["action"])), now)


def approve(uow: UnitOfWork, msg: Message, cmd: ActionDecision) -> str:
    """`action.approve` (the executor's `approve_action`): an automation task's own action taken ends the task."""
    said = approve_action(uow, msg, cmd)
    task = load_task(uow, msg.tenant, cmd.task_id)
    ended = _end_when_settled(uow, task, msg.at) if is_automation(task) else None
    return f"{said}; {ended}" if ended else said


def reject(uow: UnitOfWork, msg: Message, cmd: ActionDecision) -> str:
    """`action.reject` (the executor's `reject_action`): an automation task's own action dropped ends the task."""
    said = reject_action(uow, msg, cmd)
    task = load_task(uow, msg.tenant, cmd.task_id)
    ended = _end_when_settled(uow, task, msg.at) if is_automation(task) else None
    return f"{said}; {ended}" if ended else said
