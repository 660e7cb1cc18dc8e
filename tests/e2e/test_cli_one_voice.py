"""One voice, one thread, through the `loopline` command with a real SMTP server (embedded deployment): two
tasks for one member send one email a day, the higher priority first, and each task's touches arrive as
one thread (`Re:` the first subject, `In-Reply-To` the touch before)."""

from __future__ import annotations

from datetime import timedelta
from email.message import EmailMessage
from pathlib import Path
from typing import Any

import pytest

from loopline.domain.send_ledger import local_day
from loopline.domain.timeutil import format_time, parse_time
from tests.conftest import command
from tests.e2e.cli import Cli
from tests.servers import SmtpSink

T0 = parse_time("2026-03-02T14:00:00Z")
GYM = "iron_temple"
ZONE = "America/New_York"
ANN = "ann@example.com"
EMAIL_FROM = "sam@irontemple.example"


@pytest.fixture
def cli_environ(smtp: SmtpSink) -> dict[str, str]:
    return {"LOOPLINE_SMTP_URL": smtp.url, "LOOPLINE_EMAIL_FROM": EMAIL_FROM}


def task(ref: str, task_type: str, subject: str) -> dict[str, Any]:
    return command(
        f"create-{ref}", "task.create", format_time(T0), tenant=GYM, task_id=ref, title=f"{task_type} for Ann",
        task_type=task_type, contact=ANN, to_name="Ann", confidence=0.95,
        draft={"subject": subject, "body": "Hi Ann,\n\nWe would love to see you again.\n\nSam"},
    )


def tick_through(cli: Cli, days: float) -> None:
    now = T0
    while now < T0 + timedelta(days=days):
        now += timedelta(hours=4)
        result = cli("tick", "--now", format_time(now))
        assert result.returncode == 0, result.stderr


def day_of(email: EmailMessage) -> str:
    """The gym's local day the email was sent on (its `Date` is the send's business time)."""
    return local_day(email["Date"].datetime, ZONE).isoformat()


def test_two_tasks_for_one_member_send_one_email_a_day_in_one_thread_each(
    embedded_cli: Cli, smtp: SmtpSink, tmp_path: Path
) -> None:
    configure = command("cfg", "tenant.configure", format_time(T0 - timedelta(hours=1)), tenant=GYM,
                        execution_mode="limited_auto", timezone=ZONE)
    assert embedded_cli.publish(tmp_path, [configure, task("lead", "lead_followup", "Your free class"),
                                           task("churn", "churn_risk", "We miss you")], "setup").returncode == 0

    tick_through(embedded_cli, days=4)

    emails = [email for email in smtp.messages if email["To"] == ANN]
    days = [day_of(email) for email in emails]
    assert len(days) == len(set(days)), [(day, email["Subject"]) for day, email in zip(days, emails, strict=True)]
    assert [email["Subject"] for email in emails[:2]] == ["We miss you", "Your free class"]
    churn = [email for email in emails if email["Subject"].endswith("We miss you")]
    assert len(churn) >= 2, "the churn task's second touch (day 3 of its cadence) arrived"
    assert churn[1]["Subject"] == "Re: We miss you"
    assert churn[1]["In-Reply-To"] == churn[0]["Message-ID"] and churn[1]["References"] == churn[0]["Message-ID"]
