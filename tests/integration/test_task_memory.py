"""Each task's memory folder (seed 000 "The VFS — Living Memory"), rendered from its events."""

from __future__ import annotations

import json
from datetime import timedelta

from loopline.domain.timeutil import format_time, parse_time
from loopline.projections import task_memory
from loopline.runtime.system import System
from tests.conftest import command, publish
from tests.integration.helpers import COMPLETE, CREATE_TASK, FIRST_LOOP, RAHUL_REPLIES, SEND_EMAIL, TENANT, tick

T0 = parse_time("2026-03-13T10:00:00Z")


def memory(system: System, task_id: str = "task_abc") -> dict:
    with system.projections.engine.connect() as conn:
        (found,) = task_memory.find(conn, task_id, TENANT)
        return found


def paths(system: System, task_id: str = "task_abc") -> list[str]:
    with system.projections.engine.connect() as conn:
        return [entry["path"] for entry in task_memory.listing(conn, memory(system, task_id))]


def read(system: System, path: str, task_id: str = "task_abc") -> str:
    with system.projections.engine.connect() as conn:
        return task_memory.read(conn, memory(system, task_id), path)


def test_flow_one_leaves_progress_log_context_and_the_reply_in_the_inbox(system: System) -> None:
    publish(system, CREATE_TASK, SEND_EMAIL)
    progress = read(system, "progress.md")
    assert "# Schedule meeting with Rahul" in progress and "Status: **waiting**" in progress
    assert "send_email: Sent scheduling email to Rahul at 10am" in progress
    assert (f"- {FIRST_LOOP}: a reply from rahul@company.com to my email “Meeting next week?” (email) "
            "by 2026-03-16T10:00:00Z") in progress
    context = json.loads(read(system, "context.json"))
    assert context["active_loop_ids"] == [FIRST_LOOP]
    assert context["primary_conversation_id"] == "conv_123"

    publish(system, RAHUL_REPLIES)
    assert paths(system) == ["context.json", "conversation.md", "log.md", "progress.md", "inbox/0001_gmail-evt-77.json"]
    assert read(system, "conversation.md") == (
        "# Conversation — Schedule meeting with Rahul\n\n"
        "## 2026-03-13T10:00:00Z · agent\n\nSubject: Meeting next week?\n\n"
        "## 2026-03-17T09:12:00Z · contact\n\nThursday 3pm or Friday 2pm works.\n"
    )
    reply = json.loads(read(system, "inbox/0001_gmail-evt-77.json"))
    assert reply["data"]["body"] == "Thursday 3pm or Friday 2pm works." and reply["resolved_loops"] == [FIRST_LOOP]
    assert json.loads(read(system, "context.json"))["active_loop_ids"] == []
    log = read(system, "log.md").splitlines()
    assert log[2].startswith("- 2026-03-13T10:00:00Z task created: 'Schedule meeting with Rahul'")
    assert log[-1].startswith("- 2026-03-17T09:12:00Z email.received gmail-evt-77 stored in inbox")


def test_a_completed_task_keeps_its_memory_archived(system: System) -> None:
    publish(system, CREATE_TASK, SEND_EMAIL, RAHUL_REPLIES, COMPLETE)
    found = memory(system)
    assert task_memory.root(found) == "tasks/archive/task_abc/" and found["archived_at"] == "2026-03-17T09:20:00Z"
    assert "Outcome: Meeting booked with Rahul for Thursday 3pm" in read(system, "progress.md")
    assert "inbox/0001_gmail-evt-77.json" in paths(system)
    with system.projections.engine.connect() as conn:
        assert task_memory.active_tasks(conn, TENANT) == []


def test_log_past_500_lines_keeps_a_summary_of_the_oldest_80_percent_and_the_newest_20(system: System) -> None:
    notes = [
        command(f"n{i}", "task.update", format_time(T0 + timedelta(minutes=i)), task_id="task_abc", notes=f"note {i}")
        for i in range(1, 501)
    ]
    publish(system, CREATE_TASK, *notes)  # 501 lines: over the limit once
    entries = [line for line in read(system, "log.md").splitlines() if line.startswith("- ")]
    assert len(entries) == 101  # 501 - 400
    assert entries[0].endswith("progress: note 400 (executing)") and entries[-1].endswith("progress: note 500 (executing)")
    assert "log_summary_2026-03-13.md (entries 1–400)" in read(system, "log.md")
    summary = read(system, "log_summary_2026-03-13.md")
    assert "Entries 1–400 (2026-03-13T10:00:00Z → 2026-03-13T16:39:00Z)" in summary
    assert "- Task.ProgressNoted: 399" in summary and "loopline audit task_abc" in summary

    more = [
        command(f"m{i}", "task.update", format_time(T0 + timedelta(days=1, minutes=i)), task_id="task_abc", notes=f"more {i}")
        for i in range(1, 401)
    ]
    publish(system, *more)  # 501 live lines again: a second summary, named for its own day
    log = read(system, "log.md")
    assert "log_summary_2026-03-14.md (entries 401–800)" in log
    assert len([line for line in log.splitlines() if line.startswith("- ")]) == 101


def _output(i: int, day: float) -> dict:
    at = format_time(T0 + timedelta(days=day))
    return command(f"wf{i}", "workflow.output", at, task_id="inbox", workflow="triage", output={"run": i, "triaged": i * 3})


INBOX_TASK = command("c-inbox", "task.create", "2026-03-13T09:00:00Z", task_id="inbox", title="Inbox Management",
                     task_type="inbox_management")


def test_workflow_outputs_older_than_seven_days_rotate_into_the_archive_with_a_weekly_summary(system: System) -> None:
    publish(system, INBOX_TASK, *[_output(i, day=i) for i in range(0, 11)])  # one triage output a day, days 0..10
    files = paths(system, "inbox")
    inline = [p for p in files if p.startswith("workflows/triage_")]
    archived = [p for p in files if p.startswith("workflows/archive/triage_")]
    assert len(inline) == 8 and len(archived) == 3  # days 3..10 stay (not older than 7 days at day 10)
    assert inline[0].startswith("workflows/triage_2026-03-16T100000Z_4")
    assert "workflows/archive/archive_summary_2026-W11.md" in files  # 13–15 March fall in ISO week 11
    week = read(system, "workflows/archive/archive_summary_2026-W11.md", "inbox")
    assert "- triage: 3 output(s), 2026-03-13T10:00:00Z → 2026-03-15T10:00:00Z" in week
    assert json.loads(read(system, archived[0], "inbox")) == {"run": 0, "triaged": 0}
    assert json.loads(read(system, "context.json", "inbox"))["owned_workflow_ids"] == ["triage"]


def test_context_lists_active_tasks_with_their_expired_loops(system: System) -> None:
    publish(system, CREATE_TASK, SEND_EMAIL, INBOX_TASK)
    tick(system, "2026-03-16T12:00:00Z")  # the reply loop expires; a follow-up loop opens
    with system.projections.engine.connect() as conn:
        active = {row["task_id"]: row["state"] for row in task_memory.active_tasks(conn, TENANT)}
    assert sorted(active) == ["inbox", "task_abc"]
    assert [loop["loop_id"] for loop in active["task_abc"]["expired_loops"]] == [FIRST_LOOP]
    assert list(active["task_abc"]["waiting_on"]) == [f"{FIRST_LOOP}/followup"]
