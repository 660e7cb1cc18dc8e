"""Command handlers: load the aggregates a command names, call them, leave the save to the unit of work."""

from __future__ import annotations

from datetime import datetime, timedelta

from loopline.domain import ids
from loopline.domain.contact_index import ContactIndex
from loopline.domain.expectations import expectation_for
from loopline.domain.gate import initial_status, is_email
from loopline.domain.open_loop import OpenLoop
from loopline.domain.priority_rules import TaskFacts, rule_priority
from loopline.domain.status import TaskStatus
from loopline.domain.task import Task
from loopline.domain.task_ledger import Origin
from loopline.domain.task_provenance import Provenance
from loopline.domain.task_types import TaskType, task_type
from loopline.domain.tenant import TenantSettings
from loopline.domain.timers import TimerKind
from loopline.domain.timeutil import format_time
from loopline.domain.wording import awaited, awaited_from_watch
from loopline.processors.application import UnitOfWork
from loopline.processors.bus import Notice, Unchanged
from loopline.processors.handlers.loops_and_timers import (
    UnknownLoop,
    close_loop,
    close_task_loops,
    hand_back_actions,
    load_task,
    note_open_task,
    proactive_run,
    register_loop,
    schedule_run,
    schedule_stall_check,
    set_timer,
)
from loopline.processors.handlers.commands_types import (
    ActionRecordCommon,
    LoopRegister,
    LoopResolve,
    RunSchedule,
    TaskCancel,
    TaskComplete,
    TaskCreate,
    TaskGuidance,
    TaskReview,
    TaskUpdate,
)
from loopline.processors.messages import Message
from loopline.processors.handlers.outreach import answer_with_guidance
from loopline.processors.handlers.readiness import on_ready
from loopline.processors.handlers.signals import replies_before_creation
from loopline.processors.handlers.suppression import check_not_suppressed
from loopline.processors.handlers.task_limits import admit_task
from loopline.processors.handlers.tenants import tenant_settings
from loopline.processors.handlers.wakeups import wake_on_condition


def create_task(
    uow: UnitOfWork, msg: Message, cmd: TaskCreate, *, start: bool = True, provenance: Provenance | None = None,
) -> str:
    """`task.create`; with `start` False a task created ready is not started (`add_subtask` starts a subtask once it
    is linked to its parent, and only when nothing holds it). Loopline's own creations pass their `provenance`."""
    tenant = msg.tenant
    task_uuid = ids.task_id(tenant, cmd.task_id)
    existing = uow.get(task_uuid, Task)
    if existing is not None:
        if existing.title != cmd.title:
            return Unchanged(f"task {cmd.task_id} already exists with the title {existing.title!r}; this task.create "
                             f"(title {cmd.title!r}) changed nothing")
        return f"task {cmd.task_id} already exists; nothing changed"
    kind = task_type(cmd.task_type)
    context = dict(cmd.context or {})
    # Loopline works a task itself only when asked for a type that sends, with an address to send to;
    # without a type the outside agent acts and Loopline follows through, as before issue 11.
    acting = cmd.task_type is not None and kind.can_send and is_email(cmd.contact)
    # A gym type that sends nothing (a call to make) is deduplicated like one that sends: one open per member and
    # type (seed 002 §7.7). The assistant's follow-through types are not: two meetings with one person are two tasks.
    indexed = cmd.contact is not None and (acting or (kind.pack == "gym" and not kind.can_send))
    index = None
    if indexed:
        assert cmd.contact is not None and cmd.task_type is not None
        check_not_suppressed(uow, tenant, cmd.contact)
        index = uow.get(ids.contact_index_id(tenant, cmd.contact), ContactIndex)
        active = _open_task(uow, tenant, index.tasks.get(cmd.task_type) if index else None)
        if active is not None:
            active.merge_context(context, source_ref=cmd.task_id, now=msg.at)
            # A notice, not a plain reply: the sender's task id names no task, so its next command for it is refused.
            return Notice(f"merged into active task {active.ref}: {cmd.contact} already has an open {cmd.task_type} "
                          f"task, so task {cmd.task_id} was not created and its context was added to {active.ref}")
    if not acting and (cmd.draft is not None or cmd.to_name is not None):
        # Nothing sends for a follow-through task: the agent finds what it gave in context.json.
        context.update({"draft": {"subject": cmd.draft.subject, "body": cmd.draft.body}} if cmd.draft else {})
        context.update({"to_name": cmd.to_name} if cmd.to_name else {})
    settings = tenant_settings(uow, tenant) if acting else TenantSettings()
    origin = Origin(cmd.origin.kind, cmd.origin.id) if cmd.origin else None
    provenance = provenance or Provenance.of_command(origin, msg.ref)
    origin = origin or provenance.origin
    if acting:
        assert cmd.contact is not None
        held = admit_task(uow, tenant=tenant, task_ref=cmd.task_id, task_type=kind.name, contact=cmd.contact,
                          origin=origin, settings=settings, now=msg.at)
        if held is not None:
            return Notice(f"task {cmd.task_id} was not created: {held.reason} ({held.rule}); "
                          "send it again once the limit frees up")
    status, reason = initial_status(settings, kind, cmd.confidence, context, acting=acting,
                                    spawned_from=origin.id if origin and origin.kind == "task" else None)
    expires_in_days = cmd.expires_in_days if cmd.expires_in_days is not None else kind.expires_in_days
    expires_at = msg.at + timedelta(days=expires_in_days) if expires_in_days else None
    task = uow.add(
        Task.create(
            id=task_uuid, now=msg.at, tenant=tenant, ref=cmd.task_id, title=cmd.title,
            description=cmd.description or "", task_type=kind.name, status=status, expires_at=expires_at,
            # A task Loopline works runs in priority order: absent, its type's (seed 002 §6.1), unless a priority rule
            # of the tenant's sets it just below (seed 004 §3).
            priority=cmd.priority or (kind.priority if acting else None), contact=cmd.contact,
            confidence=cmd.confidence, context=context, reason=reason, trigger_type=provenance.trigger_type,
            trigger_event_id=provenance.trigger_event_id, created_by=provenance.created_by,
        )
    )
    if cmd.priority is None:
        _rule_priority(uow, task, cmd, now=msg.at)
    if acting:
        _plan_outreach(task, kind, cmd, ends_at=expires_at, now=msg.at)
    if indexed:
        if index is None:
            index = uow.add(ContactIndex.create(id=ids.contact_index_id(tenant, cmd.contact), tenant=tenant,
                                                contact=cmd.contact, now=msg.at))
        index.link(cmd.task_type, task.ref, now=msg.at)
    if expires_at is not None:
        set_timer(uow, kind=TimerKind.TASK_EXPIRY, target_id=task.id, due=expires_at, now=msg.at)
    schedule_stall_check(uow, task, msg.at + timedelta(days=kind.stalled_after_days), msg.at)
    proactive_run(uow, tenant, msg.at)
    note_open_task(uow, tenant, task.ref, msg.at)
    if task.status in (TaskStatus.READY, TaskStatus.EXECUTING):  # a task Loopline does not work starts executing
        if start:
            on_ready(uow, task, msg.at)
    elif task.status is TaskStatus.PENDING_REVIEW:
        task.notify_user(kind="review", message=f"'{task.title}' waits for your review: {reason}.", now=msg.at,
                         draft=task.outreach["draft"] if task.outreach else context.get("draft"))
    if acting:
        replies_before_creation(uow, task)
    return f"created task {cmd.task_id} ({task.status})"


def _rule_priority(uow: UnitOfWork, task: Task, cmd: TaskCreate, *, now: datetime) -> None:
    """The tenant's priority rules set the new task's priority where one matches (seed 004 §3)."""
    facts = TaskFacts(title=cmd.title, description=cmd.description or "", task_type=cmd.task_type, contact=cmd.contact,
                      urgency=cmd.urgency)
    ruling = rule_priority(tenant_settings(uow, task.tenant).priority_rules, facts)
    if ruling is not None:
        task.rule_priority(priority=ruling.priority, rule=ruling.rule, urgency=cmd.urgency, now=now)


def _open_task(uow: UnitOfWork, tenant: str, task_ref: str | None) -> Task | None:
    task = uow.get(ids.task_id(tenant, task_ref), Task) if task_ref is not None else None
    return task if task is not None and not task.is_closed else None


def _plan_outreach(task: Task, kind: TaskType, cmd: TaskCreate, *, ends_at: datetime | None, now: datetime) -> None:
    """Copies the type's budget and cadence onto the task (seed 002 §6.1), with the creator's draft."""
    cadence = kind.cadence
    task.plan_outreach(
        budget_messages=kind.budget.messages, budget_turns=kind.budget.turns, ends_at=ends_at, cadence=cadence.name,
        intervals=list(cadence.intervals), tones=list(cadence.tones), on_exhaustion=cadence.on_exhaustion,
        dormant_check_days=cadence.dormant_check_days, dormant_max_days=cadence.dormant_max_days,
        draft={"subject": cmd.draft.subject, "body": cmd.draft.body} if cmd.draft else None,
        contact_name=cmd.to_name, now=now,
    )


def record_action(uow: UnitOfWork, msg: Message, cmd: ActionRecordCommon) -> str:
    task = load_task(uow, msg.tenant, cmd.task_id)
    action, details = cmd.action, dict(cmd.details)
    expectation = None if cmd.expect is False else expectation_for(action)
    recorded = {  # the intent overrides stay on the action's record, as the agent sent them
        **details,
        **({"loop_id": cmd.loop_id} if cmd.loop_id else {}),
        **({"deadline": format_time(cmd.deadline)} if cmd.deadline else {}),
        **({"if_unresolved": str(cmd.if_unresolved)} if cmd.if_unresolved else {}),
    }
    task.record_action(
        action=action, details=recorded, summary=cmd.summary or action, performed_by="agent", now=msg.at,
        awaits=expectation is not None,
    )
    if expectation is None:
        return f"recorded {action} on {task.ref}; no expectation registered"
    loop_ref = cmd.loop_id or f"{task.ref}/{action}/{task.actions_count}"
    deadline = cmd.deadline or msg.at + expectation.default_deadline
    register_loop(
        uow, task, loop_ref=loop_ref, channel=expectation.channel, watch=expectation.watch(details),
        deadline=deadline, if_unresolved=str(cmd.if_unresolved or expectation.if_unresolved),
        description=awaited(action, details), origin="auto", now=msg.at,
        subject=details.get("subject"), message_id=details.get("message_id"),
        action=action, contact=details.get("to") or details.get("attendee_email"), contact_name=details.get("to_name"),
    )
    return f"recorded {action} on {task.ref}; expecting '{expectation.expects}' by {deadline.isoformat()}"


def register_explicit_loop(uow: UnitOfWork, msg: Message, cmd: LoopRegister) -> str:
    task = load_task(uow, msg.tenant, cmd.task_id)
    register_loop(
        uow, task, loop_ref=cmd.loop_id, channel=cmd.channel, watch=dict(cmd.watch),
        deadline=cmd.deadline, if_unresolved=str(cmd.if_unresolved),
        description=cmd.description or awaited_from_watch(cmd.channel, cmd.watch), origin="explicit", now=msg.at,
        contact=cmd.watch.get("sender") if cmd.channel == "email" else None,
    )
    return f"registered loop {cmd.loop_id} on {task.ref}"


def resolve_loop(uow: UnitOfWork, msg: Message, cmd: LoopResolve) -> str:
    loop = uow.get(ids.loop_id(msg.tenant, cmd.loop_id), OpenLoop)
    if loop is None:
        raise UnknownLoop(f"tenant {msg.tenant!r} has no loop {cmd.loop_id!r}")
    task = load_task(uow, msg.tenant, loop.task_ref)
    reason = cmd.reason or "resolved by hand"
    close_loop(uow, loop, task, resolved_by="manual", reason=reason, now=msg.at)
    wake_on_condition(task, cmd.loop_id, cause="manual", reason=f"condition resolved by hand: {reason}", now=msg.at)
    task.end_wait(reason=f"the wait for {loop.awaited()} was resolved by hand ({reason}); nothing else to wait for",
                  now=msg.at)
    return f"resolved loop {cmd.loop_id} by hand"


def update_task(uow: UnitOfWork, msg: Message, cmd: TaskUpdate) -> str:
    task = load_task(uow, msg.tenant, cmd.task_id)
    task.note_progress(notes=cmd.notes or "", status=cmd.status, now=msg.at)
    return f"noted progress on {task.ref} ({task.status})"


def _closing(uow: UnitOfWork, msg: Message, task_ref: str, *, resolved_by: str, reason: str) -> Task:
    """An open task about to be completed or cancelled, its loops closed first with the reason."""
    task = load_task(uow, msg.tenant, task_ref)
    task.check_open()
    close_task_loops(uow, task, resolved_by=resolved_by, reason=reason, now=msg.at)
    return task


def complete_task(uow: UnitOfWork, msg: Message, cmd: TaskComplete) -> str:
    task = _closing(uow, msg, cmd.task_id, resolved_by="task_completed", reason=f"task completed: {cmd.summary}")
    task.complete(summary=cmd.summary, now=msg.at)
    conversation = task.context.get("conversation_id")
    back = f" (back to conversation {conversation})" if conversation else ""
    task.notify_user(kind="task_completed", message=f"Done: {task.title}. {cmd.summary}{back}", now=msg.at)
    return f"completed {task.ref}"


def cancel_task(uow: UnitOfWork, msg: Message, cmd: TaskCancel) -> str:
    task = _closing(uow, msg, cmd.task_id, resolved_by="cancelled", reason=f"task cancelled: {cmd.reason}")
    task.cancel(reason=cmd.reason, now=msg.at)
    return f"cancelled {task.ref}"


def reject_task(uow: UnitOfWork, msg: Message, cmd: TaskReview) -> str:
    task = load_task(uow, msg.tenant, cmd.task_id)
    reason = cmd.reason or "rejected by owner"
    close_task_loops(uow, task, resolved_by="cancelled", reason=f"task rejected: {reason}", now=msg.at)
    task.reject(reason=reason, rejection_type=cmd.rejection_type, now=msg.at)
    return f"rejected {task.ref}"


def give_guidance(uow: UnitOfWork, msg: Message, cmd: TaskGuidance) -> str:
    task = load_task(uow, msg.tenant, cmd.task_id)
    task.give_guidance(text=cmd.text, now=msg.at)
    hand_back_actions(uow, task, msg.at)
    if task.is_acting and answer_with_guidance(uow, task, now=msg.at):
        return f"guidance given; {task.ref} drafts its answer to {task.contact} with it"
    if task.is_acting:  # Loopline works it again from the next tick, with the guidance in the conversation
        set_timer(uow, kind=TimerKind.TASK_STEP, target_id=task.id, due=msg.at, now=msg.at)
    return f"guidance given; {task.ref} resumed"


def schedule_proactive_run(uow: UnitOfWork, msg: Message, cmd: RunSchedule) -> str:
    run = proactive_run(uow, msg.tenant, msg.at)
    schedule_run(uow, run, requested_at=cmd.at, reason=cmd.reason, now=msg.at)
    return f"next proactive run at {run.next_run_at.isoformat()}"
