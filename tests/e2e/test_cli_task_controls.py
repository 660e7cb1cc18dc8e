"""Task controls through the command (embedded): a paused task sends nothing at the tick, its resume hands the held
step back so the next tick sends, and run-now is refused while paused; each control is in `loopline audit`."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import command
from tests.e2e.cli import Cli

T0 = "2026-03-02T14:00:00Z"
GYM = "renegade"


def test_pause_resume_and_run_now_through_the_cli(embedded_cli: Cli, tmp_path: Path) -> None:
    cli = embedded_cli
    start = [command("cfg", "tenant.configure", "2026-03-02T13:00:00Z", GYM, execution_mode="limited_auto"),
             command("c1", "task.create", T0, GYM, task_id="ann", title="Win Ann back", task_type="churn_risk",
                     contact="ann@example.com", confidence=0.95, draft={"subject": "We miss you", "body": "Hi Ann!"}),
             command("p1", "task.pause", T0, GYM, task_id="ann", reason="the owner calls Ann herself first")]
    assert cli.publish(tmp_path, start, "start").returncode == 0
    assert cli("tick", "--now", "2026-03-02T14:05:00Z").returncode == 0
    shown = cli.json("tasks", "show", "ann", "--json")
    assert shown["outreach"]["touch"] == 0
    assert shown["pause"] == {"by": "owner", "reason": "the owner calls Ann herself first", "since": T0}

    refused = cli.publish(tmp_path, [command("r1", "task.run_now", "2026-03-02T14:06:00Z", GYM, task_id="ann")], "run")
    assert refused.returncode == 1 and "task ann is paused" in " ".join(refused.stderr.split())
    resumed = [command("p2", "task.resume", "2026-03-02T14:07:00Z", GYM, task_id="ann", reason="she did not pick up")]
    assert cli.publish(tmp_path, resumed, "resume").returncode == 0
    assert cli("tick", "--now", "2026-03-02T14:10:00Z").returncode == 0
    shown = cli.json("tasks", "show", "ann", "--json")
    assert shown["outreach"]["touch"] == 1 and shown["pause"] is None

    ran = [command("r2", "task.run_now", "2026-03-02T14:11:00Z", GYM, task_id="ann", reason="write again today")]
    assert cli.publish(tmp_path, ran, "run-now").returncode == 0
    trail = [(row["event"], row["summary"]) for row in cli.json("audit", "ann")]
    assert ("TaskControl.Paused", "task paused by owner: it sends nothing and asks no model") in trail
    assert ("TaskControl.WorkHeld", "held while the task is paused: its task_step") in trail
    assert ("TaskControl.Resumed", "task resumed by owner: 1 held step(s) go on") in trail
    assert ("TaskControl.RunRequested", "run-now by owner: its next step at the next tick") in trail
