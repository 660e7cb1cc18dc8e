"""What the `loopline` command prints when its output goes to a pipe or a file: tables whole, files
ending with a newline, the audit trail in time order, the next wake-up in the context list, and a
progress.md that stays short whatever the texts it quotes. Embedded: the printing code is shared."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from loopline.processors import limits
from tests.conftest import command, signal
from tests.e2e.cli import Cli

T0 = "2026-03-13T10:00:00Z"
LONG_TITLE = "Schedule the quarterly planning offsite with the whole leadership team and their assistants"


@pytest.fixture
def cli(tmp_path: Path) -> Cli:
    cli = Cli(tmp_path / "home")
    del cli.environ["COLUMNS"]  # as a user's pipe: no width given
    return cli


def test_a_piped_table_keeps_every_header_and_row_on_one_line(cli: Cli, tmp_path: Path) -> None:
    cli.publish(tmp_path, [
        command("m1", "task.create", T0, task_id="task_offsite", title=LONG_TITLE, description="x"),
        command("m2", "action.record", T0, task_id="task_offsite", action="send_email", to="ceo@company.com"),
    ], "msgs")
    listed = cli("tasks", "list")
    assert listed.returncode == 0, listed.stderr
    lines = listed.stdout.splitlines()
    header = next(line for line in lines if "task_id" in line)
    for column in ("tenant", "task_id", "title", "status", "open_loops", "actions", "inbox", "expires_at"):
        assert f" {column} " in header
    row = next(line for line in lines if "task_offsite" in line)
    assert LONG_TITLE in row and "waiting" in row and "2026-03-27T10:00:00Z" in row
    assert len(lines) == 6  # title, top border, header, rule, the row, bottom border


def test_a_file_printed_ends_with_a_newline(cli: Cli, tmp_path: Path) -> None:
    cli.publish(tmp_path, [
        command("m1", "task.create", T0, task_id="t1", title="Reply to Rahul"),
        command("m2", "action.record", T0, task_id="t1", action="send_email", to="rahul@company.com"),
        signal("s1", "email.received", "2026-03-14T09:00:00Z", sender="rahul@company.com", body="Thursday works"),
    ], "msgs")
    for path in ("context.json", "inbox/0001_s1.json", "progress.md", "log.md"):
        shown = cli("tasks", "files", "t1", path)
        assert shown.returncode == 0, shown.stderr
        assert shown.stdout.endswith("\n") and not shown.stdout.endswith("\n\n"), path
    assert json.loads(cli("tasks", "files", "t1", "inbox/0001_s1.json").stdout)["data"]["body"] == "Thursday works"


def test_audit_lists_events_in_time_order_whatever_order_they_arrived_in(cli: Cli, tmp_path: Path) -> None:
    cli.publish(tmp_path, [
        command("m1", "task.create", T0, task_id="t1", title="Reply to Rahul"),
        command("m2", "task.update", "2026-03-13T12:00:00Z", task_id="t1", notes="second note"),
    ], "first")
    cli.publish(tmp_path, [command("m3", "task.update", "2026-03-13T11:00:00Z", task_id="t1", notes="first note")], "late")
    rows = cli.json("audit", "t1")
    times = [row["at"] for row in rows]
    assert times == sorted(times) and "2026-03-13T11:00:00Z" in times
    table = cli("audit", "t1").stdout
    assert table.index("progress: first note") < table.index("progress: second note")


def test_the_context_list_shows_each_tasks_next_wake_up(cli: Cli, tmp_path: Path) -> None:
    cli.publish(tmp_path, [
        command("m1", "task.create", T0, task_id="t1", title="Reply to Rahul"),
        {**command("m2", "task.wake", T0), "data": {"task_id": "t1", "at": "2026-03-16T10:00:00Z", "reason": "later"}},
        {**command("m3", "task.wake", T0), "data": {"task_id": "t1", "at": "2026-03-15T10:00:00Z", "wake_id": "w2"}},
    ], "msgs")
    shown = cli("tasks", "context", "user_xyz", "--now", T0)
    assert shown.returncode == 0, shown.stderr
    header = next(line for line in shown.stdout.splitlines() if "task_id" in line)
    assert " next_wakeup " in header
    row = next(line for line in shown.stdout.splitlines() if " t1 " in line)
    assert "2026-03-15T10:00:00Z" in row


def test_progress_md_cuts_long_texts_short_and_says_which_file_holds_them(cli: Cli, tmp_path: Path) -> None:
    description = "D" * (limits.MAX_LONG_TEXT_CHARS - 1) + "!"
    summary = "S" * (limits.MAX_LONG_TEXT_CHARS - 1) + "?"
    note = "N" * (limits.MAX_LONG_TEXT_CHARS - 1) + "."
    result = cli.publish(tmp_path, [
        command("m1", "task.create", T0, task_id="t1", title="Read the contract", description=description),
        command("m2", "action.record", T0, task_id="t1", action="send_email", to="legal@company.com", summary=summary),
        command("m3", "task.update", T0, task_id="t1", notes=note),
    ], "msgs")
    assert result.returncode == 0, result.stdout + result.stderr

    progress = cli("tasks", "files", "t1", "progress.md").stdout
    assert len(progress) < 5_000
    assert "the whole text is in description.md" in progress
    assert progress.count("the whole text is in log.md") == 2  # the action's summary and the note
    assert "!" not in progress and "?" not in progress
    assert cli("tasks", "files", "t1", "description.md").stdout == description + "\n"
    assert summary in cli("tasks", "files", "t1", "log.md").stdout and note in cli("tasks", "files", "t1", "log.md").stdout
    listed = [entry["path"] for entry in cli.json("tasks", "files", "t1")["files"]]
    assert "description.md" in listed
    context = cli.json("tasks", "context", "user_xyz", "--task", "t1", "--now", T0)
    assert context["task"]["progress_md"] == progress
