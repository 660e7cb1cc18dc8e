"""Seed 000 Flow 1 and the loop lifecycle through the application, on real SQLite files."""

from __future__ import annotations

from pathlib import Path

from loopline.runtime.system import System
from tests.conftest import command, publish, signal
from tests.integration.helpers import (
    COMPLETE,
    CREATE_TASK,
    FIRST_LOOP,
    FOLLOWUP_LOOP,
    RAHUL,
    RAHUL_REPLIES,
    SEND_EMAIL,
    T0,
    TENANT,
    append,
    event_count,
    inbox,
    loop_row,
    loop_rows,
    nda_awaiting_signature,
    outbox,
    run_row,
    task_row,
    task_rows,
    tick,
    trail,
    trail_events,
)

AFTER_DEADLINE = "2026-03-16T10:00:01Z"


def _waiting_on_rahul(system: System) -> None:
    publish(system, CREATE_TASK, SEND_EMAIL)


def _after_followup(system: System) -> None:
    _waiting_on_rahul(system)
    tick(system, AFTER_DEADLINE)


# --- Flow 1 ----------------------------------------------------------------------------------


def test_sending_an_email_opens_a_three_day_reply_loop(system: System) -> None:
    _waiting_on_rahul(system)

    loop = loop_row(system, FIRST_LOOP)
    assert loop["channel"] == "email"
    assert loop["watch"] == {"sender": RAHUL, "thread_id": "gmail_thread_xyz"}
    assert loop["deadline"] == "2026-03-16T10:00:00Z"
    assert loop["if_unresolved"] == "draft_followup_email"
    assert loop["origin"] == "auto"
    assert not loop["resolved"]
    task = task_row(system, "task_abc")
    assert (task["status"], task["open_loops"], task["actions"]) == ("waiting", 1, 1)


def test_tick_before_the_deadline_leaves_the_loop_open(system: System) -> None:
    _waiting_on_rahul(system)

    report = tick(system, "2026-03-14T10:00:00Z")

    assert not any(FIRST_LOOP in action for action in report.actions)
    assert not loop_row(system, FIRST_LOOP)["resolved"]
    assert task_row(system, "task_abc")["status"] == "waiting"
    assert outbox(system.settings.home) == []


def test_passed_deadline_expires_the_loop_and_opens_a_followup_loop(system: System) -> None:
    _after_followup(system)

    first = loop_row(system, FIRST_LOOP)
    assert first["resolved"] and first["resolved_by"] == "expired"
    assert first["resolved_at"] == AFTER_DEADLINE
    followup = loop_row(system, FOLLOWUP_LOOP)
    assert not followup["resolved"]
    assert followup["watch"] == first["watch"]
    assert followup["deadline"] == "2026-03-19T10:00:01Z"
    assert followup["origin"] == "followup"
    assert [row["loop_id"] for row in loop_rows(system, open_only=True)] == [FOLLOWUP_LOOP]


def test_passed_deadline_sends_the_followup_and_tells_the_user(system: System, home: Path) -> None:
    _after_followup(system)

    actions = [row for row in trail(system, "task_abc") if row["event"] == "Task.ActionRecorded"]
    assert [row["payload"]["performed_by"] for row in actions] == ["agent", "loopline"]
    assert actions[1]["payload"]["action"] == "send_email"
    notified = [row for row in trail(system, "task_abc") if row["event"] == "Task.UserNotified"]
    told = (f"'Schedule meeting with Rahul': {RAHUL} hasn't replied to my email of 13 Mar 2026 10:00 UTC. "
            "I sent a follow-up and will tell you if there is no reply by 19 Mar 2026 10:00 UTC.")
    assert [row["payload"]["message"] for row in notified] == [told]

    sent = outbox(home)
    assert [(line["to"], line["kind"]) for line in sent] == [(RAHUL, "send_email"), ("user", "followup_sent")]
    assert sent[0]["details"]["thread_id"] == "gmail_thread_xyz"
    assert sent[0]["details"]["follow_up_of"] == FIRST_LOOP
    assert sent[1]["text"] == told


def test_followup_in_the_thread_keeps_the_original_subject(system: System, home: Path) -> None:
    _after_followup(system)

    followup = outbox(home)[0]

    assert followup["details"]["subject"] == "Re: Meeting next week?"


def test_ticking_again_at_the_same_time_changes_nothing(system: System, home: Path) -> None:
    _after_followup(system)
    events, sent = event_count(system), outbox(home)

    report = tick(system, AFTER_DEADLINE)

    assert report.actions == []
    assert event_count(system) == events
    assert outbox(home) == sent


def test_ticking_later_but_before_the_new_deadline_changes_nothing_a_user_sees(system: System, home: Path) -> None:
    _after_followup(system)
    before = (task_rows(system), loop_rows(system), run_row(system), outbox(home))

    report = tick(system, "2026-03-17T08:00:00Z")  # before the next proactive run and the follow-up deadline

    assert report.actions == []
    assert (task_rows(system), loop_rows(system), run_row(system), outbox(home)) == before


def test_reply_from_rahul_resolves_the_followup_loop_and_wakes_the_task(system: System, home: Path) -> None:
    _after_followup(system)

    publish(system, RAHUL_REPLIES)

    followup = loop_row(system, FOLLOWUP_LOOP)
    assert followup["resolved_by"] == "signal_match"
    assert followup["resolved_at"] == "2026-03-17T09:12:00Z"
    assert "gmail-evt-77" in followup["resolution"]
    assert loop_rows(system, open_only=True) == []
    task = task_row(system, "task_abc")
    assert (task["status"], task["open_loops"], task["inbox"]) == ("executing", 0, 1)
    (received,) = inbox(system, "task_abc")
    assert received["signal_id"] == "gmail-evt-77"
    assert received["data"]["body"] == "Thursday 3pm or Friday 2pm works."
    [told] = [line for line in outbox(home) if line["to"] == "agent"]  # the agent runtime hears of the reply, once
    assert (told["kind"], told["task_id"], told["signal_type"], told["signal_id"]) == (
        "task_signal", "task_abc", "email.received", "gmail-evt-77"
    )


def test_completing_the_task_points_the_user_back_to_the_conversation(system: System, home: Path) -> None:
    _after_followup(system)
    publish(system, RAHUL_REPLIES)

    publish(system, COMPLETE)

    task = task_row(system, "task_abc")
    assert task["status"] == "completed"
    assert task["status_reason"] == "Meeting booked with Rahul for Thursday 3pm"
    last = outbox(home)[-1]
    assert (last["to"], last["kind"]) == ("user", "task_completed")
    assert last["text"] == (
        "Done: Schedule meeting with Rahul. Meeting booked with Rahul for Thursday 3pm (back to conversation conv_123)"
    )
    assert [line["kind"] for line in outbox(home)] == ["send_email", "followup_sent", "task_signal", "task_completed"]


def test_reply_before_the_deadline_means_no_followup_is_ever_sent(system: System, home: Path) -> None:
    _waiting_on_rahul(system)
    publish(system, signal("early", "email.received", "2026-03-14T09:00:00Z", sender=RAHUL, thread_id="gmail_thread_xyz"))

    tick(system, "2026-03-20T10:00:00Z")

    assert loop_row(system, FIRST_LOOP)["resolved_by"] == "signal_match"
    assert [row["loop_id"] for row in loop_rows(system)] == [FIRST_LOOP]
    # The agent is told of the reply, no follow-up; then, idle for 3 days, the owner is told it stalled.
    assert [line["kind"] for line in outbox(home)] == ["task_signal", "stalled"]


def test_reply_in_another_thread_does_not_resolve_a_thread_loop(system: System) -> None:
    _waiting_on_rahul(system)

    publish(system, signal("other", "email.received", "2026-03-14T09:00:00Z", sender=RAHUL, thread_id="another"))

    assert not loop_row(system, FIRST_LOOP)["resolved"]
    assert task_row(system, "task_abc")["inbox"] == 0


# --- matching across tasks and tenants -------------------------------------------------------


def test_reply_in_the_same_batch_as_the_email_sees_its_loop(system: System) -> None:
    publish(system, CREATE_TASK, SEND_EMAIL, RAHUL_REPLIES)

    assert loop_row(system, FIRST_LOOP)["resolved_by"] == "signal_match"
    assert task_row(system, "task_abc")["inbox"] == 1


def test_reply_matches_a_loop_the_read_models_have_not_caught_up_with(system: System) -> None:
    append(system, CREATE_TASK, SEND_EMAIL)
    system.router.run_once()  # registration committed; no projection has run
    assert loop_rows(system) == []

    publish(system, RAHUL_REPLIES)

    assert loop_row(system, FIRST_LOOP)["resolved_by"] == "signal_match"


def test_signal_from_another_tenant_touches_nothing_of_this_tenant(system: System) -> None:
    _waiting_on_rahul(system)
    events_of_a = trail_events(system, "task_abc")

    publish(system, signal("b-1", "email.received", "2026-03-14T09:00:00Z", tenant="tenant_b",
                           sender=RAHUL, thread_id="gmail_thread_xyz"))

    assert not loop_row(system, FIRST_LOOP)["resolved"]
    assert task_row(system, "task_abc")["inbox"] == 0
    assert trail_events(system, "task_abc") == events_of_a
    assert task_rows(system, tenant="tenant_b") == []
    assert loop_rows(system, tenant="tenant_b") == []


def test_signal_resolves_only_its_own_tenants_loop_when_both_watch_the_same_sender(system: System) -> None:
    _waiting_on_rahul(system)
    publish(
        system,
        command("b-1", "task.create", T0, tenant="tenant_b", task_id="task_abc", title="B's meeting"),
        command("b-2", "action.record", T0, tenant="tenant_b", task_id="task_abc", action="send_email", to=RAHUL,
                thread_id="gmail_thread_xyz"),
    )

    publish(system, signal("b-3", "email.received", "2026-03-14T09:00:00Z", tenant="tenant_b",
                           sender=RAHUL, thread_id="gmail_thread_xyz"))

    assert loop_row(system, FIRST_LOOP, tenant="tenant_b")["resolved_by"] == "signal_match"
    assert not loop_row(system, FIRST_LOOP, tenant=TENANT)["resolved"]
    assert inbox(system, "task_abc", tenant=TENANT) == []
    assert [row["signal_id"] for row in inbox(system, "task_abc", tenant="tenant_b")] == ["b-3"]


def test_one_email_resolves_the_matching_loops_of_two_tasks(system: System) -> None:
    publish(
        system,
        command("m1", "task.create", T0, task_id="lunch", title="Lunch with Rahul"),
        command("m2", "task.create", T0, task_id="report", title="Get Q1 report from Rahul"),
        command("m3", "action.record", T0, task_id="lunch", action="send_email", to=RAHUL),
        command("m4", "action.record", T0, task_id="report", action="send_email", to=RAHUL),
        command("m5", "action.record", T0, task_id="report", action="send_email", to="someone@else.com"),
    )

    publish(system, signal("reply", "email.received", "2026-03-14T09:00:00Z", sender="RAHUL@Company.com"))

    assert loop_row(system, "lunch/send_email/1")["resolved_by"] == "signal_match"
    assert loop_row(system, "report/send_email/1")["resolved_by"] == "signal_match"
    assert not loop_row(system, "report/send_email/2")["resolved"]
    for task_id in ("lunch", "report"):
        assert [row["signal_id"] for row in inbox(system, task_id)] == ["reply"]
        assert task_row(system, task_id)["status"] == "executing"
    assert task_row(system, "report")["open_loops"] == 1


# --- closing tasks ---------------------------------------------------------------------------


def test_cancelling_a_task_closes_its_loops_without_telling_anyone(system: System, home: Path) -> None:
    _waiting_on_rahul(system)

    publish(system, command("msg-9", "task.cancel", "2026-03-14T10:00:00Z", task_id="task_abc", reason="user changed mind"))

    assert loop_row(system, FIRST_LOOP)["resolved_by"] == "cancelled"
    task = task_row(system, "task_abc")
    assert (task["status"], task["open_loops"], task["notifications"]) == ("cancelled", 0, 0)
    assert outbox(home) == []
    tick(system, "2026-03-20T10:00:00Z")
    assert [row["loop_id"] for row in loop_rows(system)] == [FIRST_LOOP]
    assert outbox(home) == []


def test_task_with_no_loops_expires_and_the_user_is_told(system: System, home: Path) -> None:
    publish(system, command("m1", "task.create", T0, task_id="idle", title="Idle errand", expires_in_days=1))

    tick(system, "2026-03-14T10:00:00Z")

    task = task_row(system, "idle")
    assert task["status"] == "expired"
    reason = "expired after 1 day: no action by the agent and no answer received; nothing happened in the last day"
    assert task["status_reason"] == reason
    notices = [line for line in outbox(home) if line["kind"] == "task_expired"]
    assert [line["text"] for line in notices] == [f"Task 'Idle errand' {reason}."]


def test_task_with_an_open_loop_is_escalated_not_expired_and_only_once(system: System, home: Path) -> None:
    publish(system, *nda_awaiting_signature("m", "2026-04-12T10:00:00Z", "notify_user", expires_in_days=1))

    tick(system, "2026-03-14T10:00:00Z")
    tick(system, "2026-03-14T10:00:00Z")
    tick(system, "2026-03-15T12:00:00Z")

    task = task_row(system, "nda")
    assert task["status"] == "escalated"
    assert task["status_reason"] == (
        "reached its expiry after 1 day still waiting for Signed NDA; decide: extend, notify or cancel"
    )
    assert trail_events(system, "nda").count("Task.Escalated") == 1
    assert not loop_row(system, "nda/signature")["resolved"]
    decisions = [line["text"] for line in outbox(home) if line["kind"] == "escalation"]
    assert len(decisions) == 1 and decisions[0].startswith("'Get the NDA signed' needs your decision")
