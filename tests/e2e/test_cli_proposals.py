"""Issue 21 done-when 3 through the CLI (embedded, offline policy): tasks stall, the owner is around, and the
proactive run turns the stalled tasks into proposals; the debate keeps the two stalled for a week and drops the one
that has only just stalled; the survivors reach the owner in one batch; the owner approves one (a task of provenance
`proposal`) and rejects the other `never`; the next run's proposal like it is recorded as avoided. All of it in
`loopline review list` and `loopline audit`."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import command, signal
from tests.e2e.cli import Cli

T0 = "2026-03-02T10:00:00Z"
OWNER = "acme"
LEASE, INVOICE, REPO = "gap:stalled_task:lease:1", "gap:stalled_task:invoice:1", "gap:stalled_task:repo:1"


def test_proposals_are_debated_batched_to_the_owner_approved_rejected_and_then_avoided(
    embedded_cli: Cli, tmp_path: Path,
) -> None:
    cli = embedded_cli
    assert cli.publish(tmp_path, [
        command("c1", "task.create", T0, OWNER, task_id="lease", title="Get the lease signed"),
        command("c2", "task.create", T0, OWNER, task_id="invoice", title="Chase the Acme invoice"),
    ], "start").returncode == 0
    assert cli("tick", "--now", "2026-03-05T10:05:00Z").returncode == 0  # both stall
    assert cli.publish(tmp_path, [command("c3", "task.create", "2026-03-08T10:00:00Z", OWNER, task_id="repo",
                                          title="Rename the repository")], "later").returncode == 0
    assert cli("tick", "--now", "2026-03-11T10:05:00Z").returncode == 0  # the repo task stalls too
    assert cli.publish(tmp_path, [signal("s1", "user.seen", "2026-03-12T10:00:00Z", OWNER)], "seen").returncode == 0
    assert cli("tick", "--now", "2026-03-12T10:30:00Z").returncode == 0  # the run: discovery, debate, one batch

    queue = cli.json("review", "list", "--tenant", OWNER, "--json")
    assert sorted(row["id"] for row in queue if row["kind"] == "proposal") == [INVOICE, LEASE]
    assert [row["what"] for row in queue if row["id"] == LEASE] == ["nudge or close 'Get the lease signed'"]
    shown = {ref: [row["summary"] for row in cli.json("audit", ref, "--json") if row["event"] == "Proposal.Shown"]
             for ref in (LEASE, INVOICE)}
    assert sorted(shown.values()) == [["shown to the owner in batch batch-1 as item 1"],
                                      ["shown to the owner in batch batch-1 as item 2"]]
    run_trail = [row["summary"] for row in cli.json("audit", "proactive-run", "--tenant", OWNER, "--json")]
    assert "2 proposal(s) shown to the owner in 1 batch(es)" in run_trail
    died = [row["summary"] for row in cli.json("audit", REPO, "--json")]
    assert "debate round 1: fail -> failed" in died and not any("shown" in line for line in died)

    assert cli("review", "approve", LEASE, "--tenant", OWNER).returncode == 0
    assert cli("review", "reject", INVOICE, "--tenant", OWNER, "--type", "never").returncode == 0
    task = cli.json("tasks", "show", f"proposal-{LEASE}", "--json")
    assert task["title"] == "nudge or close 'Get the lease signed'"
    [created] = [row for row in cli.json("audit", f"proposal-{LEASE}", "--json") if row["event"] == "Task.Created"]
    assert (created["payload"]["trigger_type"], created["payload"]["trigger_event_id"]) == ("proposal", LEASE)
    assert not [row for row in cli.json("review", "list", "--tenant", OWNER, "--json") if row["kind"] == "proposal"]

    assert cli.publish(tmp_path, [signal("s2", "user.seen", "2026-03-13T10:00:00Z", OWNER)], "back").returncode == 0
    assert cli("tick", "--now", "2026-03-13T10:30:00Z").returncode == 0
    avoided = cli.json("audit", "gap:stalled_task:invoice:2", "--json")
    assert [row["summary"] for row in avoided] == [
        f"avoided 'nudge or close 'Chase the Acme invoice'': like proposal {INVOICE}, rejected never"]
    decisions = cli.json("review", "log", "--tenant", OWNER, "--json")
    assert [(row["kind"], row["subject"], row["decision"], row["rejection_type"]) for row in decisions] == [
        ("proposal", LEASE, "approved", None), ("proposal", INVOICE, "rejected", "never")]
