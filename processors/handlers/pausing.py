"""Pause and stop (`domain/pause.py`): the four commands, the pause a step reads, holding what falls due while
paused, and the resume that hands it back.

A task paused on its own (`task.pause`, processors/handlers/task_controls.py) is held the same way.

A step that would send or ask the model (a task's step, a sending deadline action) is held whole while paused: its
timer is kept on the pause and filed again at resume, so nothing is polled meanwhile and nothing is dropped. The send
check `paused` guards every send besides, and a request the agent did not take to the model is held too.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any
from uuid import UUID

from loopline.domain import ids
from loopline.domain.pause import Pause, SystemSwitch, held_decision, held_timer
from loopline.domain.send_ledger import TenantSends
from loopline.domain.task import Task
from loopline.domain.task_control import TaskControl
from loopline.domain.tenant import Tenant
from loopline.domain.timers import TimerKind
from loopline.processors.application import UnitOfWork
from loopline.processors.handlers.commands_types import SystemPause, TenantPause
from loopline.processors.handlers.loops_and_timers import set_timer
from loopline.processors.messages import Message, Pending


def _in_force(uow: UnitOfWork, tenant: str, task_ref: str | None = None) -> SystemSwitch | Tenant | TaskControl | None:
    """What pauses the tenant (or its task `task_ref`) now: the whole system's switch first, then the tenant itself,
    then the task's own pause (`task.pause`); None when none does."""
    switch = uow.get(ids.system_switch_id(), SystemSwitch)
    if switch is not None and switch.paused is not None:
        return switch
    found = uow.get(ids.tenant_id(tenant), Tenant)
    if found is not None and found.paused is not None:
        return found
    control = uow.get(ids.task_control_id(tenant, task_ref), TaskControl) if task_ref is not None else None
    return control if control is not None and control.paused is not None else None


def current_pause(uow: UnitOfWork, tenant: str, task_ref: str | None = None) -> Pause | None:
    """The pause in force for the tenant (or its task `task_ref`): the whole system's first, then its own, then the
    task's."""
    pausing = _in_force(uow, tenant, task_ref)
    return pausing.paused if pausing is not None else None


def hold(uow: UnitOfWork, tenant: str, work: dict[str, Any], now: datetime) -> Pause | None:
    """Keeps `work` on the pause in force for the tenant or the task the work is of, to be handed back when it
    resumes; None when not paused."""
    pausing = _in_force(uow, tenant, work["task_ref"])
    if pausing is None:
        return None
    pausing.hold(work, now, **({"tenant": tenant} if isinstance(pausing, SystemSwitch) else {}))
    return pausing.paused


def hold_step(uow: UnitOfWork, task: Task, kind: TimerKind, target_id: UUID, now: datetime) -> str | None:
    """Holds the step a timer would take for the task while paused (it fires again at resume); None when not paused."""
    pause = hold(uow, task.tenant, held_timer(kind, target_id, task.ref), now)
    return None if pause is None else f"'{task.title}': held, {pause.says()}"


def hold_requested_decision(uow: UnitOfWork, task: Task, item: Pending, now: datetime) -> str:
    """A request the agent did not take to the model (a pause was in force): it waits for the resume. Resumed
    since, it is asked at once."""
    pause = hold(uow, task.tenant, held_decision(task.id, task.ref, item.request_ref, item.attempt), now)
    if pause is None:
        task.pause_decision(request_ref=item.request_ref, attempt=item.attempt, reason="the pause ended meanwhile",
                            now=now)
        task.resume_decision(request_ref=item.request_ref, attempt=item.attempt, reason="the pause ended", now=now)
        return f"'{task.title}': the pause ended before the model was asked; asking it now"
    task.pause_decision(request_ref=item.request_ref, attempt=item.attempt, reason=pause.says(), now=now)
    return f"'{task.title}': no model asked, {pause.says()}"


def release(uow: UnitOfWork, held: list[dict[str, Any]], now: datetime) -> int:
    """Hands the held work back: its timers fire at the next tick, which steps the tasks in its usual order (critical
    first, at most its share a tick), and held decisions are asked again."""
    for work in held:
        target = UUID(work["target"])
        if "timer" in work:
            set_timer(uow, kind=TimerKind(work["timer"]), target_id=target, due=now, now=now)
            continue
        task = uow.get(target, Task)
        if task is not None:
            task.resume_decision(request_ref=work["decision"], attempt=work["attempt"], reason="the pause ended",
                                 now=now)
    return len(held)


def pause_tenant_now(uow: UnitOfWork, tenant: str, *, reason: str, by: str, now: datetime) -> bool:
    """Pauses the tenant (False when it is paused already). The tenant's send ledger, which every send changes,
    records the pause in the same save: a send racing it on another worker is redone and then held."""
    tenant_id = ids.tenant_id(tenant)
    found = uow.get_or_create(tenant_id, Tenant, lambda: Tenant.create(id=tenant_id, tenant=tenant, now=now))
    if not found.pause(reason, by, now):
        return False
    sends_id = ids.tenant_sends_id(tenant)
    sends = uow.get_or_create(sends_id, TenantSends, lambda: TenantSends.open(id=sends_id, tenant=tenant, now=now))
    sends.fence_pause(now)
    return True


def pause_tenant(uow: UnitOfWork, msg: Message, cmd: TenantPause) -> str:
    if not pause_tenant_now(uow, msg.tenant, reason=cmd.reason, by=cmd.by or "owner", now=msg.at):
        return f"tenant {msg.tenant} is already paused; nothing changed"
    return f"paused tenant {msg.tenant}: nothing is sent and no model is asked until tenant.resume"


def resume_tenant(uow: UnitOfWork, msg: Message, cmd: TenantPause) -> str:
    tenant = uow.get(ids.tenant_id(msg.tenant), Tenant)
    held = tenant.resume(cmd.reason, cmd.by or "owner", msg.at) if tenant is not None else None
    if held is None:
        return f"tenant {msg.tenant} is not paused; nothing changed"
    return f"resumed tenant {msg.tenant}: {release(uow, held, msg.at)} held step(s) go on, under the same limits"


def pause_system(uow: UnitOfWork, msg: Message, cmd: SystemPause) -> str:
    switch_id = ids.system_switch_id()
    switch = uow.get_or_create(switch_id, SystemSwitch, lambda: SystemSwitch.install(id=switch_id, now=msg.at))
    if not switch.pause(cmd.reason, cmd.by or "operator", msg.at):
        return "Loopline is already paused; nothing changed"
    return "paused Loopline for every tenant: nothing is sent and no model is asked until system.resume"


def resume_system(uow: UnitOfWork, msg: Message, cmd: SystemPause) -> str:
    switch = uow.get(ids.system_switch_id(), SystemSwitch)
    held = switch.resume(cmd.reason, cmd.by or "operator", msg.at) if switch is not None else None
    if held is None:
        return "Loopline is not paused; nothing changed"
    return f"resumed Loopline: {release(uow, held, msg.at)} held step(s) go on, under the same limits"
