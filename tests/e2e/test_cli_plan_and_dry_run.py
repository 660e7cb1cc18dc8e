"""`loopline plan` and dry run through the `loopline` command (embedded, with a real SMTP server): a week of a gym's
sends worked out on a copy, the event store byte-identical after and nothing emailed; a tenant in dry run emails
nothing and its audit shows what would have gone."""

from __future__ import annotations

import hashlib
from datetime import timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from loopline.domain.timeutil import format_time, parse_time
from tests.conftest import command
from tests.e2e.cli import Cli
from tests.servers import SmtpSink

T0 = parse_time("2026-03-02T14:00:00Z")
GYM = "iron_temple"
ZONE = "America/New_York"


@pytest.fixture
def cli_environ(smtp: SmtpSink) -> dict[str, str]:
    return {"LOOPLINE_SMTP_URL": smtp.url, "LOOPLINE_EMAIL_FROM": "sam@irontemple.example"}


def task(ref: str, contact: str) -> dict[str, Any]:
    return command(
        f"create-{ref}", "task.create", format_time(T0), tenant=GYM, task_id=ref, title=f"win back {contact}",
        task_type="churn_risk", contact=contact, to_name="Member", confidence=0.95,
        draft={"subject": "We miss you", "body": "Hi,\n\nWe would love to see you again.\n\nSam"},
    )


def digest(home: Path) -> dict[str, str]:
    return {path.name: hashlib.sha256(path.read_bytes()).hexdigest() for path in sorted(home.iterdir()) if path.is_file()}


def test_plan_shows_a_week_of_a_gyms_sends_inside_its_window_and_changes_nothing(
    embedded_cli: Cli, smtp: SmtpSink, tmp_path: Path
) -> None:
    configure = command("cfg", "tenant.configure", format_time(T0 - timedelta(hours=1)), tenant=GYM,
                        execution_mode="limited_auto", timezone=ZONE, daily_send_limit=2)
    members = [task(f"churn-{n}", f"member{n}@example.com") for n in range(3)]
    assert embedded_cli.publish(tmp_path, [configure, *members], "setup").returncode == 0
    before, emailed = digest(embedded_cli.home), len(smtp.messages)

    plan = embedded_cli.json("plan", GYM, "--days", "7", "--now", format_time(T0 + timedelta(hours=1)))

    assert digest(embedded_cli.home) == before and len(smtp.messages) == emailed
    assert plan["tenant"] == GYM and plan["until"] == format_time(T0 + timedelta(days=7, hours=1))
    later = [send for send in plan["sends"] if send["subject"] == "Re: We miss you"]
    assert {send["task_id"] for send in later} == {"churn-0", "churn-1", "churn-2"}, plan["sends"]
    assert all(T0 < parse_time(send["at"]) <= T0 + timedelta(days=7, hours=1) for send in plan["sends"])
    assert all(8 <= parse_time(send["at"]).astimezone(ZoneInfo(ZONE)).hour < 20 for send in plan["sends"]), plan["sends"]
    assert {held["rule"] for held in plan["held"]} == {"tenant_daily_limit", "send_window"}, plan["held"]


def test_a_dry_run_tenant_emails_nothing_and_its_audit_shows_what_would_have_gone(
    embedded_cli: Cli, smtp: SmtpSink, tmp_path: Path
) -> None:
    configure = command("cfg", "tenant.configure", format_time(T0 - timedelta(hours=1)), tenant=GYM,
                        execution_mode="limited_auto", dry_run=True)
    assert embedded_cli.publish(tmp_path, [configure, task("churn-0", "member0@example.com")], "setup").returncode == 0

    assert embedded_cli("tick", "--now", format_time(T0 + timedelta(hours=1))).returncode == 0

    assert smtp.messages == []
    trail = embedded_cli.json("audit", "churn-0")
    assert any(row["summary"].startswith("loopline did send_email: [dry run, not delivered] Emailed member0@example.com")
               for row in trail), trail
