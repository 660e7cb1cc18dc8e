"""Property: whatever tasks, replies and ticks interleave, no contact is emailed more than the tenant's
member weekly limit in any 7 days, and no tenant more than its daily send limit on any local day.

Asserted on what was emailed (the delivered outbox), not on the ledgers that enforce the limits.
Messages go through `publish` and time through `tick`, as `loopline publish` and `loopline tick
--now` do, so every path that sends (first touches, follow-ups, deferred drafts, replies to
replies) is exercised the way a user drives it.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections import Counter, defaultdict
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from eventsourcing.utils import get_topic
from hypothesis import HealthCheck, Phase, event, given, settings
from hypothesis import strategies as st

from loopline.domain.send_ledger import WEEK, local_day
from loopline.domain.task import Task
from loopline.domain.timeutil import format_time, parse_time
from loopline.processors.followers.delivery import is_contact_email
from loopline.runtime.system import System
from tests.conftest import build_system, command, publish, signal

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=timezone.utc)
TENANTS = ("gym_a", "gym_b")
CONTACTS = ("ana@example.com", "ben@example.com", "cy@example.com")
SENDING_TYPES = ("churn_risk", "win_back", "lead_followup", "payment_recovery", "onboarding")
REPLIES = (
    "Yes! I'll be there Monday for the 6pm class.",
    "Please stop emailing me.",
    "Maybe, what are the class times?",
    "ok",
)
ZONES = ("UTC", "America/New_York", "Asia/Tokyo")
PHASES = tuple(Phase)[:-2] if os.environ.get("CI") else tuple(Phase)

tenant = st.sampled_from(TENANTS)
operations = st.lists(
    st.one_of(
        st.tuples(st.just("create"), tenant, st.integers(0, 7), st.sampled_from(SENDING_TYPES),
                  st.sampled_from(CONTACTS), st.booleans()),
        st.tuples(st.just("reply"), tenant, st.sampled_from(CONTACTS), st.sampled_from(REPLIES)),
        st.tuples(st.just("tick"), st.integers(1, 96)),
    ),
    min_size=4, max_size=24,
)
limits = st.fixed_dictionaries({
    "member_weekly_limit": st.integers(1, 3), "daily_send_limit": st.integers(1, 5), "timezone": st.sampled_from(ZONES),
})


def configure(ref: str, tenant_name: str, at: datetime, tenant_limits: dict[str, Any]) -> dict[str, Any]:
    return command(ref, "tenant.configure", format_time(at), tenant=tenant_name, execution_mode="limited_auto", **tenant_limits)


def message(n: int, op: tuple, at: datetime) -> dict[str, Any]:
    kind, *args = op
    ref, stamp = f"m{n}", format_time(at)
    if kind == "create":
        tenant_name, task, task_type, contact, with_draft = args
        draft = {"draft": {"subject": "We miss you", "body": "Hi, come back and see us soon."}} if with_draft else {}
        return command(
            ref, "task.create", stamp, tenant=tenant_name, task_id=f"t{task}", title=f"{task_type} {contact}",
            task_type=task_type, contact=contact, to_name=contact.split("@")[0].title(), confidence=0.95, **draft,
        )
    tenant_name, contact, text = args
    return signal(ref, "email.received", stamp, tenant=tenant_name, sender=contact, subject="Re: hello", body=text)


def emails(home: Path) -> list[dict[str, Any]]:
    """What was emailed to contacts: the delivered outbox's contact emails."""
    path = home / "outbox.jsonl"
    lines = [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []
    return [line for line in lines if is_contact_email(line)]


def weekly_overruns(sent: list[dict[str, Any]], limit_of: dict[str, int]) -> list[str]:
    """(tenant, contact) pairs with more than the limit in some 7 days: any window holding more than
    `limit` sends holds more than `limit` ending at one of them, so the windows ending at sends suffice."""
    times: dict[tuple[str, str], list[datetime]] = defaultdict(list)
    for line in sent:
        times[(line["tenant"], line["to"].lower())].append(parse_time(line["at"]))
    return [
        f"{who}: {count} emails in the 7 days to {format_time(end)}"
        for who, moments in times.items() for end in moments
        if (count := sum(1 for m in moments if end - WEEK < m <= end)) > limit_of[who[0]]
    ]


def daily_overruns(sent: list[dict[str, Any]], tenant_limits: dict[str, dict[str, Any]]) -> list[str]:
    days = Counter((line["tenant"], local_day(parse_time(line["at"]), tenant_limits[line["tenant"]]["timezone"]))
                   for line in sent)
    return [f"{tenant_name} sent {count} on {day}" for (tenant_name, day), count in days.items()
            if count > tenant_limits[tenant_name]["daily_send_limit"]]


def tick(system: System, now: datetime) -> None:
    system.scheduler.tick(now)
    system.drain()


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow], phases=PHASES)
@given(operations, limits, limits)
def test_no_contact_gets_more_than_the_weekly_limit_whatever_interleaves(ops, limits_a, limits_b) -> None:
    tenant_limits = {"gym_a": limits_a, "gym_b": limits_b}
    home = Path(tempfile.mkdtemp(prefix="loopline-limit-prop-"))  # one per example: tmp_path is one per test
    system = build_system(home)
    try:
        now = T0
        publish(system, *(configure(f"cfg-{name}", name, now, tenant_limits[name]) for name in TENANTS))
        for n, op in enumerate(ops):
            now += timedelta(minutes=10)
            if op[0] == "tick":
                now += timedelta(hours=op[1])
                tick(system, now)
            else:
                publish(system, message(n, op, now))
        for _ in range(12):  # long enough for every cadence, deferral and budget to run out
            now += timedelta(days=3)
            tick(system, now)

        sent = emails(home)
        event(f"emails sent: {min(len(sent), 10)}{'+' if len(sent) >= 10 else ''}")  # --hypothesis-show-statistics
        deferred = system.app.recorder.select_notifications(start=1, limit=1, topics=[get_topic(Task.SendDeferred)])
        event(f"sends deferred by a limit: {'some' if deferred else 'none'}")
        assert weekly_overruns(sent, {name: tenant_limits[name]["member_weekly_limit"] for name in TENANTS}) == []
        assert daily_overruns(sent, tenant_limits) == []
    finally:
        system.close()
        shutil.rmtree(home)


def test_tasks_of_one_contact_share_the_weekly_limit_and_wait_for_the_week_to_roll_over(home: Path) -> None:
    """Four tasks of four types for one contact, its address spelled four ways, limit 1 a week: one email a
    week, each exactly when the previous leaves the window, and the property above would see every one (it
    cannot pass for lack of sends)."""
    spellings = ("ana@example.com", "Ana <ANA@example.com>", "(gym)ana@example.com.", '"ana"@Example.com')
    system = build_system(home)
    try:
        publish(system, configure("cfg", "gym_a", T0, {"member_weekly_limit": 1, "daily_send_limit": 15}))
        publish(system, *(
            message(n, ("create", "gym_a", n, task_type, spelling, True), T0)
            for n, (task_type, spelling) in enumerate(zip(("churn_risk", "win_back", "lead_followup", "onboarding"),
                                                          spellings, strict=True))
        ))
        now = T0
        for _ in range(4 * 24):
            now += timedelta(hours=6)
            tick(system, now)

        sent = sorted(parse_time(line["at"]) for line in emails(home))
        assert len(sent) >= 3
        assert {line["to"] for line in emails(home)} == {"ana@example.com"}
        assert all(later - earlier >= WEEK for earlier, later in zip(sent, sent[1:], strict=False))
        assert weekly_overruns(emails(home), {"gym_a": 1}) == []
    finally:
        system.close()
