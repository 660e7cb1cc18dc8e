"""Task categories through the `loopline` command (seed 002 §31): a batch lists one task per contact, a recurring
template's firing is a task at the next tick, a research task's report is a file of its memory, and the audit tells
each."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import command
from tests.e2e.cli import Cli

GYM = "iron_temple"


@pytest.fixture
def cli(embedded_cli: Cli) -> Cli:
    """Embedded only (see `embedded_cli`): what happens after the edge is the same code at scale."""
    return embedded_cli


def test_a_batch_a_recurring_template_and_a_research_task_through_the_cli(cli: Cli, tmp_path: Path) -> None:
    published = cli.publish(tmp_path, [
        command("c1", "tenant.configure", "2026-03-02T08:00:00Z", GYM, execution_mode="limited_auto"),
        command("c2", "task.batch", "2026-03-02T09:00:00Z", GYM, batch_id="spring", task_type="win_back",
                title="We miss you", confidence=0.9,
                contacts=[{"contact": "ann@example.com", "to_name": "Ann"}, {"contact": "bo@example.com"}]),
        command("c3", "task.recur", "2026-03-02T09:00:00Z", GYM, template_id="brief", cron="0 8 * * 1",
                max_instances=2, template={"title": "Monday churn brief", "task_type": "monthly_churn_analysis",
                                           "confidence": 0.96, "context": {"members": 120}}),
    ], "categories")
    assert published.returncode == 0, published.stdout + published.stderr
    listed = {row["task_id"]: row for row in cli.json("tasks", "list", "--tenant", GYM, "--json")}
    assert {"spring/1", "spring/2"} <= set(listed) and "brief/1" not in listed
    assert cli("tick", "--now", "2026-03-09T08:00:00Z").returncode == 0
    report = cli.json("tasks", "show", "brief/1", "--tenant", GYM, "--json")
    assert (report["status"], report["outcome"]) == ("completed", "report_produced")
    files = cli("tasks", "files", "brief/1")
    assert files.returncode == 0 and "workflows/deliverable_" in files.stdout, files.stdout
    audit = cli("audit", "brief/1", "--tenant", GYM)
    assert "instance 1 of template brief" in audit.stdout and "closed as report_produced" in audit.stdout, audit.stdout
