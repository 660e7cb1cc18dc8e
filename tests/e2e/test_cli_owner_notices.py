"""The owner's notices through the `loopline` command on the embedded deployment, with a real SMTP server: the
angry reply's notice reaches `owner_email` within the same `publish`, a task entering review is emailed at
once, the owner's notices about one task are one thread, and a notice the owner's action made moot is never
delivered."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import command, signal
from tests.e2e.cli import Cli
from tests.servers import SmtpSink

GYM = "iron_temple"
OWNER = "sam@irontemple.example"
EMAIL_FROM = "coach@irontemple.example"
ANN = "ann@example.com"
ANGRY = "This is ridiculous. I cancelled in March and you charged me twice."


@pytest.fixture
def cli_environ(smtp: SmtpSink) -> dict[str, str]:
    return {"LOOPLINE_SMTP_URL": smtp.url, "LOOPLINE_EMAIL_FROM": EMAIL_FROM}


def _setup(cli: Cli, tmp_path: Path, confidence: float, *more: dict) -> None:
    configure = command("g1", "tenant.configure", "2026-04-06T08:00:00Z", tenant=GYM, name="Iron Temple",
                        owner_email=OWNER, execution_mode="limited_auto")
    create = command("c1", "task.create", "2026-04-06T09:00:00Z", tenant=GYM, task_id="ann", title="Win Ann back",
                     task_type="win_back", contact=ANN, to_name="Ann", confidence=confidence)
    assert cli.publish(tmp_path, [configure, create, *more], "setup").returncode == 0


def _to_owner(smtp: SmtpSink) -> list:
    return [email for email in smtp.messages if email["To"] == OWNER]


def _outbox(cli: Cli) -> list[dict]:
    return [json.loads(line) for line in (cli.home / "outbox.jsonl").read_text().splitlines()]


def test_the_angry_reply_s_notice_is_emailed_to_the_owner_within_the_same_publish(
    embedded_cli: Cli, smtp: SmtpSink, tmp_path: Path
) -> None:
    _setup(embedded_cli, tmp_path, 0.9)
    assert embedded_cli("tick", "--now", "2026-04-06T09:05:00Z").returncode == 0
    assert [email["To"] for email in smtp.wait_for(1)] == [ANN]  # touch 1

    reply = signal("r1", "email.received", "2026-04-07T18:10:00Z", tenant=GYM, sender=ANN, body=ANGRY)
    assert embedded_cli.publish(tmp_path, [reply], "reply").returncode == 0

    [notice] = _to_owner(smtp)  # no tick, no proactive run: the publish that brought her reply told the owner
    assert notice["Subject"] == "Loopline: Win Ann back" and notice["X-Loopline-Notice"] == "escalation"
    text = notice.get_content().replace("\r\n", "\n")
    assert f"They wrote:\n> {ANGRY}" in text
    assert 'task.guidance {"task_id": "ann"}' in text
    [line] = [line for line in _outbox(embedded_cli) if line["kind"] == "escalation"]
    assert (line["quote"], line["emailed"]) == (ANGRY, True)  # the outbox has it too


def test_a_task_entering_review_is_emailed_to_the_owner_and_its_notices_are_one_thread(
    embedded_cli: Cli, smtp: SmtpSink, tmp_path: Path
) -> None:
    _setup(embedded_cli, tmp_path, 0.3)

    [review] = smtp.wait_for(1)
    assert review["To"] == OWNER and review["X-Loopline-Notice"] == "review"
    assert "waits for your review: confidence 0.3" in review.get_content()
    assert 'task.approve {"task_id": "ann"}' in review.get_content()

    approve = command("c2", "task.approve", "2026-04-06T10:00:00Z", tenant=GYM, task_id="ann")
    assert embedded_cli.publish(tmp_path, [approve], "approve").returncode == 0
    assert embedded_cli("tick", "--now", "2026-04-06T10:05:00Z").returncode == 0
    reply = signal("r1", "email.received", "2026-04-07T18:10:00Z", tenant=GYM, sender=ANN, body=ANGRY)
    assert embedded_cli.publish(tmp_path, [reply], "reply").returncode == 0

    first, second = _to_owner(smtp)
    assert (first["X-Loopline-Notice"], second["X-Loopline-Notice"]) == ("review", "escalation")
    assert first["Subject"] == second["Subject"] == "Loopline: Win Ann back"
    assert first["References"].strip() == second["References"].strip() == second["In-Reply-To"].strip()
    assert first["Message-ID"] != second["Message-ID"]


def test_a_notice_the_owner_made_moot_before_it_went_out_is_never_delivered(
    embedded_cli: Cli, smtp: SmtpSink, tmp_path: Path
) -> None:
    approve = command("c2", "task.approve", "2026-04-06T09:10:00Z", tenant=GYM, task_id="ann")
    _setup(embedded_cli, tmp_path, 0.3, approve)  # the owner approved before the review notice was delivered

    assert embedded_cli("tick", "--now", "2026-04-06T09:15:00Z").returncode == 0
    [touch] = smtp.wait_for(1)
    assert touch["To"] == ANN and _to_owner(smtp) == []
    assert [line["kind"] for line in _outbox(embedded_cli) if line["to"] == "user"] == []
