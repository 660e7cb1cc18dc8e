"""Actions and signals as documented contracts, and owner decisions, through the `loopline` command
(embedded; the scale path is the flows' subject)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import command, signal
from tests.e2e.cli import Cli


@pytest.fixture
def cli(embedded_cli: Cli) -> Cli:
    """Embedded only (see `embedded_cli`): the scale path is test_cli_flow1's and the other flows' subject."""
    return embedded_cli


T0 = "2026-03-13T10:00:00Z"
LATER = "2026-03-13T11:00:00Z"


def create(task_id: str, **fields: object) -> dict:
    return command(f"create-{task_id}", "task.create", T0, task_id=task_id, title=f"Task {task_id}", **fields)


def loops(cli: Cli) -> dict[str, dict]:
    return {row["loop_id"]: row for row in cli.json("loops", "list")}


def test_misspelled_action_is_rejected_naming_the_known_actions(cli: Cli, tmp_path: Path) -> None:
    typo = command("a1", "action.record", T0, task_id="t1", action="send_emial", to="rahul@company.com")
    result = cli.publish(tmp_path, [create("t1"), typo], "typo")

    assert result.returncode == 1
    assert "line 2: data.action: unknown action 'send_emial'; known actions: send_email, create_calendar_invite, " \
           "send_contract, open_pull_request, send_slack_dm, create_todo." in " ".join(result.stderr.split())
    assert cli.json("loops", "list") == []
    assert cli.json("tasks", "show", "t1")["actions"] == 0


def test_contract_with_match_fields_is_resolved_only_by_its_own_document(cli: Cli, tmp_path: Path) -> None:
    contracts = [
        command(f"c-{who}", "action.record", T0, task_id=f"lease-{who}", action="send_contract", to=f"{who}@acme.com",
                source="docusign", trigger_name="envelope_completed", match_fields={"envelope_id": f"env-{who}"})
        for who in ("ana", "ben")
    ]
    assert cli.publish(tmp_path, [create("lease-ana"), create("lease-ben"), *contracts], "contracts").returncode == 0
    ana_signs = signal("w1", "webhook.received", LATER, source="docusign", trigger_name="envelope_completed",
                       payload={"envelope_id": "env-ana", "status": "completed"})
    assert cli.publish(tmp_path, [ana_signs], "signed").returncode == 0

    rows = loops(cli)
    assert rows["lease-ana/send_contract/1"]["resolved_by"] == "signal_match"
    assert not rows["lease-ben/send_contract/1"]["resolved"]
    assert rows["lease-ben/send_contract/1"]["watch"]["match_fields"] == {"envelope_id": "env-ben"}


def test_slack_dm_ts_becomes_the_loops_after_ts(cli: Cli, tmp_path: Path) -> None:
    dm = command("d1", "action.record", T0, task_id="t1", action="send_slack_dm", slack_user_id="U1", channel_id="D1",
                 ts="1710000000.000100", text="Can you review the deck?")
    assert cli.publish(tmp_path, [create("t1"), dm], "dm").returncode == 0
    [loop] = cli.json("loops", "list", "--open")
    assert loop["watch"] == {"slack_user_id": "U1", "channel_id": "D1", "after_ts": "1710000000.000100"}

    own_message = signal("s1", "slack.message", LATER, slack_user_id="U1", channel_id="D1", ts="1710000000.000100")
    assert cli.publish(tmp_path, [own_message], "echo").returncode == 0
    assert cli.json("loops", "list", "--open") != []
    answer = signal("s2", "slack.message", LATER, slack_user_id="U1", channel_id="D1", ts="1710000050.000200", text="yes")
    assert cli.publish(tmp_path, [answer], "answer").returncode == 0
    assert cli.json("loops", "list", "--open") == []


def test_github_event_with_extra_fields_is_accepted_and_stored_as_it_came(cli: Cli, tmp_path: Path) -> None:
    pr = command("p1", "action.record", T0, task_id="t1", action="open_pull_request", repo="acme/api", resource_id="412")
    assert cli.publish(tmp_path, [create("t1"), pr], "pr").returncode == 0
    review = signal("g1", "github.event", LATER, event_type="pull_request_review", repo="acme/api", resource_id="412",
                    state="approved", reviewer="priya")
    result = cli.publish(tmp_path, [review], "review")

    assert result.returncode == 0, result.stderr
    assert cli.json("loops", "list", "--open") == []
    [item] = cli.json("tasks", "show", "t1")["inbox_items"]
    assert (item["data"]["state"], item["data"]["reviewer"]) == ("approved", "priya")


def test_task_update_cannot_approve_or_resume_only_the_owner_can(cli: Cli, tmp_path: Path) -> None:
    awaiting_review = create("review-me", confidence=0.2)
    working = create("stuck")
    escalate = command("u0", "task.update", T0, task_id="stuck", status="escalated", notes="member asked about refunds")
    assert cli.publish(tmp_path, [awaiting_review, working, escalate], "setup").returncode == 0
    assert cli.json("tasks", "show", "review-me")["status"] == "pending_review"
    assert cli.json("tasks", "show", "stuck")["status"] == "escalated"

    approve = command("u1", "task.update", LATER, task_id="review-me", status="ready", notes="looks fine")
    resume = command("u2", "task.update", LATER, task_id="stuck", status="executing", notes="carrying on")
    result = cli.publish(tmp_path, [approve, resume], "owner-decisions")

    if not cli.scale:  # at scale the workers apply commands after publish has returned
        said = " ".join(result.stderr.split())  # as printed, wrapped to the terminal
        assert result.returncode == 1
        assert "message u1 (task.update): task.update cannot move task review-me from pending_review to ready; " \
               "only the owner approves: use task.approve" in said
        assert "message u2 (task.update): task.update cannot move task stuck from escalated to executing; " \
               "only owner guidance resumes: use task.guidance" in said
    assert cli.json("tasks", "show", "review-me")["status"] == "pending_review"
    assert cli.json("tasks", "show", "stuck")["status"] == "escalated"
    refusals = [row["reason"] for row in cli.json("audit", "review-me") if row["event"] == "InboundMessage.Rejected"]
    assert refusals == ["task.update cannot move task review-me from pending_review to ready; only the owner approves: use task.approve"]

    owner = [command("o1", "task.approve", LATER, task_id="review-me"),
             command("o2", "task.guidance", LATER, task_id="stuck", text="offer a pause instead")]
    assert cli.publish(tmp_path, owner, "owner").returncode == 0
    assert cli.json("tasks", "show", "review-me")["status"] == "ready"
    assert cli.json("tasks", "show", "stuck")["status"] == "executing"
