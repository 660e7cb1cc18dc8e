"""The checks every model call a task asks for passes first, in order: the one place a model rail is added.

Each check reads a `ModelCallAttempt` (the task's calls so far, the tenant's model-call ledger, its
limits and the time) and returns None, or a `Deferral` (as a send check does) saying which rule holds
the call back, why, and `until` when it frees up (None: never, e.g. the task's own budget is spent).
A held call is not dropped: it is asked for at `until` (seed 002 §7.12).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

from loopline.domain.model_ledger import TenantModelCalls
from loopline.domain.send_checks import Deferral
from loopline.domain.send_ledger import local_day, start_of_day
from loopline.domain.tenant import TenantSettings
from loopline.domain.timeutil import format_time

WARN_AT_PERCENT = 80
"""The owner is told when a day's model calls reach this share of the daily limit (seed 002 §7.12)."""


@dataclass(frozen=True)
class ModelCallAttempt:
    """One model decision a task is about to ask for, with everything the checks read."""

    task_ref: str
    task_calls: int
    """Model calls the task asked for so far, retries included."""
    tenant_calls: TenantModelCalls
    limits: TenantSettings
    """The tenant's settings: its two model-call limits, and its time zone, in which the daily limit counts days."""
    now: datetime


def task_model_call_limit(attempt: ModelCallAttempt) -> Deferral | None:
    limit = attempt.limits.task_model_call_limit
    if attempt.task_calls < limit:
        return None
    return Deferral(
        "task_model_call_limit", f"task {attempt.task_ref} used its {limit} model call(s) (limit {limit} a task)", None,
    )


def daily_model_call_limit(attempt: ModelCallAttempt) -> Deferral | None:
    limit, zone = attempt.limits.daily_model_call_limit, attempt.limits.timezone
    today = local_day(attempt.now, zone)
    calls = attempt.tenant_calls.calls_on(today)
    if calls < limit:
        return None
    until = start_of_day(today + timedelta(days=1), zone)
    return Deferral(
        "daily_model_call_limit",
        f"{calls} model call(s) were asked for on {today.isoformat()} ({zone}; limit {limit} a day); "
        f"the next may go at {format_time(until)}",
        until,
    )


ModelCallCheck = Callable[[ModelCallAttempt], Deferral | None]

MODEL_CALL_CHECKS: tuple[ModelCallCheck, ...] = (task_model_call_limit, daily_model_call_limit)
"""In order: the first that holds decides; a budget that never frees up is named before a day's."""


def first_model_deferral(attempt: ModelCallAttempt) -> Deferral | None:
    return next((deferral for check in MODEL_CALL_CHECKS if (deferral := check(attempt)) is not None), None)


def reaches_warning(calls: int, limit: int) -> bool:
    """Whether the day's `calls`-th call is the one that reaches WARN_AT_PERCENT of `limit`: the owner is told once."""
    threshold = -(-limit * WARN_AT_PERCENT // 100)
    return limit > 0 and calls == max(threshold, 1)
