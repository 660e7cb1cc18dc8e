"""Seed 000 Flow 3 (inbox management) through the `loopline` command, on both deployments.

A long-running task owns a triage workflow that reports every 20 minutes for eight days; its
folder stays bounded (log compaction, 7-day workflow rotation), emails needing a reply become
open loops, and the context an agent prompt gets shows what needs attention.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

from loopline.domain.timeutil import format_time
from tests.conftest import command, signal
from tests.e2e.cli import Cli

START = datetime(2026, 3, 16, 8, 0, tzinfo=timezone.utc)  # a Monday
RUNS = 8 * 24 * 3  # every 20 minutes for 8 days


def _at(delta: timedelta) -> str:
    return format_time(START + delta)


CREATE = command("i1", "task.create", _at(timedelta()), task_id="inbox", title="Inbox Management",
                 task_type="inbox_management", context={"conversation_id": "conv_inbox"})
TRIAGE = [
    command(f"t{n}", "workflow.output", _at(timedelta(minutes=20 * n)), task_id="inbox", workflow="triage",
            output={"run": n, "triaged": 4, "needs_reply": 1 if n % 72 == 0 else 0})
    for n in range(RUNS)
]
NEEDS_REPLY = [  # triage found two emails waiting for the user's reply; the task tracks the answers
    command(f"l{n}", "loop.register", _at(timedelta(days=7, minutes=5)), task_id="inbox", loop_id=f"reply-{who}",
            channel="email", watch={"sender": f"{who}@example.com"}, deadline=_at(timedelta(days=9)),
            if_unresolved="notify_user", description=f"Reply from {who} about the invoice")
    for n, who in enumerate(("ana", "ben"))
]
ANA_REPLIES = signal("g1", "email.received", _at(timedelta(days=8)), sender="Ana@Example.com", subject="Re: invoice")


def test_flow_3_inbox_management_stays_bounded_and_surfaces_what_needs_attention(cli: Cli, tmp_path: Path) -> None:
    assert cli.publish(tmp_path, [CREATE, *TRIAGE, *NEEDS_REPLY], "inbox").returncode == 0
    # Signals and commands travel on different Kafka topics, so only a later publish is surely applied later.
    assert cli.publish(tmp_path, [ANA_REPLIES], "reply").returncode == 0

    folder = cli.json("tasks", "files", "inbox")
    paths = [f["path"] for f in folder["files"]]
    inline = [p for p in paths if p.startswith("workflows/triage_")]
    archived = [p for p in paths if p.startswith("workflows/archive/triage_")]
    assert len(inline) + len(archived) == RUNS
    assert len(archived) == 24 * 3  # as of the task's last event (the reply, day 8), day 0's outputs are over 7 days old
    assert "workflows/archive/archive_summary_2026-W12.md" in paths
    assert any(p.startswith("log_summary_") for p in paths)
    log = cli.json("tasks", "files", "inbox", "log.md")["content"]
    assert len([line for line in log.splitlines() if line.startswith("- ")]) <= 500

    loops = {row["loop_id"]: row for row in cli.json("loops", "list", "--tenant", "user_xyz")}
    assert loops["reply-ana"]["resolved_by"] == "signal_match" and not loops["reply-ben"]["resolved"]

    assert cli("tick", "--now", _at(timedelta(days=9, minutes=1))).returncode == 0
    context = cli.json("tasks", "context", "user_xyz", "--task", "inbox", "--now", _at(timedelta(days=9, hours=1)))
    [inbox] = context["active_tasks"]
    assert inbox["title"] == "Inbox Management" and inbox["status"] == "executing"
    assert [loop["loop_id"] for loop in inbox["expired_loops"]] == ["reply-ben"]
    progress = context["task"]["progress_md"]
    assert "- triage: 576 output(s)" in progress and "reply-ben: Reply from ben about the invoice" in progress
