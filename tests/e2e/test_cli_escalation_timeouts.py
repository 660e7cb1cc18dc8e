"""Issue 20's escalation handoff through the `loopline` command on the embedded deployment, with a real SMTP
server: an escalation shows its context in `tasks show`, and left alone the owner gets its 48 h reminder and the
task is cancelled at 7 days (done-when 3)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import command, signal
from tests.e2e.cli import Cli
from tests.servers import SmtpSink

GYM = "iron_temple"
OWNER = "sam@irontemple.example"
ANN = "ann@example.com"
QUESTION = "Lovely! Is the discount still on?"


@pytest.fixture
def cli_environ(smtp: SmtpSink) -> dict[str, str]:
    return {"LOOPLINE_SMTP_URL": smtp.url, "LOOPLINE_EMAIL_FROM": "coach@irontemple.example"}


def _tick(cli: Cli, *times: str) -> None:
    for now in times:
        assert cli("tick", "--now", now).returncode == 0


def test_an_escalation_left_alone_is_reminded_at_48_hours_and_cancelled_at_7_days(
    embedded_cli: Cli, smtp: SmtpSink, tmp_path: Path
) -> None:
    cli = embedded_cli
    setup = [command("c1", "tenant.configure", "2026-05-04T08:00:00Z", GYM, execution_mode="limited_auto",
                     owner_email=OWNER),
             command("c2", "task.create", "2026-05-04T09:00:00Z", GYM, task_id="ann", title="Win Ann back",
                     task_type="churn_risk", contact=ANN, to_name="Ann", confidence=0.9)]
    assert cli.publish(tmp_path, setup, "setup").returncode == 0
    _tick(cli, "2026-05-04T09:05:00Z")  # touch 1
    question = signal("s1", "email.received", "2026-05-05T10:00:00Z", GYM, sender=ANN, subject="Re: Checking in",
                      body=QUESTION)
    assert cli.publish(tmp_path, [question], "ann").returncode == 0

    shown = cli.json("tasks", "show", "ann", "--tenant", GYM)
    assert shown["status"] == "escalated"
    handoff = shown["escalation"]
    assert handoff["question"] == QUESTION and handoff["tried"]["touches"] == 1
    assert (handoff["remind_at"], handoff["cancel_at"]) == ("2026-05-07T10:00:00Z", "2026-05-12T10:00:00Z")
    printed = cli("tasks", "show", "ann", "--tenant", GYM).stdout
    assert "Left alone, you are reminded 7 May 2026 10:00 UTC and it is cancelled 12 May 2026 10:00 UTC." in printed

    _tick(cli, "2026-05-07T09:59:00Z", "2026-05-07T10:00:00Z", "2026-05-08T10:00:00Z")
    reminders = [e for e in smtp.messages if e["To"] == OWNER and e["X-Loopline-Notice"] == "escalation_reminder"]
    assert len(reminders) == 1
    assert "has waited for your decision since 5 May 2026 10:00 UTC" in reminders[0].get_content()
    assert cli.json("tasks", "show", "ann", "--tenant", GYM)["status"] == "escalated"

    _tick(cli, "2026-05-12T10:00:00Z")
    closed = cli.json("tasks", "show", "ann", "--tenant", GYM)
    assert (closed["status"], closed["outcome"], closed["escalation"]) == ("cancelled", "escalated_unresolved", None)
    trail = cli("audit", "ann", "--tenant", GYM).stdout
    assert "escalation_timeout: escalated 5 May 2026 10:00 UTC and not addressed within 7 days" in trail
