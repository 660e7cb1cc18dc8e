"""The gate at every step through the `loopline` command, with a real SMTP server (issue 18 item 7): a task
at confidence 0.05 never reaches a member in any mode, and switching the gym to `manual` stops touch 2 while a
member's own conversation goes on. Embedded only: what is decided happens after the edge, in the same code at
scale."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from loopline.domain.timeutil import format_time, parse_time
from tests.conftest import command, signal
from tests.e2e.cli import Cli
from tests.messages_api import MessagesApi
from tests.servers import SmtpSink

T0 = parse_time("2026-03-02T09:00:00Z")
GYM = "iron_temple"
BOB, CARA = "bob@example.com", "cara@example.com"
EMAIL_FROM = "sam@irontemple.example"
MODEL_DRAFT = {"subject": "Back on the bike?", "body": "Hey Bob,\n\nSpin on Tuesday?\n\nSam", "confidence": 0.05,
               "reasoning": "I barely know Bob; a guess."}


@pytest.fixture
def cli_environ(mail_and_model_environ: dict[str, str]) -> dict[str, str]:
    return mail_and_model_environ


def at(days: float, minutes: int = 1) -> str:
    return format_time(T0 + timedelta(days=days, minutes=minutes))


def publish(cli: Cli, tmp_path: Path, name: str, *messages: dict[str, Any]) -> str:
    result = cli.publish(tmp_path, list(messages), name)
    assert result.returncode == 0, result.stderr
    return result.stderr


def configure(mode: str, when: str = format_time(T0 - timedelta(hours=1))) -> dict[str, Any]:
    return command(f"cfg-{mode}-{when}", "tenant.configure", when, tenant=GYM, execution_mode=mode,
                   profile={"display_name": "Iron Temple", "sign_off": "Sam"})


def churn_risk(ref: str, contact: str, confidence: float, **data: Any) -> dict[str, Any]:
    return command(f"create-{ref}", "task.create", format_time(T0), tenant=GYM, task_id=ref, title=f"Win {ref} back",
                   task_type="churn_risk", contact=contact, to_name=contact.split("@")[0].title(),
                   confidence=confidence, **data)


def tick(cli: Cli, when: str) -> None:
    result = cli("tick", "--now", when)
    assert result.returncode == 0, result.stderr


def status(cli: Cli, ref: str) -> str:
    [task] = [task for task in cli.json("tasks", "list", "--tenant", GYM) if task["task_id"] == ref]
    return task["status"]


@pytest.mark.parametrize("mode", ["manual", "limited_auto", "auto"])
def test_a_task_at_confidence_0_05_never_sends_in_any_mode(
    embedded_cli: Cli, smtp: SmtpSink, tmp_path: Path, mode: str,
) -> None:
    configured = embedded_cli.publish(tmp_path, [configure(mode)], "configure")
    if mode == "auto":  # there is no such mode: refused naming the two there are, and the gym stays `manual`
        assert configured.returncode == 4  # every line refused
        assert "Input should be 'manual' or 'limited_auto'" in configured.stderr
    else:
        assert configured.returncode == 0, configured.stderr
    publish(embedded_cli, tmp_path, "create",
            churn_risk("t-bob", BOB, 0.05, draft={"subject": "We miss you", "body": "Come back, Bob!"}))

    for day in (0, 3, 8, 13):
        tick(embedded_cli, at(day))

    assert status(embedded_cli, "t-bob") == "pending_review"
    assert smtp.messages == []


def test_an_approved_task_whose_model_draft_is_at_0_05_hands_the_draft_to_the_owner(
    embedded_cli: Cli, smtp: SmtpSink, messages_api: MessagesApi, tmp_path: Path,
) -> None:
    publish(embedded_cli, tmp_path, "setup", configure("limited_auto"), churn_risk("t-bob", BOB, 0.05))
    publish(embedded_cli, tmp_path, "approve",
            command("ok-bob", "task.approve", at(0), tenant=GYM, task_id="t-bob", reason="give it a go"))

    tick(embedded_cli, at(0, minutes=5))

    assert status(embedded_cli, "t-bob") == "escalated"
    assert smtp.messages == []
    audit = embedded_cli("audit", "t-bob", "--tenant", GYM).stdout
    assert "confidence 0.05, below 0.5" in audit and "Spin on Tuesday?" in audit


def test_switching_to_manual_stops_touch_2_while_a_members_reply_is_still_answered(
    embedded_cli: Cli, smtp: SmtpSink, tmp_path: Path,
) -> None:
    publish(embedded_cli, tmp_path, "setup", configure("limited_auto"),
            churn_risk("t-bob", BOB, 0.9), churn_risk("t-cara", CARA, 0.9))
    tick(embedded_cli, at(0))
    assert sorted(message["To"] for message in smtp.wait_for(2)) == [BOB, CARA]

    publish(embedded_cli, tmp_path, "manual", configure("manual", at(1)),
            signal("cara-1", "email.received", at(1, minutes=30), tenant=GYM, sender=CARA, subject="Re: Checking in",
                   body="Thanks, appreciate you reaching out"))
    [answer] = [message for message in smtp.wait_for(3)[2:] if message["To"] == CARA]
    assert answer["Subject"].startswith("Re: ")  # the conversation Cara drives goes on in manual mode

    for day in (3, 4, 8):
        tick(embedded_cli, at(day))

    assert [message["To"] for message in smtp.messages].count(BOB) == 1  # no touch 2
    assert status(embedded_cli, "t-bob") == "escalated"
    audit = embedded_cli("audit", "t-bob", "--tenant", GYM).stdout
    assert "touch 2 is due, and the execution mode is manual" in " ".join(audit.split())
