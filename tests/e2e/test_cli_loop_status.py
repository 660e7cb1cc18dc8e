"""`loopline status --tenant T` (embedded, issue 21 item 5): the tenant's loop metrics, as JSON and as a table; and
`loopline audit` names where each task came from."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import command
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
