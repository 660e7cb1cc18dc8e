"""Tenant settings and task creation through the `loopline` command (embedded): bad settings are
rejected with a clear reason and exit 1, settings decide the gate, and a second task for the same
contact and type merges into the open one and says so."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import command
from tests.e2e.cli import Cli

T0 = "2026-03-02T09:00:00Z"
GYM = "renegade"


def _churn(ref: str, task_id: str, **data: object) -> dict[str, object]:
    fields = {"title": "Check in with Sam", "task_type": "churn_risk", "contact": "sam@example.com", **data}
    return command(ref, "task.create", T0, GYM, task_id=task_id, **fields)


def test_bad_settings_are_rejected_naming_what_was_wrong(tmp_path: Path) -> None:
    cli = Cli(tmp_path / "home")
    messages = [
        command("ok", "tenant.configure", T0, GYM, timezone="America/New_York"),
        command("tz", "tenant.configure", T0, GYM, timezone="America/Gotham"),
        command("mode", "tenant.configure", T0, GYM, execution_mode="yolo"),
        command("limit", "tenant.configure", T0, GYM, member_weekly_limit=-1),
        command("profile", "tenant.configure", T0, GYM, profile={"sign_off": "Mike", "favourite_colour": "red"}),
    ]
    result = cli.publish(tmp_path, messages, "settings")
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr
    lines = result.stderr.splitlines()
    assert any("data.timezone: timezone 'America/Gotham' is not an IANA time zone" in line for line in lines), lines
    assert any("data.execution_mode: Input should be 'manual' or 'limited_auto'" in line for line in lines), lines
    assert any("data.member_weekly_limit: Input should be greater than or equal to 0" in line for line in lines), lines
    assert any("data.profile: unknown profile field(s) favourite_colour" in line for line in lines), lines
    assert len([line for line in lines if line.startswith("rejected")]) == 4


def test_settings_decide_the_gate_and_a_second_task_for_the_contact_merges(tmp_path: Path) -> None:
    cli = Cli(tmp_path / "home")
    assert cli.publish(tmp_path, [_churn("c1", "t1", confidence=0.9)], "manual").returncode == 0
    configure = [command("cfg", "tenant.configure", T0, GYM, execution_mode="limited_auto")]
    assert cli.publish(tmp_path, configure, "configure").returncode == 0
    assert cli.publish(tmp_path, [_churn("c2", "t2", confidence=0.9, contact="jo@example.com")], "auto").returncode == 0

    merged = cli.publish(tmp_path, [_churn("c3", "t3", confidence=0.9, context={"risk": "high"})], "again")
    assert merged.returncode == 0, merged.stderr
    assert "merged into active task t1" in " ".join(merged.stderr.split()), merged.stderr

    tasks = {row["task_id"]: row["status"] for row in cli.json("tasks", "list", "--tenant", GYM)}
    assert tasks == {"t1": "pending_review", "t2": "ready"}  # manual when t1 came, limited_auto for t2; no t3
