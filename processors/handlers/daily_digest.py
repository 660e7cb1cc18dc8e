"""The owner's daily digest (seed 002 §10, §35.2): at the tenant's `daily_digest_hour` a `Tenant.DigestRecorded` for
the local day before, which delivery emails with that day's scorecard. The timer files the next one; a timer left
from an earlier hour ends, and two filed for the same moment fire once (`TimerBucket.due`)."""

from __future__ import annotations

from datetime import datetime, timedelta

from loopline.domain.periods import next_local_hour
from loopline.domain.send_ledger import local_day
from loopline.domain.tenant import Tenant
from loopline.domain.timers import TimerKind
from loopline.processors.application import UnitOfWork
from loopline.processors.handlers.loops_and_timers import set_timer
from loopline.processors.messages import TimerFired
from loopline.processors.ports import Drafter


def file_daily_digest(uow: UnitOfWork, tenant: Tenant, now: datetime) -> None:
    """Files the next digest when the tenant asks for one (a new hour starts a new chain; the old one ends)."""
    settings = tenant.current
    if settings.daily_digest_hour is not None:
        due = next_local_hour(now, settings.timezone, settings.daily_digest_hour)
        set_timer(uow, kind=TimerKind.DAILY_DIGEST, target_id=tenant.id, due=due, now=now)


def record_daily_digest(uow: UnitOfWork, timer: TimerFired, drafter: Drafter) -> str | None:
    tenant = uow.get(timer.target_id, Tenant)
    if tenant is None:
        return None
    settings = tenant.current
    hour, zone = settings.daily_digest_hour, settings.timezone
    # Due at this hour as the settings say now (a clock skipped for daylight saving moves it at most an hour).
    if hour is None or next_local_hour(timer.due - timedelta(hours=2), zone, hour) != timer.due:
        return None
    day = (local_day(timer.due, zone) - timedelta(days=1)).isoformat()
    set_timer(uow, kind=TimerKind.DAILY_DIGEST, target_id=tenant.id, due=next_local_hour(timer.due, zone, hour),
              now=timer.now)
    if not tenant.record_digest(day=day, now=timer.now):
        return None
    return f"daily digest for {tenant.tenant}: the scorecard of {day}"
