"""How often the owner is emailed (seed 002 §35): a daily budget per category of notice, quiet hours that hold an
email until they end, and one digest for what is over the budget.

The budget throttles the owner's email, the one push Loopline makes: every notice still reaches the outbox and
the webhook at once (the dashboard's feed). Nothing is dropped: an email held by quiet hours goes when they end,
and one over its budget goes in the next digest, which lists its notices in priority order.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, time, timedelta
from zoneinfo import ZoneInfo

ESCALATION, APPROVAL, NUDGE, FEEDBACK, ALERT, DAILY = (
    "escalation", "approval_needed", "staff_todo_nudge", "outcome_feedback", "system_alert", "daily_digest"
)
PRIORITY = (ALERT, ESCALATION, APPROVAL, NUDGE, FEEDBACK, DAILY)
"""The categories, most urgent first: a digest lists its notices in this order."""
DAILY_BUDGET: dict[str, int | None] = {ESCALATION: None, APPROVAL: 5, NUDGE: 2, FEEDBACK: 3, ALERT: None, DAILY: None}
"""Emails of a category one tenant's owner gets singly in a local day (§35.2); None: every one, never batched."""
CATEGORY_OF = {
    "escalation": ESCALATION, "escalation_reply": ESCALATION, "escalation_reminder": ESCALATION,
    "question": ESCALATION, "question_urgent": ESCALATION, "question_re_escalated": ESCALATION,
    "review": APPROVAL, "reply_in_review": APPROVAL, "action_review": APPROVAL,
    "stalled": NUDGE, "reminder_needed": NUDGE, "loop_expired": NUDGE, "staff_todo": NUDGE, "todo_reminder": NUDGE,
    "task_completed": FEEDBACK, "task_cancelled": FEEDBACK, "task_expired": FEEDBACK, "escalation_timeout": FEEDBACK,
    "late_reply": FEEDBACK,
    "followup_sent": FEEDBACK, "followup_deferred": FEEDBACK, "reminder_sent": FEEDBACK, "signal": FEEDBACK,
    "outcome_revised": FEEDBACK, "brain_notice": FEEDBACK, "daily_digest": DAILY,  # one a day by its timer
    "return_digest": DAILY,  # one per return, the hold's own digest: never over a budget
}
"""Each kind of notice's category; a kind not named (a refused timer or decision, a paused tenant) is a system
alert, so a notice nobody classified is never held back."""
DIGEST_EVERY_HOURS = 4
"""Digests go at local 00:00, 04:00, 08:00 … (§35.2: at most every 4 hours): a notice over its budget waits for the
next one (or for the quiet hours it falls in to end), with every other notice held in those hours."""


def category_of(kind: str) -> str:
    return CATEGORY_OF.get(kind, ALERT)


def quiet_span(value: str) -> tuple[time, time] | None:
    """The start and end of quiet hours written `HH:MM-HH:MM` (they may span midnight), or None if not so written."""
    start, dash, end = value.partition("-")
    try:
        span = time.fromisoformat(start.strip()), time.fromisoformat(end.strip())
    except ValueError:
        return None
    return span if dash and span[0] != span[1] and len(start.strip()) == len(end.strip()) == 5 else None


def quiet_until(at: datetime, zone: str, quiet_hours: str | None) -> datetime | None:
    """When the quiet hours `at` falls in end, or None outside them (or without any)."""
    span = quiet_span(quiet_hours) if quiet_hours else None
    if span is None:
        return None
    start, end = span
    local = at.astimezone(ZoneInfo(zone))
    inside = start <= local.time() < end if start < end else (local.time() >= start or local.time() < end)
    if not inside:
        return None
    ends = datetime.combine(local.date(), end, local.tzinfo)
    return ends if ends > local else ends + timedelta(days=1)


@dataclass(frozen=True)
class Verdict:
    """What to do with one owner email now: send it singly, or hold it until `until` (`digest`: into the digest)."""

    until: datetime | None = None
    digest: bool = False
    reason: str = ""


def verdict(kind: str, *, at: datetime, zone: str, quiet_hours: str | None, emailed_today: int) -> Verdict:
    """Quiet hours first (a system alert goes through them), then the category's budget for the local day."""
    category = category_of(kind)
    quiet = None if category == ALERT else quiet_until(at, zone, quiet_hours)
    if quiet is not None:
        return Verdict(until=quiet, reason=f"held: quiet hours ({quiet_hours}, {zone}) until {quiet.isoformat()}")
    budget = DAILY_BUDGET[category]
    if budget is not None and emailed_today >= budget:
        due = next_digest(at, zone)
        due = quiet_until(due, zone, quiet_hours) or due
        return Verdict(until=due, digest=True,
                       reason=f"in the digest at {due.isoformat()}: {budget} {category} email(s) a day went singly")
    return Verdict()


def next_digest(at: datetime, zone: str) -> datetime:
    local = at.astimezone(ZoneInfo(zone))
    midnight = local.replace(hour=0, minute=0, second=0, microsecond=0)
    return midnight + timedelta(hours=(local.hour // DIGEST_EVERY_HOURS + 1) * DIGEST_EVERY_HOURS)
