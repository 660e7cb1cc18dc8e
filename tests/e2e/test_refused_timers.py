"""Timers the domain refuses, and tasks reaching expiry in every status, through the `loopline` command.

One tenant per scenario on one home: a refusal stays with its task and never stops the others. Embedded: a timer
fires in the same handler at scale (the tick's path there is test_cli_flow1's and the scale tests' subject).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import command
from tests.e2e.cli import Cli


@pytest.fixture
def cli(embedded_cli: Cli) -> Cli:
    """Embedded only (see the module's docstring)."""
    return embedded_cli


T0 = "2026-03-13T10:00:00Z"
LATER = "2026-03-13T11:00:00Z"
EXPIRY = "2026-03-15T10:00:00Z"  # two days after T0
AFTER_EXPIRY = "2026-03-15T10:30:00Z"
DEADLINE = "2026-03-14T10:00:00Z"


def scenarios() -> list[dict]:
    return [
        # (a) moved to escalated by the agent, then reaches its expiry
        command("a1", "task.create", T0, tenant="esc", task_id="t", title="Escalated one", expires_in_days=2),
        command("a2", "task.update", LATER, tenant="esc", task_id="t", status="escalated", notes="stuck on pricing"),
        # (b) dormant with an open loop at its expiry
        command("b1", "task.create", T0, tenant="dorm", task_id="t", title="Dormant one", expires_in_days=2),
        command("b2", "action.record", T0, tenant="dorm", task_id="t", action="send_email", to="ana@x.com"),
        command("b3", "task.update", LATER, tenant="dorm", task_id="t", status="dormant", notes="paused by the owner"),
        # (c) pending review, with an explicit loop whose deadline drafts a follow-up email
        command("c1", "task.create", T0, tenant="rev", task_id="t", title="Unreviewed one", confidence=0.1),
        command("c2", "loop.register", T0, tenant="rev", task_id="t", loop_id="reply", channel="email",
                watch={"sender": "ben@x.com"}, deadline=DEADLINE, if_unresolved="draft_followup_email"),
        # a tenant whose timer is due in the same hour as the refused one
        command("d1", "task.create", T0, tenant="ok", task_id="t", title="Ordinary one"),
        command("d2", "loop.register", T0, tenant="ok", task_id="t", loop_id="reply", channel="email",
                watch={"sender": "cy@x.com"}, deadline=DEADLINE, if_unresolved="draft_followup_email"),
    ]


def notifications(cli: Cli, tenant: str) -> list[str]:
    return [n["kind"] for n in cli.json("tasks", "show", "t", "--tenant", tenant)["notifications_sent"]]


def test_a_refused_timer_is_recorded_told_to_the_owner_and_never_fires_again(cli: Cli, tmp_path: Path) -> None:
    assert cli.publish(tmp_path, scenarios(), "scenarios").returncode == 0

    first = cli("tick", "--now", AFTER_EXPIRY)
    assert first.returncode == 0, first.stderr
    assert "refused" in first.stdout and "InvalidTransition" not in first.stderr

    # (c): the follow-up was refused (an unreviewed task cannot act), undone, and told to the owner (who was told
    # the task waits for review when it was created)
    assert notifications(cli, "rev") == ["review", "timer_refused"]
    [loop] = [row for row in cli.json("loops", "list", "--tenant", "rev")]
    assert not loop["resolved"]
    trail = cli.json("audit", "t", "--tenant", "rev")
    [refusal] = [row for row in trail if row["reason"] == "timer_refused"]
    assert "InvalidTransition" in refusal["summary"] and "pending_review" in refusal["summary"]
    assert cli.json("tasks", "show", "t", "--tenant", "rev")["status"] == "pending_review"

    # the other tenant's timer of the same hour fired
    assert notifications(cli, "ok") == ["followup_sent"]

    # (a): escalated at expiry stays with the owner, escalated again for the expiry
    escalated = cli.json("tasks", "show", "t", "--tenant", "esc")
    assert escalated["status"] == "escalated"
    assert any("reached its expiry after 2 days while with the owner" in (row["reason"] or "") for row in cli.json("audit", "t", "--tenant", "esc"))

    # (b): dormant at expiry expires, its loop closed with it
    assert cli.json("tasks", "show", "t", "--tenant", "dorm")["status"] == "expired"
    assert all(row["resolved_by"] == "expired" for row in cli.json("loops", "list", "--tenant", "dorm"))

    again = cli.json("tick", "--now", "2026-03-15T10:45:00Z")
    assert again["refused"] == [] and again["actions"] == []
    assert notifications(cli, "rev") == ["review", "timer_refused"]
