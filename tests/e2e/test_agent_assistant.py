"""Seed 000's assistant, end to end through the `loopline` command (embedded): an email loop
that passes its deadline gets a follow-up drafted through the model port (the offline policy, then
the Anthropic adapter on a local Messages API server), sent once to a real SMTP server, in the
email's thread, with the decision in the audit trail."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.conftest import command, signal
from tests.e2e.agent import MODEL, body
from tests.e2e.cli import Cli
from tests.messages_api import MessagesApi
from tests.servers import SmtpSink


@pytest.fixture
def cli(embedded_cli: Cli) -> Cli:
    """Embedded only (see `embedded_cli`): the leader drafting through the model and delivering at scale is
    test_no_reply_lost's and the scale tests' subject."""
    return embedded_cli


RAHUL = "rahul@company.com"
ORIGINAL_ID = "<CAF-scheduling-1@mail.company.com>"
FLOW_1 = [
    command("m1", "task.create", "2026-03-13T10:00:00Z", task_id="task_abc", title="Schedule meeting with Rahul",
            task_type="meeting_scheduling", contact=RAHUL),
    command("m2", "action.record", "2026-03-13T10:00:00Z", task_id="task_abc", action="send_email", to=RAHUL,
            to_name="Rahul", thread_id="gmail_thread_xyz", subject="Meeting next week?", message_id=ORIGINAL_ID,
            summary="Sent scheduling email to Rahul"),
]
AFTER_DEADLINE = "2026-03-16T10:00:01Z"
EMAIL_FROM = "assistant@loopline.example"
MODEL_DRAFT = {
    "subject": "Re: Meeting next week?", "body": "Hi Rahul,\n\nDoes Thursday or Friday afternoon suit you?\n\nBest",
    "confidence": 0.82, "reasoning": "Rahul has not answered in three days",
}


@pytest.fixture
def cli_environ(mail_and_model_environ: dict[str, str]) -> dict[str, str]:
    return mail_and_model_environ


def followup_decisions(cli: Cli) -> list[dict[str, Any]]:
    return [
        row["payload"] for row in cli.json("audit", "task_abc")
        if row["event"] == "Task.DecisionRecorded" and row["payload"]["point"] == "draft_message"
    ]


def run_flow_past_the_deadline(cli: Cli, tmp_path: Path, smtp: SmtpSink) -> Any:
    assert cli.publish(tmp_path, FLOW_1, "start").returncode == 0
    for _ in range(2):  # a repeated tick drafts and sends nothing more
        result = cli("tick", "--now", AFTER_DEADLINE)
        assert result.returncode == 0, result.stderr
    [email] = smtp.wait_for(1)
    assert len(smtp.messages) == 1
    assert email["To"] == RAHUL and email["In-Reply-To"] == ORIGINAL_ID
    return email


def test_an_overdue_email_gets_one_follow_up_drafted_by_the_offline_policy(
    cli: Cli, smtp: SmtpSink, tmp_path: Path
) -> None:
    email = run_flow_past_the_deadline(cli, tmp_path, smtp)

    assert "Rahul" in email.get_content()
    [decision] = followup_decisions(cli)
    assert (decision["adapter"], decision["model"]) == ("offline", "offline-policy-v1")
    reply = signal("g1", "email.received", "2026-03-17T09:00:00Z", sender=RAHUL, thread_id="gmail_thread_xyz")
    assert cli.publish(tmp_path, [reply], "reply").returncode == 0
    assert len(smtp.messages) == 1


def test_an_overdue_email_gets_the_follow_up_the_model_wrote(
    cli: Cli, smtp: SmtpSink, messages_api: MessagesApi, tmp_path: Path
) -> None:
    email = run_flow_past_the_deadline(cli, tmp_path, smtp)

    assert body(email) == MODEL_DRAFT["body"]
    assert messages_api.forced_tools() == ["draft_message"]
    trail = cli("audit", "task_abc").stdout
    assert MODEL in trail and "0.82" in trail and MODEL_DRAFT["reasoning"] in trail
