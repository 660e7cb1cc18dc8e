"""What people read, through the `loopline` command: the owner's notices, the follow-ups and reminders
a contact receives by email (a real SMTP server), `tick`'s lines and the audit trail."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import command
from tests.e2e.cli import Cli
from tests.servers import SmtpSink


@pytest.fixture
def cli(embedded_cli: Cli) -> Cli:
    """Embedded only (see `embedded_cli`): the scale path is test_cli_flow1's and the other flows' subject."""
    return embedded_cli


T0 = "2026-03-13T10:00:00Z"


@pytest.fixture
def cli_environ(smtp: SmtpSink) -> dict[str, str]:
    return {"LOOPLINE_SMTP_URL": smtp.url, "LOOPLINE_EMAIL_FROM": "assistant@loopline.example"}


def _notices(cli: Cli) -> list[tuple[str, str]]:
    path = cli.home / "outbox.jsonl"
    lines = [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []
    return [(line["kind"], line["text"]) for line in lines if line["to"] == "user"]


def _body(email: object) -> str:
    return email.get_content().replace("\r\n", "\n")  # type: ignore[attr-defined]


def _read(email: object) -> str:
    """Everything a contact reads in an email: its subject and its text."""
    return f"{email['Subject']}\n{_body(email)}"  # type: ignore[index]


EMAILS = [
    command("m1", "task.create", T0, task_id="t-rahul", title="Schedule meeting with Rahul"),
    command("m2", "action.record", T0, task_id="t-rahul", action="send_email", to="rahul.sharma@company.com",
            to_name="Rahul", subject="Meeting next week?"),
    command("m3", "task.create", T0, task_id="t-legal", title="INTERNAL: chase legal re NDA v3"),
    command("m4", "action.record", T0, task_id="t-legal", action="send_email", to="legal@acme.com"),
]


def test_follow_ups_greet_by_a_given_name_or_neutrally_and_name_no_internal_title_or_id(
    cli: Cli, smtp: SmtpSink, tmp_path: Path
) -> None:
    assert cli.publish(tmp_path, EMAILS, "emails").returncode == 0
    assert cli("tick", "--now", "2026-03-16T10:00:01Z").returncode == 0

    emails = {email["To"]: email for email in smtp.wait_for(2)}
    assert emails["rahul.sharma@company.com"]["Subject"] == "Re: Meeting next week?"
    assert _body(emails["rahul.sharma@company.com"]) == (
        "Hi Rahul,\n\nJust following up on my earlier email. Would you have a moment to reply?\n\nThanks!\n"
    )
    assert emails["legal@acme.com"]["Subject"] == "Following up"
    assert _body(emails["legal@acme.com"]).startswith("Hello,\n\nJust following up on my earlier email.")
    for email in emails.values():
        read = _read(email)
        assert not any(word in read for word in ("t-rahul", "t-legal", "send_email", "Schedule meeting", "INTERNAL"))
        assert "Rahul.sharma" not in read and "Legal" not in read

    assert sorted(_notices(cli)) == [
        ("followup_sent", "'INTERNAL: chase legal re NDA v3': legal@acme.com hasn't replied to my email of "
                          "13 Mar 2026 10:00 UTC. I sent a follow-up and will tell you if there is no reply by "
                          "19 Mar 2026 10:00 UTC."),
        ("followup_sent", "'Schedule meeting with Rahul': Rahul (rahul.sharma@company.com) hasn't replied to my email "
                          "of 13 Mar 2026 10:00 UTC. I sent a follow-up and will tell you if there is no reply by "
                          "19 Mar 2026 10:00 UTC."),
    ]


def test_tick_says_what_it_did_and_counts_it(cli: Cli, tmp_path: Path) -> None:
    assert cli.publish(tmp_path, EMAILS[:2], "email").returncode == 0

    ticked = cli("tick", "--now", "2026-03-16T10:00:01Z")

    assert ticked.returncode == 0, ticked.stderr
    # Embedded, the tick's own drain has the model draft the follow-up and says so; at scale the leader does.
    # So is the proactive run's synthesis (the offline policy: a brief when there is one, the next run in a day).
    sent = [] if cli.scale else [
        "2026-03-16T10:00:01Z  'Schedule meeting with Rahul': sent a follow-up to rahul.sharma@company.com",
        "2026-03-16T10:00:01Z  proactive run for user_xyz: turn 1: 2 tool calls, 1 action taken; next run "
        "2026-03-17T10:00:01Z"]
    assert ticked.stdout.splitlines() == [
        "2026-03-16T10:00:01Z  proactive run for user_xyz: the model is asked (synthesis)",
        "2026-03-16T10:00:01Z  'Schedule meeting with Rahul': no sign of a reply from rahul.sharma@company.com to my "
        "email “Meeting next week?” by 16 Mar 2026 10:00 UTC; drafting a follow-up to rahul.sharma@company.com",
        *sent,
        "2026-03-16T10:00:01Z  tick: 1 passed deadline acted on, 1 proactive run",
    ]
    assert cli("tick", "--now", "2026-03-16T10:00:01Z").stdout.splitlines() == [
        "2026-03-16T10:00:01Z  tick: nothing was due"
    ]


def test_an_unanswered_slack_message_tells_the_owner_what_the_agent_did_and_the_task_stops_waiting(
    cli: Cli, tmp_path: Path
) -> None:
    publish = [
        command("m1", "task.create", T0, task_id="t-ana", title="Get Ana's sign-off"),
        command("m2", "action.record", T0, task_id="t-ana", action="send_slack_dm", slack_user_id="U42",
                channel_id="D42"),
    ]
    assert cli.publish(tmp_path, publish, "slack").returncode == 0
    assert cli.json("tasks", "show", "t-ana")["status"] == "waiting"

    assert cli("tick", "--now", "2026-03-13T14:00:00Z").returncode == 0

    assert _notices(cli) == [
        ("loop_expired", "'Get Ana's sign-off': I have been waiting for a reply from Slack user U42 to my direct "
                         "message since 13 Mar 2026 10:00 UTC, and nothing came by 13 Mar 2026 14:00 UTC. "
                         "What should I do next?"),
    ]
    assert cli.json("tasks", "show", "t-ana")["status"] == "executing"  # waiting for nothing is not waiting
    [ended] = [row for row in cli.json("audit", "t-ana") if row["event"] == "Task.WaitEnded"]
    assert ended["summary"] == "nothing left to wait for; task is executing"
    assert ended["reason"] == "no sign of a reply from Slack user U42 to my direct message, and nothing else to wait for"


def test_a_loop_resolved_by_hand_leaves_the_task_executing_not_waiting(cli: Cli, tmp_path: Path) -> None:
    publish = [
        command("m1", "task.create", T0, task_id="t-pr", title="Land the parser fix"),
        command("m2", "action.record", T0, task_id="t-pr", action="open_pull_request", resource_id="42", repo="acme/api"),
        command("m3", "loop.resolve", "2026-03-14T09:00:00Z", loop_id="t-pr/open_pull_request/1", reason="reviewed in person"),
    ]
    assert cli.publish(tmp_path, publish, "pr").returncode == 0

    task = cli.json("tasks", "show", "t-pr")
    assert (task["status"], task["open_loops"]) == ("executing", 0)
    trail = {row["event"]: row for row in cli.json("audit", "t-pr")}
    assert trail["OpenLoop.Registered"]["summary"] == (
        "waiting for a review of my pull request 42 in acme/api until 15 Mar 2026 10:00 UTC; then: send a reminder"
    )
    assert trail["OpenLoop.Resolved"]["summary"] == "loop resolved by hand"
    assert trail["Task.WaitEnded"]["reason"] == (
        "the wait for a review of my pull request 42 in acme/api was resolved by hand (reviewed in person); "
        "nothing else to wait for"
    )


def test_a_reminder_reaches_the_contact_and_an_expiry_tells_the_tasks_real_history(
    cli: Cli, smtp: SmtpSink, tmp_path: Path
) -> None:
    publish = [
        command("m1", "task.create", T0, task_id="t-dues", title="Collect March dues (member #8812)",
                confidence=0.2, expires_in_days=15),
        command("m2", "task.approve", "2026-03-13T11:00:00Z", task_id="t-dues"),
        command("m3", "action.record", "2026-03-13T12:00:00Z", task_id="t-dues", action="create_todo",
                to="sam@members.example", to_name="Sam", resource_id="todo-9"),
    ]
    assert cli.publish(tmp_path, publish, "dues").returncode == 0
    assert cli("tick", "--now", "2026-03-15T12:00:00Z").returncode == 0  # the to-do's 2 days: a reminder
    assert cli("tick", "--now", "2026-03-17T12:00:00Z").returncode == 0  # 2 more: the owner is asked
    assert cli("tick", "--now", "2026-03-28T10:00:00Z").returncode == 0  # the task's 15 days

    [reminder] = smtp.wait_for(1)
    assert (reminder["To"], reminder["Subject"]) == ("sam@members.example", "A reminder about the to-do")
    assert _body(reminder) == (
        "Hi Sam,\n\nA quick reminder about the to-do, which I sent 2 days ago. Could you let me know once it is done?"
        "\n\nThanks!\n"
    )
    assert "dues" not in _read(reminder).lower() and "8812" not in _read(reminder)
    task = cli.json("tasks", "show", "t-dues")
    reason = ("expired after 15 days: approved by the owner, 1 action by the agent, 1 reminder sent and no answer "
              "received; nothing happened in the last 10 days")
    assert (task["status"], task["status_reason"]) == ("expired", reason)
    assert [text for kind, text in _notices(cli) if kind in ("reminder_sent", "loop_expired", "task_expired")] == [
        "'Collect March dues (member #8812)': still waiting for completion (or an acknowledgment) of the to-do I "
        "created for sam@members.example since 13 Mar 2026 12:00 UTC. I sent Sam (sam@members.example) a reminder "
        "and will tell you if nothing comes by 17 Mar 2026 12:00 UTC.",
        "'Collect March dues (member #8812)': I have been waiting for completion (or an acknowledgment) of the to-do "
        "I created for sam@members.example since 15 Mar 2026 12:00 UTC, and nothing came by 17 Mar 2026 12:00 UTC. "
        "What should I do next?",
        f"Task 'Collect March dues (member #8812)' {reason}.",
    ]
