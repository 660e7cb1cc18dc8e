"""Done-when 4 of issue 21 through the `loopline` command: a task's routine every 30 minutes runs on the ticks,
tells the owner only when its result changes and keeps each output in the task's memory; a routine whose action
cannot be carried out fails on the ticks and pauses after its second failure. All of it in `loopline routines` and
`loopline audit`."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import command
from tests.e2e.cli import Cli

GYM = "iron_temple"


@pytest.fixture
def cli(embedded_cli: Cli) -> Cli:
    """Embedded only (see `embedded_cli`): the routines run in the tick's step, the same code at scale."""
    return embedded_cli


def test_a_routine_every_30_minutes_runs_on_the_ticks_notifies_on_change_and_pauses_after_two_failures(
    cli: Cli, tmp_path: Path
) -> None:
    result = cli.publish(tmp_path, [
        command("c0", "tenant.configure", "2026-05-04T08:00:00Z", GYM, execution_mode="limited_auto"),
        command("c1", "task.create", "2026-05-04T09:00:00Z", GYM, task_id="ci", title="Keep the booking site up"),
        command("c2", "task.create", "2026-05-04T09:00:00Z", GYM, task_id="ann", title="Text Ann her class times",
                contact="ann@example.com"),
        command("c3", "routine.create", "2026-05-04T09:00:00Z", GYM, routine_id="site-check", action="call_webhook",
                params={"event": "site.check"}, kind="scheduled", task_id="ci", interval_minutes=30),
        command("c4", "routine.create", "2026-05-04T09:00:00Z", GYM, routine_id="class-times", action="send_sms",
                params={"to": "+4915112345678", "body": "Your classes: Mon 7pm, Thu 7pm"}, kind="scheduled", task_id="ann",
                interval_minutes=30),
    ], "setup")
    assert result.returncode == 0, result.stdout + result.stderr
    for now in ("2026-05-04T09:30:00Z", "2026-05-04T09:35:00Z", "2026-05-04T10:01:00Z"):
        assert cli("tick", "--now", now).returncode == 0

    routines = {row["routine_id"]: row for row in cli.json("routines", "--tenant", GYM, "--json")}
    assert {k: routines["site-check"][k] for k in ("task_id", "schedule", "status", "runs", "last_outcome")} == {
        "task_id": "ci", "schedule": "every 30 min", "status": "active", "runs": 2, "last_outcome": "success"}
    assert routines["site-check"]["next_run_at"] == "2026-05-04T10:31:00Z"
    assert {k: routines["class-times"][k] for k in ("status", "runs", "failures_in_a_row", "last_outcome")} == {
        "status": "paused", "runs": 2, "failures_in_a_row": 2, "last_outcome": "failure"}
    assert "no sms_url" in routines["class-times"]["last_output"]
    assert "site-check" in cli("routines").stdout

    files = [f["path"] for f in cli.json("tasks", "files", "ci", "--tenant", GYM)["files"]]
    outputs = sorted(path for path in files if path.startswith("workflows/site-check_"))
    assert len(outputs) == 2
    assert "took call_webhook on ci" in cli("tasks", "files", "ci", outputs[0], "--tenant", GYM).stdout

    trail = cli("audit", "ci", "--tenant", GYM).stdout
    assert trail.count("routine run success; the owner is told") == 1  # the second run's result was the same
    assert trail.count("routine run success; the next") == 1
    paused = cli("audit", "ann", "--tenant", GYM).stdout
    assert "routine paused" in paused and "2 consecutive failures" in paused
