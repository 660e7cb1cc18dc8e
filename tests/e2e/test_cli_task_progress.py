"""What `loopline tasks show` and `loopline tenants` print for a task Loopline works: budgets used and
left, the cadence position, the next action and its time, the outcome, the conversation (embedded; the
scale path is the flows' subject)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import command, signal
from tests.e2e.cli import Cli


@pytest.fixture
def cli(embedded_cli: Cli) -> Cli:
    """Embedded only (see `embedded_cli`): the scale path is test_cli_flow1's and the other flows' subject."""
    return embedded_cli


GYM = "iron_temple"
MAYA = "maya@example.com"
CONFIGURE = command(
    "gym-1", "tenant.configure", "2026-04-06T08:00:00Z", GYM, name="Iron Temple", execution_mode="limited_auto",
    profile={"typical_greeting": "Hey", "sign_off": "See you on the floor, Sam"},
)
CREATE = command(
    "gym-2", "task.create", "2026-04-06T09:00:00Z", GYM, task_id="churn-maya", title="Bring Maya back",
    task_type="churn_risk", contact=MAYA, to_name="Maya", confidence=0.9,
)
REPLY = signal(
    "mail-maya-1", "email.received", "2026-04-15T18:30:00Z", GYM, sender=MAYA,
    body="Thanks Sam! I'll come to the Thursday evening class, see you then.",
)


def show(cli: Cli, now: str) -> dict:
    return cli.json("tasks", "show", "churn-maya", "--tenant", GYM, "--now", now)


def test_tasks_show_follows_budgets_cadence_next_action_and_outcome(cli: Cli, tmp_path: Path) -> None:
    assert cli.publish(tmp_path, [CONFIGURE, CREATE], "start").returncode == 0
    ready = show(cli, "2026-04-06T09:00:00Z")["outreach"]
    assert ready["next_action"] == {"what": "touch 1 of 3", "at": "2026-04-06T09:00:00Z",
                                    "reason": "ready: the next tick works it"}

    assert cli("tick", "--now", "2026-04-06T09:05:00Z").returncode == 0
    first = show(cli, "2026-04-07T09:05:00Z")["outreach"]
    assert (first["cadence"], first["position"]) == ("standard", "touch 1 of 3")
    assert first["budget"]["messages"] == {"budget": 3, "used": 1, "left": 2}
    assert first["budget"]["turns"] == {"budget": 6, "used": 0, "left": 6}
    assert first["budget"]["days"] == {"budget": 14, "used": 1, "left": 13, "ends_at": "2026-04-20T09:00:00Z"}
    assert first["next_action"] == {"what": "touch 2 of 3", "at": "2026-04-09T09:05:00Z", "reason": None}
    text = cli("tasks", "show", "churn-maya", "--now", "2026-04-07T09:05:00Z").stdout
    assert "cadence: standard, touch 1 of 3" in text
    assert "messages: 1 used, 2 left of 3" in text and "days: 1 used, 13 left of 14" in text
    assert "next action: 2026-04-09T09:05:00Z: touch 2 of 3" in text

    assert cli.publish(tmp_path, [REPLY], "reply").returncode == 0
    closed = show(cli, "2026-04-16T00:00:00Z")
    assert closed["status"] == "completed"
    assert closed["outreach"]["outcome"] == {
        "code": "verbal_commitment", "kind": "positive", "provisional": True, "label": "Verbal Commitment",
        "next_step": "Look out for them at the class or day they named, and welcome them back in person.",
    }
    assert closed["outreach"]["budget"]["turns"]["used"] == 1 and closed["outreach"]["next_action"] is None
    assert [turn["author"] for turn in closed["conversation"]] == ["system", "agent", "contact", "system"]
    assert closed["conversation"][2]["text"] == REPLY["data"]["body"]
    text = cli("tasks", "show", "churn-maya").stdout
    assert "outcome: verbal_commitment — Verbal Commitment (positive, provisional)" in text
    assert "status: completed (outcome verbal_commitment)" in text
    assert "your next step: Look out for them at the class or day they named" in text
    assert "I'll come to the Thursday evening class" in text


def test_tasks_list_shows_the_outcome_beside_the_status_and_filters_by_outcome_and_contact(cli: Cli, tmp_path: Path) -> None:
    assert cli.publish(tmp_path, [CONFIGURE, CREATE], "start").returncode == 0
    assert cli("tick", "--now", "2026-04-06T09:05:00Z").returncode == 0
    assert cli.publish(tmp_path, [REPLY], "reply").returncode == 0

    [row] = cli.json("tasks", "list", "--outcome", "verbal_commitment", "--contact", "Maya@Example.com")
    assert (row["task_id"], row["status"], row["outcome"]) == ("churn-maya", "completed", "verbal_commitment")
    assert cli.json("tasks", "list", "--outcome", "unresponsive") == []
    assert cli.json("tasks", "list", "--contact", "leo@example.com") == []
    table = cli("tasks", "list").stdout
    assert " outcome " in table and " contact " in table and "verbal_commitment" in table
    unknown = cli("tasks", "list", "--outcome", "came_back")
    assert unknown.returncode == 2
    assert "--outcome: no task type has the outcome 'came_back'; the outcomes are" in unknown.stderr


def test_tenants_show_what_was_configured_and_the_defaults_for_the_rest(cli: Cli, tmp_path: Path) -> None:
    assert cli.publish(tmp_path, [CONFIGURE], "configure").returncode == 0
    shown = cli.json("tenants", "show", GYM)
    assert shown["settings"]["execution_mode"] == "limited_auto" and shown["settings"]["member_weekly_limit"] == 3
    assert shown["configured"] == ["execution_mode", "name", "profile"]
    assert shown["settings"]["profile"] == {"typical_greeting": "Hey", "sign_off": "See you on the floor, Sam"}
    text = cli("tenants", "show", GYM).stdout
    assert "execution_mode: limited_auto\n" in text and "member_weekly_limit: 3  (default)" in text
    assert [row["tenant"] for row in cli.json("tenants", "list")] == [GYM]

    never = cli("tenants", "show", "nobody")
    assert never.returncode == 0 and "was never configured" in never.stdout and "execution_mode: manual  (default)" in never.stdout


def test_a_task_with_a_pending_wake_up_reads_waiting_until_it_wakes(cli: Cli, tmp_path: Path) -> None:
    create = command("m1", "task.create", "2026-03-13T10:00:00Z", task_id="t", title="Check the invoice")
    wake = {**command("m2", "task.wake", "2026-03-13T10:00:00Z"),
            "data": {"task_id": "t", "at": "2026-03-14T09:00:00Z", "reason": "the invoice is due"}}
    assert cli.publish(tmp_path, [create, wake], "wake").returncode == 0
    assert [row["task_id"] for row in cli.json("tasks", "list", "--status", "waiting")] == ["t"]

    assert cli("tick", "--now", "2026-03-14T09:00:01Z").returncode == 0
    assert cli.json("tasks", "show", "t")["status"] == "executing"
