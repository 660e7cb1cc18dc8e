"""The checks every email to a contact passes first, in order: the one place a send rail is added.

Each check reads a `SendAttempt` (the task's budget, the two send ledgers, the tenant's limits
and the time) and returns None, or a `Deferral` saying which rule holds the send back, why, and
`until` when it frees up (None: it never will, e.g. a spent budget). A new rail (an opt-out,
send windows, a paused tenant) is one more function in `SEND_CHECKS`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

from loopline.domain.onboarding import new_tenant_cap
from loopline.domain.pause import Pause
from loopline.domain.send_ledger import ContactSends, TenantSends, local_day, start_of_day
from loopline.domain.send_window import first_send_time
from loopline.domain.suppression import suppressed_because
from loopline.domain.tenant import TenantSettings
from loopline.domain.timeutil import format_time

MAX_DAYS_AHEAD = 366
"""How far ahead the daily limit looks for a day with room (each later day is at most as full)."""


@dataclass(frozen=True)
class Deferral:
    rule: str
    reason: str
    until: datetime | None
    """When the send may go: the time the limit frees up; None when it never does."""


@dataclass(frozen=True)
class SendAttempt:
    """One email Loopline is about to send to `contact` for a task, with everything the checks read."""

    contact: str
    messages_used: int
    messages_budget: int | None
    """The task's message budget (None: a follow-through task, which has none)."""
    contact_sends: ContactSends
    tenant_sends: TenantSends
    limits: TenantSettings
    """The tenant's settings: its two send limits, and its time zone, in which the daily limits count days."""
    now: datetime
    answers_contact: bool = False
    """It answers a message the contact wrote (they are waiting for it), rather than one Loopline starts."""
    yields_to: tuple[str, ...] = ()
    """The contact's other tasks of a higher priority that are due to send now (seed 002 §21.3 rule 1)."""
    task: str = ""
    """The sending task's id, which fixes its jitter after a send window opens."""
    pause: Pause | None = None
    """The pause in force for the tenant (the system's first, then its own), if any."""
    family: tuple[int, int] | None = None
    """For a parent or one of its subtasks: (emails the parent and all its subtasks sent, the parent's budget); None
    for a task in no family, or whose parent has no budget."""


def paused(attempt: SendAttempt) -> Deferral | None:
    """Nothing is sent while the tenant or the whole system is paused (seed 002 §7.6, §7.14); the send waits for the
    resume, which wakes it (`processors/handlers/pausing.py`), so it has no time of its own."""
    return None if attempt.pause is None else Deferral("paused", attempt.pause.says(), None)


def suppressed(attempt: SendAttempt) -> Deferral | None:
    """A suppressed contact (seed 002 §22.4) gets nothing from any task, ever, until `contact.resubscribe`."""
    suppression = attempt.contact_sends.suppression
    if suppression is None:
        return None
    return Deferral(
        "suppressed",
        f"{attempt.contact} {suppressed_because(suppression)}, so they are suppressed: nothing is sent to them "
        "(contact.resubscribe lifts it when they opt back in)",
        None,
    )


def task_message_budget(attempt: SendAttempt) -> Deferral | None:
    if attempt.messages_budget is None or attempt.messages_used < attempt.messages_budget:
        return None
    return Deferral(
        "task_message_budget",
        f"the task's message budget is spent ({attempt.messages_used} of {attempt.messages_budget} sent)",
        None,
    )


def parent_message_budget(attempt: SendAttempt) -> Deferral | None:
    """A parent's budget caps what it and all its subtasks send together (seed 002 §14.3 rule 1)."""
    if attempt.family is None or attempt.family[0] < attempt.family[1]:
        return None
    used, budget = attempt.family
    return Deferral("parent_message_budget",
                    f"the parent task's message budget is spent by it and its subtasks ({used} of {budget} sent)", None)


def member_weekly_limit(attempt: SendAttempt) -> Deferral | None:
    limit, now = attempt.limits.member_weekly_limit, attempt.now
    until = attempt.contact_sends.frees_at(limit, now)
    if until == now:
        return None
    received = attempt.contact_sends.sent_within_week_of(now)
    if until is None:
        return Deferral("member_weekly_limit", f"the member weekly limit is {limit}: {attempt.contact} gets no email", None)
    return Deferral(
        "member_weekly_limit",
        f"{attempt.contact} received {received} email(s) from us in the last 7 days (limit {limit} a week); "
        f"the next may go at {format_time(until)}",
        until,
    )


def member_daily_limit(attempt: SendAttempt) -> Deferral | None:
    """One voice (seed 002 §21.3 rule 3): one message a day to a contact across all of its tasks, in the tenant's
    local days, and a task leaves the day to a higher-priority task of the contact due to send. An answer to
    the contact's own message is not held back to the next day; it counts like any send."""
    if attempt.answers_contact:
        return None
    zone = attempt.limits.timezone
    today = local_day(attempt.now, zone)
    until = start_of_day(today + timedelta(days=1), zone)
    if attempt.contact_sends.emailed_on(today, zone):
        return Deferral(
            "member_daily_limit",
            f"{attempt.contact} was already emailed on {today.isoformat()} ({zone}; one message a day to a contact); "
            f"the next may go at {format_time(until)}",
            until,
        )
    if attempt.yields_to:
        return Deferral(
            "member_daily_limit",
            f"today's one message to {attempt.contact} is left to the higher-priority {', '.join(attempt.yields_to)}; "
            f"this one may go at {format_time(until)}",
            until,
        )
    return None


def tenant_daily_limit(attempt: SendAttempt) -> Deferral | None:
    limit, now, zone = attempt.limits.daily_send_limit, attempt.now, attempt.limits.timezone
    today = local_day(now, zone)
    sent = attempt.tenant_sends.sent_on(today)
    if sent is not None and sent < limit:
        return None
    if limit <= 0:
        return Deferral("tenant_daily_limit", "the daily send limit is 0: nothing is sent", None)
    day = today
    for _ in range(MAX_DAYS_AHEAD):
        day += timedelta(days=1)
        later = attempt.tenant_sends.sent_on(day)
        if later is not None and later < limit:
            break
    until = start_of_day(day, zone)
    return Deferral(
        "tenant_daily_limit",
        f"{_sent_words(sent)} on {today.isoformat()} ({zone}; limit {limit} a day); the next may go at {format_time(until)}",
        until,
    )


def _sent_words(sent: int | None) -> str:
    return f"{sent} email(s) were sent" if sent is not None else "the ledger no longer knows how many emails were sent"


def warm_up(attempt: SendAttempt) -> Deferral | None:
    """A new tenant's onboarding phase (seed 002 §26) and warm-up (§33.2) cap its sends a local day below its own
    daily limit; the warm-up's weeks count from its first email (the tenant ledger's opening)."""
    limits, now, zone = attempt.limits, attempt.now, attempt.limits.timezone
    today = local_day(now, zone)
    cap = new_tenant_cap(limits.ramp_phase, limits.warm_up, local_day(attempt.tenant_sends.created_on, zone), today)
    sent = attempt.tenant_sends.sent_on(today)
    if cap is None or (sent is not None and sent < cap.sends_a_day):
        return None
    if cap.sends_a_day == 0:
        return Deferral("warm_up", f"{cap.why}: nothing is sent until the owner moves ramp_phase on", None)
    until = start_of_day(today + timedelta(days=1), zone)
    return Deferral(
        "warm_up",
        f"{_sent_words(sent)} on {today.isoformat()} ({zone}) and {cap.why}; the next may go at "
        f"{format_time(until)}",
        until,
    )


def send_window(attempt: SendAttempt) -> Deferral | None:
    """Seed 002 §29.2: emails go in the tenant's local hours (and days); one due outside waits for the next opening,
    a few minutes after it by the task's jitter."""
    limits = attempt.limits
    until = first_send_time(attempt.now, limits, attempt.task)
    if until == attempt.now:
        return None
    days = "" if limits.send_on_weekends else ", weekdays"
    return Deferral(
        "send_window",
        f"outside the send window {limits.send_window_start:02d}:00-{limits.send_window_end:02d}:00 {limits.timezone}"
        f"{days}; it may go at {format_time(until)}",
        until,
    )


SendCheck = Callable[[SendAttempt], Deferral | None]

SEND_CHECKS: tuple[SendCheck, ...] = (
    paused, suppressed, task_message_budget, parent_message_budget, member_weekly_limit, member_daily_limit,
    tenant_daily_limit, warm_up, send_window,
)
"""In order: the first that defers decides, so the reason names the tightest rule first met."""


def first_deferral(attempt: SendAttempt) -> Deferral | None:
    return next((deferral for check in SEND_CHECKS if (deferral := check(attempt)) is not None), None)
