"""Attribution: the one way a task's value is recorded (`Task.ValueAttributed`), read by the scorecard, which never
recomputes a value from the settings."""

from __future__ import annotations

from datetime import datetime

from loopline.domain.attribution import attributed_value
from loopline.domain.task import Task
from loopline.domain.task_types import task_type
from loopline.processors.application import UnitOfWork
from loopline.processors.handlers.tenants import tenant_settings


def attribute_value(uow: UnitOfWork, task: Task, outcome_code: str, *, now: datetime, signal_ref: str | None = None,
                    amount: float | None = None, late: bool = False) -> float:
    """Credits the task with what `outcome_code` is worth under the tenant's `average_value` (or the signal's
    `amount`); an outcome without revenue takes back a value credited before. Returns the task's value."""
    outcome = task_type(task.task_type).outcome(outcome_code)
    average = float(tenant_settings(uow, task.tenant).average_value)
    value, basis = attributed_value(outcome, average, amount)
    task.attribute(outcome=outcome_code, value=value, basis=basis,
                   multiplier=outcome.revenue_multiplier if outcome else None, average_value=average,
                   signal_ref=signal_ref, late=late, now=now)
    return task.attributed_value
