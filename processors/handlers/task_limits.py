"""The creation limits a task Loopline works passes, in the `task.create`'s own unit of work (seed 002 §7.9, §7.13)."""

from __future__ import annotations

from datetime import datetime

from loopline.domain import ids
from loopline.domain.send_ledger import local_day
from loopline.domain.task import Task
from loopline.domain.task_ledger import CreationAttempt, Held, Origin, TenantTasks, first_held
from loopline.domain.tenant import TenantSettings
from loopline.processors.application import UnitOfWork


def admit_task(
    uow: UnitOfWork, *, tenant: str, task_ref: str, task_type: str, contact: str, origin: Origin | None,
    settings: TenantSettings, now: datetime,
) -> Held | None:
    """Counts the task about to be created on the tenant's ledger, or records why a limit holds it (and counts nothing).
    At the limit of open tasks, the open ones are looked at first and those closed since are released."""
    ledger_id = ids.tenant_tasks_id(tenant)
    ledger = uow.get(ledger_id, TenantTasks) or uow.add(TenantTasks.open(id=ledger_id, tenant=tenant, now=now))
    if len(ledger.active) >= settings.active_task_limit:
        ledger.release(_closed(uow, tenant, ledger.active), now=now)
    day = local_day(now, settings.timezone)
    held = first_held(CreationAttempt(ledger=ledger, limits=settings, day=day, origin=origin))
    if held is not None:
        ledger.hold(held, task_ref=task_ref, task_type=task_type, contact=contact, origin=origin, now=now)
        return held
    ledger.count(task_ref=task_ref, day=day, origin=origin, now=now)
    return None


def _closed(uow: UnitOfWork, tenant: str, task_refs: list[str]) -> list[str]:
    task_ids = {ref: ids.task_id(tenant, ref) for ref in task_refs}
    uow.prefetch(task_ids.values())
    return [ref for ref, task_id in task_ids.items() if (task := uow.get(task_id, Task)) is None or task.is_closed]
