"""Outcome signals through the `loopline` command (issue 20, done-when 1): a verbal commitment with no checkin in its
window is downgraded, a checkin after the task closed is attributed late, and a dormant member who reactivates
closes `recovered` (embedded; the handlers are the same at scale)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import command, signal
from tests.e2e.cli import Cli

GYM = "iron_temple"
MEMBERS = {"ann": "churn_risk", "ben": "churn_risk", "cat": "win_back"}


@pytest.fixture
def cli(embedded_cli: Cli) -> Cli:
    return embedded_cli


def address(member: str) -> str:
    return f"{member}@example.com"


def outcome(cli: Cli, member: str) -> tuple[str, str]:
    shown = cli.json("tasks", "show", member, "--tenant", GYM)
    return shown["status"], shown["outreach"]["outcome"]["code"]


def observed(cli: Cli, tmp: Path, member: str, kind: str, at: str) -> None:
    message = signal(f"{kind}-{member}", "outcome.observed", at, GYM, contact=address(member), outcome=kind)
    assert cli.publish(tmp, [message], f"{kind}-{member}").returncode == 0


def summaries(cli: Cli, member: str) -> list[str]:
    return [row["summary"] for row in cli.json("audit", member, "--tenant", GYM)]


def test_signals_downgrade_a_verbal_commitment_attribute_a_late_checkin_and_close_a_dormant_task(
    cli: Cli, tmp_path: Path
) -> None:
    start = [command("cfg", "tenant.configure", "2026-06-01T08:00:00Z", GYM, execution_mode="limited_auto")]
    start += [command(f"c-{member}", "task.create", "2026-06-01T09:00:00Z", GYM, task_id=member, title=f"{kind} {member}",
                      task_type=kind, contact=address(member), confidence=0.95) for member, kind in MEMBERS.items()]
    assert cli.publish(tmp_path, start, "start").returncode == 0
    assert cli("tick", "--now", "2026-06-01T13:00:00Z").returncode == 0
    reply = signal("r-ann", "email.received", "2026-06-02T10:00:00Z", GYM, sender=address("ann"),
                   subject="Re: checking in", body="See you Tuesday, I'll come to the 6pm class!")
    assert cli.publish(tmp_path, [reply], "reply").returncode == 0
    assert outcome(cli, "ann") == ("completed", "verbal_commitment")

    for day in ("06-04", "06-09", "06-14", "06-15", "06-17"):
        assert cli("tick", "--now", f"2026-{day}T13:00:00Z").returncode == 0
    assert outcome(cli, "ann") == ("completed", "engaged_conversation")
    assert "outcome verbal_commitment downgraded to engaged_conversation" in summaries(cli, "ann")
    progress = cli.json("tasks", "files", "ann", "progress.md", "--tenant", GYM)["content"]
    assert "outcome engaged_conversation (neutral)" in progress  # the task's memory follows the revision
    assert outcome(cli, "ben") == ("cancelled", "unresponsive")

    observed(cli, tmp_path, "ben", "checkin", "2026-06-18T10:00:00Z")
    assert outcome(cli, "ben") == ("cancelled", "retained")
    assert "outcome unresponsive became retained: checkin attributed late" in summaries(cli, "ben")

    assert cli("tick", "--now", "2026-07-01T13:00:00Z").returncode == 0
    assert cli.json("tasks", "show", "cat", "--tenant", GYM)["status"] == "dormant", summaries(cli, "cat")
    observed(cli, tmp_path, "cat", "reactivation", "2026-07-15T10:00:00Z")
    assert outcome(cli, "cat") == ("completed", "recovered")
