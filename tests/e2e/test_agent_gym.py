"""Seed 002's gym, end to end through the `loopline` command (embedded): a `churn_risk` task
above its threshold is emailed (a real SMTP server receives it) at the next tick and on the `standard`
cadence (days 0, 3 and 8), then cancelled as `unresponsive` when its 14 days are up, never more than
3 messages; one below the threshold waits in review; a reply stops the cadence and is evaluated. With
the Anthropic adapter pointed at a local Messages API server, what that server writes is what is
emailed, and the audit shows the model, its confidence and its reasoning."""

from __future__ import annotations

import json
from datetime import timedelta
from email.message import EmailMessage
from pathlib import Path
from typing import Any

import pytest

from loopline.domain.timeutil import format_time, parse_time
from tests.conftest import ANY_HOUR, command, signal
from tests.e2e.agent import MODEL, body
from tests.e2e.cli import Cli
from tests.messages_api import MessagesApi
from tests.servers import SmtpSink


@pytest.fixture
def cli(embedded_cli: Cli) -> Cli:
    """Embedded only (see `embedded_cli`): the leader drafting through the model and delivering at scale is
    test_no_reply_lost's and the scale tests' subject."""
    return embedded_cli


T0 = parse_time("2026-03-02T09:00:00Z")
GYM = "iron_temple"
BOB, CARA, DAN = "bob@example.com", "cara@example.com", "dan@example.com"
EMAIL_FROM = "sam@irontemple.example"
MODEL_DRAFT = {
    "subject": "Your spot in Tuesday spin", "body": "Hey Bob,\n\nTuesday spin has a bike with your name on it.\n\nSam",
    "confidence": 0.87, "reasoning": "Bob used to come to spin on Tuesdays",
}


@pytest.fixture
def cli_environ(mail_and_model_environ: dict[str, str]) -> dict[str, str]:
    return mail_and_model_environ


def at(days: float, minutes: int = 1) -> str:
    return format_time(T0 + timedelta(days=days, minutes=minutes))


def setup(cli: Cli, tmp_path: Path, *tasks: dict[str, Any]) -> None:
    configure = command(
        "cfg", "tenant.configure", format_time(T0 - timedelta(hours=1)), tenant=GYM, name="Iron Temple",
        execution_mode="limited_auto", timezone="America/New_York", **ANY_HOUR,
        profile={"display_name": "Iron Temple", "owner_first_name": "Sam", "sign_off": "Sam"},
    )
    result = cli.publish(tmp_path, [configure, *tasks], "setup")
    assert result.returncode == 0, result.stderr


def churn_risk(ref: str, contact: str, name: str, confidence: float) -> dict[str, Any]:
    return command(
        f"create-{ref}", "task.create", format_time(T0), tenant=GYM, task_id=ref, title=f"Win {name} back to class",
        task_type="churn_risk", contact=contact, to_name=name, confidence=confidence,
        context={"days_since_last_visit": 21},
    )


def tick(cli: Cli, when: str) -> None:
    result = cli("tick", "--now", when)
    assert result.returncode == 0, result.stderr


def emails_to(smtp: SmtpSink, contact: str) -> list[EmailMessage]:
    return [message for message in smtp.messages if message["To"] == contact]


def wait_for_emails(smtp: SmtpSink, count: int) -> list[EmailMessage]:
    """Until `count` emails arrived at the SMTP server."""
    received = smtp.wait_for(count)
    assert len(received) == count, [(m["To"], m["Subject"]) for m in received]
    return received


def outbox(cli: Cli) -> list[dict[str, Any]]:
    path = cli.home / "outbox.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def decisions(cli: Cli, ref: str) -> list[dict[str, Any]]:
    return [row["payload"] for row in cli.json("audit", ref, "--tenant", GYM) if row["event"] == "Task.DecisionRecorded"]


def task_status(cli: Cli, ref: str) -> str:
    [task] = [task for task in cli.json("tasks", "list", "--tenant", GYM) if task["task_id"] == ref]
    return task["status"]


def test_churn_risk_follows_the_standard_cadence_and_ends_unresponsive_after_three_emails(
    cli: Cli, smtp: SmtpSink, tmp_path: Path
) -> None:
    setup(cli, tmp_path, churn_risk("t-bob", BOB, "Bob", 0.9), churn_risk("t-cara", CARA, "Cara", 0.5))
    assert task_status(cli, "t-cara") == "pending_review"  # 0.5 is below churn_risk's 0.75

    tick(cli, at(0))
    [first] = wait_for_emails(smtp, 1)
    assert first["To"] == BOB and "Bob" in first.get_content()
    assert task_status(cli, "t-cara") == "pending_review"  # the tick sends nothing to a task the owner has not approved
    for day, expected in ((2, 1), (3, 2), (7, 2), (8, 3), (14, 3)):
        tick(cli, at(day))
        wait_for_emails(smtp, expected)
    tick(cli, at(15))

    assert task_status(cli, "t-bob") == "cancelled"
    assert "unresponsive" in cli("audit", "t-bob", "--tenant", GYM).stdout
    for day in (16, 30):
        tick(cli, at(day))
    assert len(emails_to(smtp, BOB)) == 3
    assert emails_to(smtp, CARA) == []


def test_a_reply_stops_the_cadence_and_is_evaluated(cli: Cli, smtp: SmtpSink, tmp_path: Path) -> None:
    setup(cli, tmp_path, churn_risk("t-dan", DAN, "Dan", 0.9))
    tick(cli, at(0))
    wait_for_emails(smtp, 1)
    reply = signal(
        "reply-dan", "email.received", at(1), tenant=GYM, sender=DAN, subject="Re: hello",
        body="Yes! I'll be there Monday for the 6pm class.",
    )
    assert cli.publish(tmp_path, [reply], "reply").returncode == 0

    for day in (3, 8, 15):
        tick(cli, at(day))

    touches = [line["details"].get("touch") for line in outbox(cli) if line["kind"] == "send_email"]
    assert 2 not in touches and 3 not in touches, touches  # no cadence follow-up after the reply
    [evaluation] = [d for d in decisions(cli, "t-dan") if d["point"] == "evaluate_reply"]
    assert evaluation["adapter"] == "offline"
    assert len(emails_to(smtp, DAN)) <= 2  # the first touch, and at most the answer to his reply


def test_what_the_model_writes_is_what_is_emailed_and_the_audit_shows_its_decision(
    cli: Cli, smtp: SmtpSink, messages_api: MessagesApi, tmp_path: Path
) -> None:
    setup(cli, tmp_path, churn_risk("t-bob", BOB, "Bob", 0.9))

    tick(cli, at(0))

    [email] = wait_for_emails(smtp, 1)
    assert email["Subject"] == MODEL_DRAFT["subject"]
    assert body(email) == MODEL_DRAFT["body"]
    assert messages_api.forced_tools() == ["draft_message"]
    trail = cli("audit", "t-bob", "--tenant", GYM).stdout
    assert MODEL in trail and "0.87" in trail and MODEL_DRAFT["reasoning"] in trail
