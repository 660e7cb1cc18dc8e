"""A reply processed before the action it answers (commands and signals travel apart at scale)
still resolves the loop, by event time: the reply's `at` against the loop's registration."""

from __future__ import annotations

from pathlib import Path

from loopline.runtime.system import System
from tests.conftest import command, publish, signal
from tests.integration.helpers import (
    CREATE_TASK,
    FIRST_LOOP,
    RAHUL,
    RAHUL_REPLIES,
    SEND_EMAIL,
    inbox,
    loop_row,
    loop_rows,
    outbox,
    task_row,
    tick,
    trail,
)

AFTER_EVERY_DEADLINE = "2026-03-25T10:00:00Z"


def send_email(ref: str, at: str, task_id: str = "task_abc", **fields: str) -> dict:
    return command(ref, "action.record", at, task_id=task_id, action="send_email", to=RAHUL, **fields)


def test_reply_processed_before_its_send_email_resolves_the_loop_and_no_followup_is_sent(
    system: System, home: Path
) -> None:
    publish(system, CREATE_TASK, RAHUL_REPLIES)
    publish(system, SEND_EMAIL)

    loop = loop_row(system, FIRST_LOOP)
    assert (loop["resolved_by"], loop["resolved_at"]) == ("signal_match", "2026-03-17T09:12:00Z")
    assert "gmail-evt-77" in loop["resolution"]
    assert [row["signal_id"] for row in inbox(system, "task_abc")] == ["gmail-evt-77"]
    assert task_row(system, "task_abc")["status"] == "executing"  # the reply woke it, as if it came second
    tick(system, AFTER_EVERY_DEADLINE)
    assert [line for line in outbox(home) if line.get("to") == RAHUL] == []


def test_a_reply_written_before_the_email_was_sent_resolves_nothing_in_either_order(system: System) -> None:
    earlier = signal("gmail-0", "email.received", "2026-03-13T09:00:00Z", sender=RAHUL, thread_id="gmail_thread_xyz")
    publish(system, CREATE_TASK, earlier, SEND_EMAIL)
    publish(system, signal("gmail-00", "email.received", "2026-03-13T09:30:00Z", sender=RAHUL,
                           thread_id="gmail_thread_xyz"))

    assert loop_row(system, FIRST_LOOP)["resolved"] is False
    assert inbox(system, "task_abc") == []


def test_a_kept_reply_resolves_only_loops_its_channel_rule_matches(system: System) -> None:
    other_thread = signal("gmail-1", "email.received", "2026-03-14T09:00:00Z", sender=RAHUL, thread_id="other")
    publish(system, CREATE_TASK, other_thread, SEND_EMAIL)

    assert loop_row(system, FIRST_LOOP)["resolved"] is False
    publish(system, RAHUL_REPLIES)
    assert loop_row(system, FIRST_LOOP)["resolved_by"] == "signal_match"
    assert [row["signal_id"] for row in inbox(system, "task_abc")] == ["gmail-evt-77"]


def test_the_first_reply_processed_resolves_a_late_loop_and_the_second_is_kept_not_delivered(system: System) -> None:
    second = signal("gmail-2", "email.received", "2026-03-18T09:00:00Z", sender=RAHUL, thread_id="gmail_thread_xyz")
    publish(system, CREATE_TASK, RAHUL_REPLIES, second, SEND_EMAIL)

    assert "gmail-evt-77" in loop_row(system, FIRST_LOOP)["resolution"]
    assert [row["signal_id"] for row in inbox(system, "task_abc")] == ["gmail-evt-77"]


def test_one_kept_reply_resolves_the_loops_of_two_tasks_registered_before_it(system: System) -> None:
    other_task = command("c2", "task.create", "2026-03-13T10:00:00Z", task_id="task_other", title="Rahul, invoice")
    publish(system, CREATE_TASK, other_task, send_email("e1", "2026-03-13T11:00:00Z", task_id="task_other"))
    publish(system, RAHUL_REPLIES)  # resolves task_other's loop; task_abc's email is not processed yet
    publish(system, send_email("e2", "2026-03-13T12:00:00Z"))

    assert {(row["task_id"], row["resolved_by"]) for row in loop_rows(system)} == {
        ("task_other", "signal_match"), ("task_abc", "signal_match")
    }
    for task_id in ("task_abc", "task_other"):
        assert [row["signal_id"] for row in inbox(system, task_id)] == ["gmail-evt-77"]


def test_two_emails_of_one_task_answered_by_one_kept_reply_leave_one_inbox_entry(system: System) -> None:
    publish(system, CREATE_TASK, send_email("e1", "2026-03-13T11:00:00Z"))
    publish(system, RAHUL_REPLIES)
    publish(system, send_email("e2", "2026-03-13T12:00:00Z"), send_email("e3", "2026-03-13T13:00:00Z"))

    assert [row["resolved_by"] for row in loop_rows(system)] == ["signal_match"] * 3
    assert [row["signal_id"] for row in inbox(system, "task_abc")] == ["gmail-evt-77"]
    assert task_row(system, "task_abc")["open_loops"] == 0


def test_a_wakeup_condition_met_by_a_kept_reply_wakes_the_task_at_once(system: System) -> None:
    publish(system, CREATE_TASK, SEND_EMAIL, signal("gmail-9", "email.received", "2026-03-14T08:00:00Z", sender=RAHUL))
    wake = command("w1", "task.wake", "2026-03-13T11:00:00Z", task_id="task_abc")
    wake["data"].update(wake_id="rahul", when={"channel": "email", "watch": {"sender": RAHUL}})
    publish(system, wake)

    assert loop_row(system, "rahul/condition")["resolved_by"] == "signal_match"
    [woken] = [row for row in trail(system, "task_abc") if row["event"] == "Task.WokenUp"]
    assert woken["payload"]["cause"] == "signal" and "gmail-9" in woken["reason"]


def test_a_kept_reply_is_forgotten_after_seven_days_of_event_time(system: System) -> None:
    publish(system, CREATE_TASK, RAHUL_REPLIES)  # 03-17
    publish(system, signal("gmail-3", "email.received", "2026-03-24T09:13:00Z", sender=RAHUL, thread_id="x"))
    publish(system, SEND_EMAIL)  # registered 03-13: only the 03-17 reply would have matched, and it is gone

    assert loop_row(system, FIRST_LOOP)["resolved"] is False


def test_a_note_processed_after_a_kept_reply_does_not_make_the_task_look_idle_since_the_note(system: System) -> None:
    publish(system, CREATE_TASK, RAHUL_REPLIES, SEND_EMAIL)  # the reply (03-17 09:12) wakes the task at once
    publish(system, command("n1", "task.update", "2026-03-14T10:00:00Z", task_id="task_abc", notes="drafting"))
    tick(system, "2026-03-19T10:00:00Z")  # 5 days after the note, 2 after the reply: not idle for 3 days

    assert task_row(system, "task_abc")["stalled_since"] is None
