"""Task categories beyond one task for one contact (seed 002 §31.6, §31.7): `task.batch` creates one task per contact
and `task.recur` a template whose timer creates one task per firing. Every task they make goes through `task.create`
(passed in as `create`), so each passes every contact and tenant limit a task created alone passes."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from uuid import UUID

from loopline.domain import ids
from loopline.domain.cron import next_firing, parse_cron
from loopline.domain.errors import DomainError
from loopline.domain.recurrence import Recurrence
from loopline.domain.task import Task
from loopline.domain.timers import TimerKind
from loopline.domain.wording import count, when
from loopline.processors.application import UnitOfWork
from loopline.processors.bus import Notice, Unchanged
from loopline.processors.handlers.commands_categories import RecurrenceStop, TaskBatch, TaskRecur, instance_of
from loopline.processors.handlers.commands_types import TaskCreate
from loopline.processors.handlers.loops_and_timers import set_timer
from loopline.processors.handlers.suppression import ContactSuppressed
from loopline.processors.handlers.tenants import tenant_settings
from loopline.processors.messages import Message

Create = Callable[[UnitOfWork, Message, TaskCreate], str]
"""`processors/handlers/commands.py` `create_task`: the one way a task is made."""


def _create(uow: UnitOfWork, msg: Message, cmd: TaskCreate, create: Create) -> tuple[bool, str]:
    """Whether `task.create` made the task now, and what it answered (why not: it existed, merged, was held, or its
    contact is suppressed: refused before anything is written, so the other tasks of a batch are still made)."""
    task_uuid = ids.task_id(msg.tenant, cmd.task_id)
    existed = uow.get(task_uuid, Task) is not None
    try:
        result = create(uow, Message(kind="command", ref=cmd.task_id, type="task.create", tenant=msg.tenant, at=msg.at,
                                     command=cmd), cmd)
    except ContactSuppressed as suppressed:
        return False, str(suppressed)
    return not existed and uow.get(task_uuid, Task) is not None, result


def create_batch(uow: UnitOfWork, msg: Message, cmd: TaskBatch, *, create: Create) -> str:
    """One task per contact (seed 002 §31.7), each with the batch's id in its context; a suppressed contact gets none,
    and a task a limit holds is not created: the answer says which and why."""
    created: list[str] = []
    skipped: list[str] = []
    for index in range(len(cmd.contacts)):
        task = cmd.task(index)
        made, result = _create(uow, msg, task, create)
        (created if made else skipped).append(task.task_id if made else f"{task.task_id}: {result}")
    summary = f"batch {cmd.batch_id}: created {count(len(created), 'task')} of {len(cmd.contacts)}"
    if skipped:
        return Notice(f"{summary}; not created: {'; '.join(skipped)}")
    return summary


def schedule_recurrence(uow: UnitOfWork, msg: Message, cmd: TaskRecur) -> str:
    """Keeps the template and files the timer of its first firing, in the tenant's time zone."""
    recurrence_id = ids.recurrence_id(msg.tenant, cmd.template_id)
    existing, template = uow.get(recurrence_id, Recurrence), cmd.template.model_dump(mode="json")
    if existing is not None:
        if (existing.cron, existing.template, existing.max_instances) != (cmd.cron, template, cmd.max_instances):
            return Unchanged(f"template {cmd.template_id} already exists with cron {existing.cron!r} and "
                             f"{count(existing.max_instances, 'instance')}; this task.recur changed nothing (give a new "
                             "template_id for another template)")
        return f"template {cmd.template_id} already exists; nothing changed"
    zone = tenant_settings(uow, msg.tenant).timezone
    first = next_firing(parse_cron(cmd.cron), msg.at, zone)
    recurrence = uow.add(Recurrence.start(
        id=recurrence_id, now=msg.at, tenant=msg.tenant, ref=cmd.template_id, cron=cmd.cron, timezone=zone,
        max_instances=cmd.max_instances, template=template, next_at=first,
    ))
    set_timer(uow, kind=TimerKind.RECURRENCE, target_id=recurrence.id, due=first, now=msg.at)
    return (f"template {cmd.template_id}: up to {count(cmd.max_instances, 'instance')}, the first "
            f"{when(first)} ({cmd.cron}, {zone})")


class UnknownTemplate(DomainError):
    """A recurring template the tenant does not have."""


def stop_recurrence(uow: UnitOfWork, msg: Message, cmd: RecurrenceStop) -> str:
    recurrence = uow.get(ids.recurrence_id(msg.tenant, cmd.template_id), Recurrence)
    if recurrence is None:
        raise UnknownTemplate(f"template_id: tenant {msg.tenant!r} has no recurring template {cmd.template_id!r}")
    if not recurrence.stop(reason=f"stopped: {cmd.reason}", now=msg.at):
        return f"template {cmd.template_id} had ended already; nothing changed"
    return f"template {cmd.template_id} stopped after {count(recurrence.instances, 'instance')}"


def fire_recurrence(uow: UnitOfWork, recurrence_id: UUID, now: datetime, *, create: Create) -> str | None:
    """Creates the template's next instance and files the timer of the firing after it; the last one the template's
    `max_instances` allows ends it, and its owner is told. A timer fired again finds it not due and does nothing."""
    recurrence = uow.get(recurrence_id, Recurrence)
    if recurrence is None or not recurrence.is_due(now):
        return None
    number = recurrence.instances + 1
    cmd = instance_of(recurrence.template, recurrence.ref, number)
    made, result = _create(uow, _firing(recurrence, now), cmd, create)
    next_at = next_firing(parse_cron(recurrence.cron), now, recurrence.timezone)
    recurrence.record_instance(task_ref=cmd.task_id, created=made, result=result, next_at=next_at, now=now)
    if recurrence.has_ended:
        _tell_owner_it_ended(uow, cmd.task_id, recurrence, now)
        return f"template {recurrence.ref}: instance {number} ({result}); its last, the template ended"
    set_timer(uow, kind=TimerKind.RECURRENCE, target_id=recurrence.id, due=next_at, now=now)
    return f"template {recurrence.ref}: instance {number} ({result}); the next {when(next_at)}"


def _firing(recurrence: Recurrence, now: datetime) -> Message:
    return Message(kind="timer", ref=recurrence.ref, type="task.recur", tenant=recurrence.tenant, at=now)


def _tell_owner_it_ended(uow: UnitOfWork, task_ref: str, recurrence: Recurrence, now: datetime) -> None:
    """Told through the last instance, the task the owner sees; a last instance a limit held leaves nothing to tell
    through, and `Recurrence.Ended` in `audit` says it."""
    task = uow.get(ids.task_id(recurrence.tenant, task_ref), Task)
    if task is not None and not task.is_closed:
        task.notify_user(kind="recurrence_ended", now=now, message=(
            f"'{task.title}' is the last of the {count(recurrence.instances, 'instance')} template "
            f"{recurrence.ref} may create (recurrence_instances): a new task.recur goes on."))

