"""Command handlers: load the aggregates a command names, call them, leave the save to the unit of work."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

from loopline.domain import ids
from loopline.domain.expectations import EXPECTATIONS, expected_watch
from loopline.domain.open_loop import OpenLoop
from loopline.domain.status import TaskStatus
from loopline.domain.task import Task
from loopline.domain.task_types import task_type
from loopline.domain.timeutil import parse_time
from loopline.processors.application import UnitOfWork
from loopline.processors.loops import (
    UnknownLoop,
    close_loop,
    close_task_loops,
    load_task,
    proactive_run,
    register_loop,
    schedule_run,
    schedule_stall_check,
    set_timer,
)
from loopline.processors.messages import Message
from loopline.processors.wakeups import record_workflow_output, schedule_wakeup, wake_on_condition

Handler = Callable[[UnitOfWork, Message], str]


def create_task(uow: UnitOfWork, msg: Message) -> str:
    data, tenant = msg.data, msg.tenant
    task_ref = data["task_id"]
    task_uuid = ids.task_id(tenant, task_ref)
    if uow.get(task_uuid, Task) is not None:
        return f"task {task_ref} already exists; nothing changed"
    kind = task_type(data.get("task_type") or "ad_hoc")
    confidence = data.get("confidence")
    needs_review = confidence is not None and confidence < kind.auto_threshold
    expires_in_days = data.get("expires_in_days", kind.expires_in_days)
    expires_at = msg.at + timedelta(days=expires_in_days) if expires_in_days else None
    task = uow.add(
        Task.create(
            id=task_uuid, now=msg.at, tenant=tenant, ref=task_ref, title=data["title"],
            description=data.get("description") or "", task_type=kind.name,
            status=TaskStatus.PENDING_REVIEW if needs_review else TaskStatus.EXECUTING,
            expires_at=expires_at, priority=data.get("priority"), contact=data.get("contact"),
            confidence=confidence, context=data.get("context") or {},
            reason=(
                f"confidence {confidence} below {kind.name} auto threshold {kind.auto_threshold}: owner review"
                if needs_review
                else "auto-approved: no confidence gate tripped"
            ),
        )
    )
    if expires_at is not None:
        set_timer(uow, kind="task_expiry", target_id=task.id, due=expires_at, now=msg.at)
    schedule_stall_check(uow, task, msg.at + timedelta(days=kind.stalled_after_days), msg.at)
    proactive_run(uow, tenant, msg.at)
    return f"created task {task_ref} ({task.status})"


def record_action(uow: UnitOfWork, msg: Message) -> str:
    data = msg.data
    task = load_task(uow, msg.tenant, data["task_id"])
    action = data["action"]
    details = {k: v for k, v in data.items() if k not in ("task_id", "action", "summary", "expect")}
    task.record_action(
        action=action, details=details, summary=data.get("summary") or action, performed_by="agent", now=msg.at
    )
    expectation = EXPECTATIONS.get(action)
    if expectation is None or data.get("expect") is False:
        return f"recorded {action} on {task.ref}; no expectation registered"
    loop_ref = data.get("loop_id") or f"{task.ref}/{action}/{task.actions_count}"
    deadline = parse_time(data["deadline"]) if data.get("deadline") else msg.at + expectation.default_deadline
    register_loop(
        uow, task, loop_ref=loop_ref, channel=expectation.channel, watch=expected_watch(action, details),
        deadline=deadline, if_unresolved=data.get("if_unresolved") or expectation.if_unresolved,
        description=f"{expectation.expects} ({details.get('to') or action})", origin="auto", now=msg.at,
        subject=details.get("subject"), message_id=details.get("message_id"),
    )
    return f"recorded {action} on {task.ref}; expecting '{expectation.expects}' by {deadline.isoformat()}"


def register_explicit_loop(uow: UnitOfWork, msg: Message) -> str:
    data = msg.data
    task = load_task(uow, msg.tenant, data["task_id"])
    register_loop(
        uow, task, loop_ref=data["loop_id"], channel=data["channel"], watch=dict(data["watch"]),
        deadline=parse_time(data["deadline"]), if_unresolved=data["if_unresolved"],
        description=data.get("description") or "", origin="explicit", now=msg.at,
    )
    return f"registered loop {data['loop_id']} on {task.ref}"


def resolve_loop(uow: UnitOfWork, msg: Message) -> str:
    loop_ref = msg.data["loop_id"]
    loop = uow.get(ids.loop_id(msg.tenant, loop_ref), OpenLoop)
    if loop is None:
        raise UnknownLoop(f"tenant {msg.tenant!r} has no loop {loop_ref!r}")
    task = load_task(uow, msg.tenant, loop.task_ref)
    reason = msg.data.get("reason") or "resolved by hand"
    close_loop(uow, loop, task, resolved_by="manual", reason=reason, now=msg.at)
    wake_on_condition(task, loop_ref, cause="manual", reason=f"condition resolved by hand: {reason}", now=msg.at)
    return f"resolved loop {loop_ref} by hand"


def update_task(uow: UnitOfWork, msg: Message) -> str:
    task = load_task(uow, msg.tenant, msg.data["task_id"])
    task.note_progress(notes=msg.data.get("notes") or "", status=msg.data.get("status"), now=msg.at)
    return f"noted progress on {task.ref} ({task.status})"


def complete_task(uow: UnitOfWork, msg: Message) -> str:
    task = load_task(uow, msg.tenant, msg.data["task_id"])
    summary = msg.data["summary"]
    task.check_open()
    close_task_loops(uow, task, resolved_by="task_completed", reason=f"task completed: {summary}", now=msg.at)
    task.complete(summary=summary, now=msg.at)
    conversation = task.context.get("conversation_id")
    back = f" (back to conversation {conversation})" if conversation else ""
    task.notify_user(kind="task_completed", message=f"Done: {task.title}. {summary}{back}", now=msg.at)
    return f"completed {task.ref}"


def cancel_task(uow: UnitOfWork, msg: Message) -> str:
    task = load_task(uow, msg.tenant, msg.data["task_id"])
    reason = msg.data["reason"]
    task.check_open()
    close_task_loops(uow, task, resolved_by="cancelled", reason=f"task cancelled: {reason}", now=msg.at)
    task.cancel(reason=reason, now=msg.at)
    return f"cancelled {task.ref}"


def approve_task(uow: UnitOfWork, msg: Message) -> str:
    task = load_task(uow, msg.tenant, msg.data["task_id"])
    task.approve(reason=msg.data.get("reason") or "approved by owner", now=msg.at)
    return f"approved {task.ref}"


def reject_task(uow: UnitOfWork, msg: Message) -> str:
    task = load_task(uow, msg.tenant, msg.data["task_id"])
    reason = msg.data.get("reason") or "rejected by owner"
    close_task_loops(uow, task, resolved_by="cancelled", reason=f"task rejected: {reason}", now=msg.at)
    task.reject(reason=reason, rejection_type=msg.data.get("rejection_type"), now=msg.at)
    return f"rejected {task.ref}"


def give_guidance(uow: UnitOfWork, msg: Message) -> str:
    task = load_task(uow, msg.tenant, msg.data["task_id"])
    task.give_guidance(text=msg.data["text"], now=msg.at)
    return f"guidance given; {task.ref} resumed"


def schedule_proactive_run(uow: UnitOfWork, msg: Message) -> str:
    run = proactive_run(uow, msg.tenant, msg.at)
    schedule_run(uow, run, requested_at=parse_time(msg.data["at"]), reason=msg.data["reason"], now=msg.at)
    return f"next proactive run at {run.next_run_at.isoformat()}"


COMMANDS: dict[str, Handler] = {
    "task.create": create_task,
    "action.record": record_action,
    "loop.register": register_explicit_loop,
    "loop.resolve": resolve_loop,
    "task.update": update_task,
    "task.complete": complete_task,
    "task.cancel": cancel_task,
    "task.approve": approve_task,
    "task.reject": reject_task,
    "task.guidance": give_guidance,
    "run.schedule": schedule_proactive_run,
    "task.wake": schedule_wakeup,
    "workflow.output": record_workflow_output,
}
