"""Seed 002 §19's long-running scenarios through the `loopline` command, day by day with simulated time (issue 20):
a member away on vacation, a reply to a dormant task, an urgent payment, a lead back after two months, and a reply
to the wrong task, which goes to the owner and is never routed to another task (embedded; the handlers are the
same at scale)."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from loopline.adapters.smtp import message_id
from loopline.domain.timeutil import format_time, parse_time
from tests.conftest import command, signal
from tests.e2e.cli import Cli

GYM = "iron_temple"
DAY_0 = parse_time("2026-03-02T09:00:00Z")
ANN = "ann@example.com"


@pytest.fixture
def cli(embedded_cli: Cli) -> Cli:
    """Embedded only (see the module's docstring)."""
    return embedded_cli


def day(number: float, minutes: int = 5) -> str:
    return format_time(DAY_0 + timedelta(days=number, minutes=minutes))


def start(cli: Cli, tmp: Path, *tasks: tuple[str, str], approve: tuple[str, ...] = ()) -> None:
    """A gym working on its own, and Ann's tasks (`task_id`, `task_type`), created on day 0."""
    messages = [command("cfg", "tenant.configure", format_time(DAY_0 - timedelta(hours=1)), GYM,
                        execution_mode="limited_auto", owner_email="sam@irontemple.example")]
    messages += [command(f"create-{ref}", "task.create", format_time(DAY_0), GYM, task_id=ref, title=f"{kind} for Ann",
                         task_type=kind, contact=ANN, to_name="Ann", confidence=0.95) for ref, kind in tasks]
    messages += [command(f"approve-{ref}", "task.approve", format_time(DAY_0), GYM, task_id=ref) for ref in approve]
    published(cli, tmp, messages)


def published(cli: Cli, tmp: Path, messages: list[dict[str, Any]]) -> None:
    result = cli.publish(tmp, messages, messages[0]["id"])
    assert result.returncode == 0, result.stderr


def ticks(cli: Cli, *days: float) -> None:
    for number in days:
        result = cli("tick", "--now", day(number))
        assert result.returncode == 0, result.stderr


def outbox(cli: Cli, **match: str) -> list[dict[str, Any]]:
    lines = [json.loads(line) for line in (cli.home / "outbox.jsonl").read_text().splitlines()]
    return [line for line in lines if all(line.get(key) == value for key, value in match.items())]


def emails_sent(cli: Cli, ref: str) -> list[int]:
    """The days of `ref`'s emails to Ann, counted from day 0."""
    return [(parse_time(line["at"]) - DAY_0).days for line in outbox(cli, kind="send_email", task_id=ref)]


def shown(cli: Cli, ref: str) -> dict[str, Any]:
    return cli.json("tasks", "show", ref, "--tenant", GYM)


def outcome(cli: Cli, ref: str) -> tuple[str, str | None]:
    task = shown(cli, ref)
    return task["status"], (task["outreach"]["outcome"] or {}).get("code")


def credited(cli: Cli, ref: str) -> float:
    """The value the task is credited with now: its latest `Task.ValueAttributed`, 0 without one."""
    values = [row["payload"]["value"] for row in cli.json("audit", ref, "--tenant", GYM)
              if row["event"] == "Task.ValueAttributed"]
    return values[-1] if values else 0.0


def observed(cli: Cli, tmp: Path, kind: str, at: str) -> None:
    published(cli, tmp, [signal(f"{kind}-{at}", "outcome.observed", at, GYM, contact=ANN, outcome=kind)])


def test_a_member_away_on_vacation_gets_three_emails_then_is_only_watched_and_her_return_is_credited(
    cli: Cli, tmp_path: Path
) -> None:
    """§19.1: a win-back's `slow_burn` cadence (days 0, 3, 13) goes dormant on day 30; its dormant checks send
    nothing; when Ann rejoins on day 60 the task closes `recovered`, credited to the agent."""
    start(cli, tmp_path, ("back", "win_back"))
    ticks(cli, 0, 3, 13, 29)
    assert emails_sent(cli, "back") == [0, 3, 13]
    ticks(cli, 30)
    assert shown(cli, "back")["status"] == "dormant"
    ticks(cli, 44, 58)
    assert shown(cli, "back")["status"] == "dormant" and len(emails_sent(cli, "back")) == 3

    observed(cli, tmp_path, "reactivation", day(60))

    assert outcome(cli, "back") == ("completed", "recovered")
    assert credited(cli, "back") == 3 * 150  # win_back's revenue multiplier times the default average value
    assert len(emails_sent(cli, "back")) == 3


def test_a_reply_to_a_dormant_task_wakes_it_and_her_rejoining_confirms_the_outcome(cli: Cli, tmp_path: Path) -> None:
    """§19.2: on day 45 Ann answers the day-13 email; the dormant task wakes and closes with what a reply can earn
    (`interested`: a reply is no proof of a reactivation), and her reactivation makes it `recovered`."""
    start(cli, tmp_path, ("back", "win_back"))
    ticks(cli, 0, 3, 13, 30)
    assert shown(cli, "back")["status"] == "dormant"
    [_, _, last] = outbox(cli, kind="send_email", task_id="back")

    published(cli, tmp_path, [signal(
        "reply-45", "email.received", day(45), GYM, sender=ANN, subject="Re: Whenever you're ready",
        in_reply_to=message_id(last["key"], "coach@irontemple.example"),
        body="Hey, sorry I've been traveling. I'm back and want to rejoin, see you Monday!",
    )])
    assert outcome(cli, "back") == ("completed", "interested")
    assert credited(cli, "back") == 0
    observed(cli, tmp_path, "reactivation", day(47))

    assert outcome(cli, "back") == ("completed", "recovered")
    assert credited(cli, "back") == 3 * 150
    assert len(emails_sent(cli, "back")) == 3


def test_an_urgent_payment_is_never_left_dormant_it_goes_to_the_owner_when_its_messages_are_spent(
    cli: Cli, tmp_path: Path
) -> None:
    """§19.3: `payment_recovery` (reviewed first, cadence `urgent`) emails on days 0 and 1, its budget of two, then
    hands the task to the owner with why, instead of waiting or going dormant."""
    start(cli, tmp_path, ("card", "payment_recovery"), approve=("card",))
    ticks(cli, 0, 1, 2, 3)

    assert emails_sent(cli, "card") == [0, 1]
    assert shown(cli, "card")["status"] == "escalated"
    [notice] = outbox(cli, kind="escalation", task_id="card")
    assert "all 2 messages of its budget were sent without a reply" in notice["text"]
    assert {action["command"] for action in notice["actions"]} >= {"task.reply", "task.takeover"}


def test_a_lead_gone_cold_who_walks_in_two_months_later_is_converted(cli: Cli, tmp_path: Path) -> None:
    """§19.4: a `lead_followup` (cadence `patient`: days 0, 5 and 15) goes dormant on day 21 rather than being
    cancelled, so the checkin of day 50 still closes it `converted`."""
    start(cli, tmp_path, ("lead", "lead_followup"))
    ticks(cli, 0, 5, 15, 21)
    assert emails_sent(cli, "lead") == [0, 5, 15]
    assert shown(cli, "lead")["status"] == "dormant"
    ticks(cli, 28, 35, 42, 49)

    observed(cli, tmp_path, "checkin", day(50))

    assert outcome(cli, "lead") == ("completed", "converted")
    assert credited(cli, "lead") == 150
    assert len(emails_sent(cli, "lead")) == 3


def test_a_reply_to_the_wrong_task_goes_to_the_owner_and_is_never_routed_to_the_other_task(
    cli: Cli, tmp_path: Path
) -> None:
    """§19.5: Ann has a payment task and a churn-risk task; she answers the churn email about her card. The churn
    task escalates with her words; the payment task does not answer it and nothing is sent to her."""
    start(cli, tmp_path, ("card", "payment_recovery"), ("churn", "churn_risk"), approve=("card",))
    ticks(cli, 0, 1, 2)  # one email a day to one contact: the payment's two first, then the churn task's
    [churn_email] = outbox(cli, kind="send_email", task_id="churn")
    emails = len(outbox(cli, kind="send_email"))

    words = "My card was stolen, I'm getting a new one."
    published(cli, tmp_path, [signal(
        "reply-card", "email.received", day(2, minutes=600), GYM, sender=ANN, subject="Re: Checking in",
        in_reply_to=message_id(churn_email["key"], "coach@irontemple.example"), body=words,
    )])

    assert shown(cli, "churn")["status"] == "escalated"
    [notice] = outbox(cli, kind="escalation", task_id="churn")
    assert notice["quote"] == words
    card = shown(cli, "card")
    assert card["status"] == "waiting" and words in [item["data"]["body"] for item in card["inbox_items"]]
    assert outbox(cli, kind="escalation", task_id="card") == []
    assert len(outbox(cli, kind="send_email")) == emails
