"""The owner's tenant-level notices (the brain's `notify` and `send_brief`, proposal batches, the return digest): every
one goes through the tenant's `NotificationHold`, which sends it, holds it (quiet hours, the owner away) or skips it
(the same words within 24 h). Delivery follows the hold's `Sent` and `DigestSent` events."""

from __future__ import annotations

from datetime import datetime

from loopline.domain import ids
from loopline.domain.notice_budget import quiet_until
from loopline.domain.notification_hold import DEFAULT_QUIET_HOURS, NotificationHold
from loopline.domain.proactive_run import clamp_next_run
from loopline.domain.timers import TimerKind
from loopline.processors.application import UnitOfWork
from loopline.processors.handlers.loops_and_timers import proactive_run, schedule_run, set_timer
from loopline.processors.handlers.tenants import tenant_settings


def notification_hold(uow: UnitOfWork, tenant: str, now: datetime) -> NotificationHold:
    hold_id = ids.notification_hold_id(tenant)
    return uow.get(hold_id, NotificationHold) or uow.add(NotificationHold.open(id=hold_id, tenant=tenant, now=now))


def owner_last_seen(uow: UnitOfWork, tenant: str) -> datetime | None:
    """When the owner was last seen (`user.seen`); None when never."""
    hold = uow.get(ids.notification_hold_id(tenant), NotificationHold)
    return hold.last_seen_at if hold is not None else None


def notify_owner(uow: UnitOfWork, tenant: str, text: str, *, now: datetime) -> str:
    """Offers one notice to the owner; says what became of it: `sent`, `held` or `skipped`."""
    settings = tenant_settings(uow, tenant)
    hold = notification_hold(uow, tenant, now)
    outcome = hold.offer(text, now=now, zone=settings.timezone, quiet_hours=settings.owner_quiet_hours)
    if outcome == "held":
        wake_when_quiet_ends(uow, tenant, now=now)
    return outcome


def wake_when_quiet_ends(uow: UnitOfWork, tenant: str, *, now: datetime) -> None:
    """An owner who is around gets what quiet hours held when they end (the run's start releases it), not at the
    run's own pace, up to 8 h later."""
    hold = uow.get(ids.notification_hold_id(tenant), NotificationHold)
    if hold is None or not hold.queue or not hold.is_active(now):
        return
    settings = tenant_settings(uow, tenant)
    quiet_ends = quiet_until(now, settings.timezone, settings.owner_quiet_hours or DEFAULT_QUIET_HOURS)
    run = proactive_run(uow, tenant, now)
    if quiet_ends is not None and clamp_next_run(quiet_ends, now) < run.next_run_at and run.pending_request is None:
        schedule_run(uow, run, requested_at=quiet_ends, reason="the owner's quiet hours end: what they held goes out",
                     now=now)


def release_held(uow: UnitOfWork, tenant: str, *, now: datetime) -> list[str]:
    """The held notices sent as one digest when the owner is around outside quiet hours (of those held while the owner
    was away, at most 5: the return digest)."""
    settings = tenant_settings(uow, tenant)
    return notification_hold(uow, tenant, now).release(now=now, zone=settings.timezone,
                                                       quiet_hours=settings.owner_quiet_hours)


def owner_seen(uow: UnitOfWork, tenant: str, now: datetime) -> None:
    """Notes the owner's presence; an owner back after a day or more away gets the return digest of what was held
    (outside quiet hours; else the first run after them sends it) and a run now."""
    hold = notification_hold(uow, tenant, now)
    last_seen_at = hold.last_seen_at
    run = proactive_run(uow, tenant, now)
    if hold.seen(now):
        assert last_seen_at is not None, "a return needs an earlier sighting"
        release_held(uow, tenant, now=now)
        run.run_on_return(last_seen_at=last_seen_at, now=now)
        set_timer(uow, kind=TimerKind.PROACTIVE_RUN, target_id=run.id, due=now, now=now)
