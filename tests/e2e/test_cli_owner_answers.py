"""The owner answers, through the `loopline` command and a real SMTP server: an edited draft is what the member
receives, the owner's own reply arrives in the task's thread, and a takeover ends the agent's part; each shows
in `loopline audit`."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import command, signal
from tests.e2e.cli import Cli
from tests.servers import SmtpSink

GYM = "iron_temple"
ANN = "ann@example.com"


@pytest.fixture
def cli(embedded_cli: Cli) -> Cli:
    """Embedded only (see `embedded_cli`): what happens after the edge is the same code at scale."""
    return embedded_cli


@pytest.fixture
def cli_environ(smtp: SmtpSink) -> dict[str, str]:
    return {"LOOPLINE_SMTP_URL": smtp.url, "LOOPLINE_EMAIL_FROM": "coach@irontemple.example"}


def _publish(cli: Cli, tmp_path: Path, name: str, *messages: dict) -> str:
    result = cli.publish(tmp_path, list(messages), name)
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


def test_the_member_receives_the_owners_edited_draft_then_the_owners_reply_in_the_same_thread(
    cli: Cli, smtp: SmtpSink, tmp_path: Path
) -> None:
    _publish(cli, tmp_path, "setup",
             command("c1", "tenant.configure", "2026-05-04T08:00:00Z", GYM, execution_mode="limited_auto",
                     profile={"display_name": "Iron Temple", "sign_off": "Sam"}),
             command("c2", "task.create", "2026-05-04T09:00:00Z", GYM, task_id="ann", title="Win Ann back",
                     task_type="churn_risk", contact=ANN, to_name="Ann", confidence=0.5))
    assert cli.json("tasks", "show", "ann", "--tenant", GYM)["status"] == "pending_review"
    edited = {"subject": "Your Saturday spot", "body": "Hi Ann, I kept your Saturday 9am spot. Sam"}
    _publish(cli, tmp_path, "approve", command("c3", "task.approve", "2026-05-04T10:00:00Z", GYM, task_id="ann",
                                               draft=edited))
    assert cli("tick", "--now", "2026-05-04T10:01:00Z").returncode == 0

    [first] = smtp.wait_for(1)
    assert (first["To"], first["Subject"], first.get_content().strip()) == (ANN, edited["subject"], edited["body"])

    _publish(cli, tmp_path, "ann", signal("s1", "email.received", "2026-05-05T18:10:00Z", GYM, sender=ANN,
                                          subject="Re: Your Saturday spot", body="Lovely! Is the discount still on?"))
    assert cli.json("tasks", "show", "ann", "--tenant", GYM)["status"] == "escalated"  # a question: the owner answers
    _publish(cli, tmp_path, "reply", command("c4", "task.reply", "2026-05-05T19:00:00Z", GYM, task_id="ann",
                                             body="Yes Ann, 20% off until June. See you Saturday!"))

    first, answer = smtp.wait_for(2)
    assert answer.get_content().strip() == "Yes Ann, 20% off until June. See you Saturday!"
    assert (answer["Subject"], answer["In-Reply-To"], answer["References"]) == (
        "Re: Your Saturday spot", first["Message-ID"], first["Message-ID"])
    shown = cli.json("tasks", "show", "ann", "--tenant", GYM)
    assert shown["status"] == "waiting"  # her next reply is the agent's again
    conversation = cli("tasks", "files", "ann", "conversation.md", "--tenant", GYM).stdout
    assert "· owner\n\nWrote to ann@example.com:\n\nSubject: Re: Your Saturday spot" in conversation

    _publish(cli, tmp_path, "takeover", command("c5", "task.takeover", "2026-05-06T09:00:00Z", GYM, task_id="ann",
                                                reason="booked her in at the desk"))
    closed = cli.json("tasks", "show", "ann", "--tenant", GYM)
    assert closed["status"] == "completed"
    trail = cli("audit", "ann", "--tenant", GYM).stdout
    for line in ("owner wrote the first message: Your Saturday spot", "owner did send_email",
                 "owner wrote to the contact; task is executing", "outcome owner_handled (neutral)",
                 "booked her in at the desk"):
        assert line in trail, trail

    # The owner's word on the outcome: each close is evaluated, an override is evaluated again, a rating is kept.
    _publish(cli, tmp_path, "word",
             command("c6", "task.override_outcome", "2026-05-07T09:00:00Z", GYM, task_id="ann", outcome="retained",
                     reason="she checked in Saturday"),
             command("c7", "task.rate", "2026-05-07T09:01:00Z", GYM, task_id="ann", rating="up", note="right call"))
    goal = cli.json("tasks", "show", "ann", "--tenant", GYM)["goal"]
    assert [(e["outcome"], e["outcome_score"]) for e in goal["evaluations"]] == [("owner_handled", 0), ("retained", 100)]
    assert goal["evaluations"][-1]["budget"]["messages_used"] == 2
    assert [(word["what"], word["by"], word["why"]) for word in goal["owner"]] == [
        ("override", "owner", "she checked in Saturday"), ("rating", "owner", "right call")]
    shown = cli("tasks", "show", "ann", "--tenant", GYM).stdout
    assert "evaluation: retained scores 100/100 (retained (positive): the goal was reached); used 2/3 messages" in shown
