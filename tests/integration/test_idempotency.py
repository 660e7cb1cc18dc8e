"""Exactly-once effects over at-least-once delivery, and bad messages rejected without losing good ones."""

from __future__ import annotations

from pathlib import Path

import pytest

from loopline.adapters.messages import InvalidMessage
from loopline.runtime.system import System
from tests.conftest import command, publish, signal
from tests.integration.helpers import (
    CREATE_TASK,
    RAHUL,
    SEND_EMAIL,
    append,
    event_count,
    inbox,
    loop_row,
    loop_rows,
    outbox,
    recent,
    task_row,
    task_rows,
    trail_events,
)

T0 = "2026-03-13T10:00:00Z"


def _rejections(system: System) -> list[dict]:
    return [row for row in recent(system) if row["event"] == "InboundMessage.Rejected"]


# --- the same message twice ------------------------------------------------------------------


def test_same_message_id_published_twice_has_no_second_effect(system: System) -> None:
    publish(system, CREATE_TASK, SEND_EMAIL)
    events = event_count(system)

    report = append(system, SEND_EMAIL)
    drained = system.drain()

    assert (report.appended, report.duplicates) == (0, 1)
    assert drained.outcomes == []
    assert event_count(system) == events
    assert task_row(system, "task_abc")["actions"] == 1
    assert len(loop_rows(system)) == 1


def test_same_message_id_twice_in_one_batch_counts_once(system: System) -> None:
    report = append(system, CREATE_TASK, SEND_EMAIL, SEND_EMAIL)
    system.drain()

    assert (report.appended, report.duplicates) == (2, 1)
    assert task_row(system, "task_abc")["actions"] == 1


def test_redelivered_signal_is_stored_in_the_inbox_once(system: System, home: Path) -> None:
    publish(system, CREATE_TASK, SEND_EMAIL)
    reply = signal("gmail-1", "email.received", "2026-03-14T09:00:00Z", sender=RAHUL, thread_id="gmail_thread_xyz")
    publish(system, reply)
    events = event_count(system)

    publish(system, reply)

    assert event_count(system) == events
    assert [row["signal_id"] for row in inbox(system, "task_abc")] == ["gmail-1"]


def test_redelivery_with_different_content_keeps_the_first_message(system: System) -> None:
    publish(system, command("m1", "task.create", T0, task_id="t1", title="First title"))

    publish(system, command("m1", "task.create", T0, task_id="t1", title="Second title"))

    assert [row["title"] for row in task_rows(system)] == ["First title"]


def test_same_message_id_from_another_tenant_is_another_message(system: System) -> None:
    report = append(
        system,
        command("m1", "task.create", T0, tenant="tenant_a", task_id="t1", title="A's task"),
        command("m1", "task.create", T0, tenant="tenant_b", task_id="t1", title="B's task"),
    )
    system.drain()

    assert (report.appended, report.duplicates) == (2, 0)
    assert [(row["tenant"], row["title"]) for row in task_rows(system)] == [
        ("tenant_a", "A's task"), ("tenant_b", "B's task")
    ]


def test_creating_the_same_task_id_twice_makes_one_task(system: System) -> None:
    drained = publish(
        system,
        command("m1", "task.create", T0, task_id="t1", title="Book flights"),
        command("m2", "task.create", "2026-03-13T11:00:00Z", task_id="t1", title="Book flights again"),
    )

    assert [outcome.accepted for outcome in drained.outcomes] == [True, True]
    assert "already exists" in drained.outcomes[1].detail
    assert [row["title"] for row in task_rows(system)] == ["Book flights"]
    assert trail_events(system, "t1").count("Task.Created") == 1


# --- rejects ---------------------------------------------------------------------------------


def test_action_on_an_unknown_task_is_rejected_with_its_reason_and_the_rest_applied(system: System) -> None:
    drained = publish(
        system,
        command("m1", "task.create", T0, task_id="t1", title="Real task"),
        command("m2", "action.record", T0, task_id="ghost", action="send_email", to=RAHUL),
        command("m3", "action.record", T0, task_id="t1", action="send_email", to=RAHUL),
    )

    assert [outcome.accepted for outcome in drained.outcomes] == [True, False, True]
    (rejected,) = _rejections(system)
    assert rejected["subject"] == "command m2"
    assert rejected["reason"] == "tenant 'user_xyz' has no task 'ghost'; create it with task.create first"
    task = task_row(system, "t1")
    assert (task["actions"], task["open_loops"]) == (1, 1)


def test_loop_whose_watch_lacks_the_sender_is_rejected_and_leaves_no_loop(system: System) -> None:
    publish(system, command("m1", "task.create", T0, task_id="t1", title="Real task"))

    drained = publish(
        system,
        command("m2", "loop.register", T0, loop_id="t1/reply", task_id="t1", channel="email",
                watch={"thread_id": "th-1"}, deadline="2026-03-16T10:00:00Z", if_unresolved="notify_user"),
        command("m3", "task.update", T0, task_id="t1", notes="waiting on Rahul"),
    )

    assert [outcome.accepted for outcome in drained.outcomes] == [False, True]
    (rejected,) = _rejections(system)
    assert "email watch is missing required field(s) sender" in rejected["reason"]
    assert loop_rows(system) == []
    task = task_row(system, "t1")
    assert (task["open_loops"], task["last_note"]) == (0, "waiting on Rahul")


def test_action_whose_expectation_is_invalid_leaves_no_half_recorded_action(system: System, home: Path) -> None:
    """The action is recorded on the task before the loop fails to register; the reject undoes both."""
    drained = publish(
        system,
        command("m1", "task.create", T0, task_id="t1", title="Real task"),
        command("m2", "action.record", T0, task_id="t1", action="send_slack_dm", slack_user_id="U1", channel_id="D1",
                if_unresolved="draft_followup_email"),
        command("m3", "action.record", T0, task_id="t1", action="send_email", to="ann@acme.com"),
    )

    assert [outcome.accepted for outcome in drained.outcomes] == [True, False, True]
    assert "draft_followup_email needs an email loop, not slack" in drained.rejected[0].detail
    task = task_row(system, "t1")
    assert (task["actions"], task["open_loops"]) == (1, 1)
    assert trail_events(system, "t1").count("Task.ActionRecorded") == 1
    assert [row["loop_id"] for row in loop_rows(system)] == ["t1/send_email/1"]
    assert loop_row(system, "t1/send_email/1")["watch"] == {"sender": "ann@acme.com"}


def test_email_action_without_recipient_is_rejected_at_the_edge(system: System) -> None:
    publish(system, CREATE_TASK)
    events = event_count(system)

    with pytest.raises(InvalidMessage, match="data.to: Field required"):
        publish(system, command("m2", "action.record", T0, task_id="task_abc", action="send_email"))

    assert event_count(system) == events
    assert task_row(system, "task_abc")["actions"] == 0


def test_rejected_completion_leaves_the_loop_open_and_still_matchable(system: System) -> None:
    """Completion closes the task's loops first, then fails the status check: the loop must stay open."""
    publish(
        system,
        command("m1", "task.create", T0, task_id="t1", title="Low-confidence idea", confidence=0.2),
        command("m2", "loop.register", T0, loop_id="t1/reply", task_id="t1", channel="email",
                watch={"sender": RAHUL}, deadline="2026-03-20T10:00:00Z", if_unresolved="notify_user"),
    )
    assert task_row(system, "t1")["status"] == "pending_review"

    drained = publish(system, command("m3", "task.complete", T0, task_id="t1", summary="done?"))

    assert not drained.outcomes[0].accepted
    assert "cannot move from pending_review to completed" in drained.outcomes[0].detail
    assert not loop_row(system, "t1/reply")["resolved"]
    assert task_row(system, "t1")["open_loops"] == 1
    assert [line["kind"] for line in outbox(home=system.settings.home)] == ["review"]  # only the review notice

    publish(system, signal("s1", "email.received", "2026-03-14T09:00:00Z", sender=RAHUL))

    assert loop_row(system, "t1/reply")["resolved_by"] == "signal_match"


def test_rejected_message_is_not_retried_on_redelivery(system: System) -> None:
    bad = command("m2", "action.record", T0, task_id="ghost", action="send_email", to=RAHUL)
    publish(system, bad)
    events = event_count(system)

    report = append(system, bad)
    system.drain()

    assert report.duplicates == 1
    assert event_count(system) == events
    assert len(_rejections(system)) == 1


def test_message_for_a_closed_task_is_rejected_and_keeps_the_task_closed(system: System) -> None:
    publish(
        system,
        CREATE_TASK,
        command("m2", "task.cancel", T0, task_id="task_abc", reason="not needed"),
    )

    drained = publish(system, SEND_EMAIL)

    assert "task task_abc is cancelled" in drained.rejected[0].detail
    assert task_row(system, "task_abc")["status"] == "cancelled"
    assert loop_rows(system) == []
