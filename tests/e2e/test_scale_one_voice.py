"""One voice at scale: several `loopline tick` processes race to step the tasks of the same members while two
workers run, and still no member gets more than one email on any local day (seed 002 §21.3), nor more than their
weekly limit, nor the tenant more than its daily limit: the limits are the ledgers' aggregates, which a racing
send meets as a version conflict, not read-model counts that trail the log (issue 19, done-when 2)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections import Counter
from datetime import timedelta
from typing import Any

from loopline.domain.send_ledger import local_day
from loopline.domain.timeutil import format_time, parse_time
from tests.conftest import command
from tests.e2e.scale import ROOT, ScaleDeployment
from tests.e2e.test_scale_workers import Deploy, deploy, group_members  # noqa: F401 - the fixture
from tests.waiting import eventually

__all__ = ["deploy"]

T0 = parse_time("2026-03-02T14:00:00Z")
GYM = "iron_temple"
ZONE = "America/New_York"
MEMBERS = [f"member{n}@example.com" for n in range(3)]
TYPES = ("lead_followup", "win_back", "churn_risk")
RACING_TICKS = 3
TIGHT = "tight_gym"
TIGHT_LIMITS = {"member_weekly_limit": 1, "daily_send_limit": 2}
"""The second tenant's limits: two of its three members are emailed on day 1, the third on day 2, then nothing."""


def tasks_for(member: str, n: int, tenant: str = GYM) -> list[dict[str, Any]]:
    return [command(
        f"create-{n}-{task_type}", "task.create", format_time(T0), tenant=tenant, task_id=f"{task_type}-{n}",
        title=f"{task_type} for member {n}", task_type=task_type, contact=member, confidence=0.95,
        draft={"subject": f"{task_type} hello", "body": "Hi,\n\nWe would love to see you again.\n\nSam"},
    ) for task_type in TYPES]


def racing_ticks(deployment: ScaleDeployment, at: str) -> None:
    """`loopline tick --now at` in several processes at once: each steps the same due tasks."""
    environ = {**os.environ, **deployment.environ}
    ticks = [subprocess.Popen([sys.executable, "-c", "from loopline.cli.main import main; main()", "tick", "--now", at],
                              cwd=ROOT, env=environ, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
             for _ in range(RACING_TICKS)]
    for tick in ticks:
        _, error = tick.communicate(timeout=120)
        assert tick.returncode == 0, error.decode()


def test_racing_ticks_keep_one_voice_the_weekly_and_the_daily_limits(deploy: Deploy) -> None:
    loopline = deploy()
    loopline.start_worker(), loopline.start_worker()
    eventually(lambda: group_members(loopline) == 2, "both workers to join the consumer group")
    messages = [command(f"cfg-{tenant}", "tenant.configure", format_time(T0 - timedelta(hours=1)), tenant=tenant,
                        execution_mode="limited_auto", timezone=ZONE, **limits)
                for tenant, limits in ((GYM, {}), (TIGHT, TIGHT_LIMITS))]
    messages += [message for tenant in (GYM, TIGHT) for n, member in enumerate(MEMBERS)
                 for message in tasks_for(member, n, tenant)]
    loopline.publish(messages)
    loopline.settle(inbound=len(messages))

    for hours in (1, 25):
        racing_ticks(loopline, format_time(T0 + timedelta(hours=hours)))
    loopline.settle(inbound=len(messages))

    tight = [line for line in loopline.outbox() if line["kind"] == "send_email" and line["tenant"] == TIGHT]
    assert sorted(Counter(line["to"] for line in tight).values()) == [1, 1, 1], "each member once a week"
    assert sorted(Counter(local_day(parse_time(line["at"]), ZONE) for line in tight).values()) == [1, 2]

    emails = [line for line in loopline.outbox() if line["kind"] == "send_email" and line["tenant"] == GYM]
    per_day = Counter((line["to"], local_day(parse_time(line["at"]), ZONE)) for line in emails)
    assert [key for key, count in per_day.items() if count > 1] == []
    assert len(per_day) == len(emails) == 2 * len(MEMBERS), "each member was emailed on each of the two days"
    first = {member: next(line["task_id"] for line in sorted(emails, key=lambda line: line["at"]) if line["to"] == member)
             for member in MEMBERS}
    assert not any(task_id.startswith("lead_followup") for task_id in first.values()), first
