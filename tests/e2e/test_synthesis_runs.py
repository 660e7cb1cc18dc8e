"""Done-when 1 of issue 21 through the CLI: a synthesis run on the Messages API asks four actions, three are done,
the fourth's tool_result says why it was refused, and the model's next turn schedules the next run inside the clamp;
with the offline policy the same run sends the deterministic morning brief. Both in `loopline audit proactive-run`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.conftest import command
from tests.e2e.cli import Cli
from tests.messages_api import MessagesApi, Reply

EMAIL_FROM = "assistant@loopline.example"
MODEL_DRAFT = {"subject": "Hello", "body": "Hi", "confidence": 0.9, "reasoning": "unused here"}
TENANT = "user_xyz"
CREATE = [command("m1", "task.create", "2026-03-13T10:00:00Z", task_id="lease", title="Renew the office lease",
                  expires_in_days=1)]
RUN_AT = "2026-03-13T11:00:00Z"


@pytest.fixture
def cli(embedded_cli: Cli) -> Cli:
    return embedded_cli


@pytest.fixture
def cli_environ(mail_and_model_environ: dict[str, str]) -> dict[str, str]:
    return mail_and_model_environ


def run_trail(cli: Cli) -> list[dict[str, Any]]:
    return cli.json("audit", "proactive-run", "--tenant", TENANT)


def first_run(cli: Cli, tmp_path: Path) -> list[dict[str, Any]]:
    assert cli.publish(tmp_path, CREATE, "create").returncode == 0
    result = cli("tick", "--now", RUN_AT)
    assert result.returncode == 0, result.stderr
    return run_trail(cli)


def test_four_actions_asked_three_done_the_fourth_refused_with_why_and_the_next_run_scheduled(
    cli: Cli, messages_api: MessagesApi, tmp_path: Path,
) -> None:
    messages_api.script_turns(
        Reply(calls=(("send_brief", {"text": "The lease is due tomorrow."}),
                     ("create_task", {"task_id": "call-landlord", "title": "Call the landlord", "priority": "low"}),
                     ("notify", {"text": "The lease renewal needs your signature."}),
                     ("notify", {"text": "And one more thing."}))),
        Reply(calls=(("schedule_next_run", {"in_hours": 0.1, "reason": "check the signature soon"}),)),
    )
    trail = first_run(cli, tmp_path)
    turns = messages_api.turns()
    assert len(turns) == 2
    results = turns[1]["json"]["messages"][-1]["content"]
    assert [result["is_error"] for result in results] == [False, False, False, True]
    assert "action budget spent" in results[3]["content"]
    events = [row["event"] for row in trail]
    assert events.count("ProactiveRun.ActionTaken") == 3 and events.count("ProactiveRun.ActionRefused") == 1
    [scheduled] = [row for row in trail if row["event"] == "ProactiveRun.NextRunScheduled"]
    assert scheduled["summary"].startswith("next run at 2026-03-13T11:30:00Z")  # 6 minutes asked, clamped to 30
    [recorded] = [row for row in trail if row["event"] == "ProactiveRun.RunRecorded"]
    assert recorded["payload"]["mode"] == "synthesis" and recorded["payload"]["fallback_used"] is False
    created = cli.json("audit", "call-landlord", "--tenant", TENANT)
    assert created[0]["payload"]["trigger_type"] == "synthesis"


def test_the_offline_policy_sends_the_deterministic_morning_brief(cli: Cli, tmp_path: Path) -> None:
    trail = first_run(cli, tmp_path)
    [brief] = [row for row in trail if row["event"] == "ProactiveRun.ActionTaken"]
    assert brief["summary"] == "synthesis action send_brief"
    assert "Morning brief. due soon (1): 'Renew the office lease' due" in brief["reason"]
    [recorded] = [row for row in trail if row["event"] == "ProactiveRun.RunRecorded"]
    assert recorded["payload"]["mode"] == "synthesis"
