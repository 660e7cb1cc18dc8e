"""`loopline parked list|retry|drop` and `status` as an operator uses them (embedded: at scale, the same commands
list, retry and count what the workers parked in test_scale_quarantine).

The workers (and, embedded, `publish`) run with a handler fault injected for messages holding
POISON (tests/hooks/loopline_hooks.py); the operator's later commands run without it: the fix.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import command
from tests.e2e.cli import Cli
from tests.hooks import hooked

AT = "2026-03-13T10:00:00Z"


@pytest.fixture
def cli_environ() -> dict[str, str]:
    return hooked(LOOPLINE_TEST_FAULTS="handler:POISON")


@pytest.fixture
def cli(embedded_cli: Cli) -> Cli:
    """Embedded only (see the module's docstring)."""
    return embedded_cli


def test_an_operator_lists_retries_and_drops_parked_messages(cli: Cli, tmp_path: Path) -> None:
    published = cli.publish(tmp_path, [
        command("a-1", "task.create", AT, "acme", task_id="first", title="POISON one"),
        command("a-2", "task.create", AT, "acme", task_id="second", title="POISON two"),
        command("b-1", "task.create", AT, "bob", task_id="fine", title="Fine"),
    ], "input")
    assert published.returncode == 0, published.stderr
    assert published.stderr.count("parked message") == 2 and "loopline parked list" in published.stderr
    assert "as m-" in published.stderr

    listed = cli.json("parked", "list")
    assert sorted(row["what"] for row in listed) == ["command task.create a-1", "command task.create a-2"]
    assert all(row["error"].startswith("InjectedFault") and row["id"].startswith("m-") for row in listed)
    by_ref = {row["what"].rsplit(" ", 1)[1]: row["id"] for row in listed}
    assert "parked messages: 2" in cli("status").stdout
    assert [row["task_id"] for row in cli.json("tasks", "list")] == ["fine"]

    fixed = Cli(cli.home, {k: v for k, v in cli.environ.items() if k != "LOOPLINE_TEST_FAULTS"})
    retried = fixed("parked", "retry", by_ref["a-1"])
    assert retried.returncode == 0, retried.stderr
    assert f"{by_ref['a-1']} retried: created task first" in retried.stdout
    again = fixed("parked", "retry", by_ref["a-1"])
    assert again.returncode == 1 and "retried already" in again.stderr
    dropped = fixed("parked", "drop", by_ref["a-2"], "--by", "dana")
    assert dropped.returncode == 0 and "dropped by dana" in dropped.stdout
    unknown = fixed("parked", "retry", "m-00000000")
    assert unknown.returncode == 1 and "loopline parked list" in unknown.stderr

    assert sorted(row["task_id"] for row in cli.json("tasks", "list")) == ["fine", "first"]
    assert cli.json("parked", "list") == []
    closed = {row["id"]: (row["status"], row["closed_by"]) for row in cli.json("parked", "list", "--all")}
    assert closed[by_ref["a-2"]] == ("dropped", "dana") and closed[by_ref["a-1"]][0] == "retried"
    assert cli.json("status")["parked"] == {"messages": 0, "read_model_events": 0, "deliveries": 0}
