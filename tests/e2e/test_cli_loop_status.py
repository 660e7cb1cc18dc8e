"""`loopline status --tenant T` (embedded, issue 21 item 5): the tenant's loop metrics and its proactive run's pace, as
JSON and as a table; and `loopline audit` names where each task came from."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import command, signal
from tests.e2e.cli import Cli

T0 = "2026-03-02T14:00:00Z"
T1 = "2026-03-02T15:00:00Z"
TENANT = "acme"


def test_status_of_a_tenant_shows_its_acceptance_rate_and_the_audit_each_task_provenance(tmp_path: Path) -> None:
    cli = Cli(tmp_path / "home")
    published = cli.publish(tmp_path, [
        command("c1", "task.create", T0, TENANT, task_id="t1", title="Renew the lease", confidence=0.2),
        command("c2", "task.create", T0, TENANT, task_id="t2", title="Order new chairs", confidence=0.2,
                origin={"kind": "signal", "id": "sig-9"}),
        command("c3", "task.approve", T1, TENANT, task_id="t1"),
        command("c4", "task.reject", T1, TENANT, task_id="t2", reason="not this year", rejection_type="timing"),
    ], "start")
    assert published.returncode == 0, published.stderr

    shown = cli.json("status", "--tenant", TENANT)
    loop = shown["loop"]
    assert (loop["tasks_created"], loop["proposals_accepted"], loop["proposals_rejected"]) == (2, 1, 1)
    assert loop["proposal_acceptance_rate"] == 0.5 and loop["escalation_resolution_hours"] is None
    assert shown["proactive_run"]["tenant"] == TENANT
    table = " ".join(cli("status", "--tenant", TENANT).stdout.split())
    assert "loop of acme" in table and "proposals accepted" in table and "50%" in table
    assert "no task or run yet" in cli("status", "--tenant", "nobody").stdout
    [created] = [row for row in cli.json("audit", "t2") if row["event"] == "Task.Created"]
    assert (created["payload"]["trigger_type"], created["payload"]["trigger_event_id"]) == ("signal", "sig-9")


def test_status_of_a_tenant_shows_the_owners_tier_the_runs_that_did_nothing_and_the_next_run(tmp_path: Path) -> None:
    cli = Cli(tmp_path / "home")
    assert cli.publish(tmp_path, [
        command("c1", "task.create", T0, TENANT, task_id="t1", title="Renew the lease", expires_in_days=1),
        signal("s1", "user.seen", T0, TENANT),
    ], "start").returncode == 0
    assert cli("tick", "--now", T1).returncode == 0  # the run briefs the owner on the lease: one action
    completed = command("c2", "task.complete", "2026-03-02T15:30:00Z", TENANT, task_id="t1", summary="renewed")
    assert cli.publish(tmp_path, [completed], "done").returncode == 0
    assert cli("tick", "--now", "2026-03-03T15:05:00Z").returncode == 0  # a day unseen, nothing to say

    shown = cli.json("status", "--tenant", TENANT)
    assert (shown["loop"]["runs"], shown["loop"]["runs_idle"], shown["loop"]["idle_run_rate"]) == (2, 1, 0.5)
    run = shown["proactive_run"]
    assert (run["tier"], run["empty_runs_in_a_row"], run["next_run_at"]) == ("dormant", 1, "2026-03-04T15:05:00Z")
    table = " ".join(cli("status", "--tenant", TENANT).stdout.split())
    assert "runs that did nothing │ 50% │ 1 of 2" in table
    assert "the owner is dormant; 1 run in a row took no action" in table
    assert "next proactive run: 2026-03-04T15:05:00Z" in table
