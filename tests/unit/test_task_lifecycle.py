"""The task transition table, as commands on the Task aggregate see it."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from loopline.domain import ids
from loopline.domain.errors import DomainError
from loopline.domain.status import TERMINAL, TRANSITIONS, InvalidTransition, TaskStatus, check_transition
from loopline.domain.task import OWNER_DECISIONS, OwnerDecision, Task

NOW = datetime(2025, 3, 1, 9, 0, tzinfo=timezone.utc)
S = TaskStatus


def make_task(status: str = "executing", *, expires_at: datetime | None = None, ref: str = "t1") -> Task:
    return Task.create(
        id=ids.task_id("u", ref), now=NOW, tenant="u", ref=ref, title="Get the contract signed", description="",
        task_type="ad_hoc", status=status, expires_at=expires_at, priority=None, contact=None, confidence=None,
        context={}, reason="r",
    )


def send_email(task: Task, now: datetime) -> None:
    task.record_action(action="send_email", details={"to": "bob@x.com"}, summary="emailed Bob", performed_by="agent", now=now)


def close_loop_unanswered(task: Task, loop_id: str, resolved_by: str, reason: str, days: int) -> None:
    """`loop_id` closes `days` after NOW without the awaited answer, and the task's wait ends if it was the last."""
    at = NOW + timedelta(days=days)
    task.close_loop(loop_id, resolved_by=resolved_by, now=at)
    task.end_wait(reason=reason, now=at)


# Each command: (name, status it aims for or None, how to apply it).
COMMANDS = [
    ("record_action", S.WAITING, send_email),
    ("receive_signal", None, lambda t, n: t.receive_signal(signal_ref="s", signal_type="email.received", data={}, resolved_loops=[], now=n)),
    ("approve", S.READY, lambda t, n: t.approve(reason="ok", now=n)),
    ("reject", S.CANCELLED, lambda t, n: t.reject(reason="no", rejection_type=None, now=n)),
    ("give_guidance", S.EXECUTING, lambda t, n: t.give_guidance(text="try phoning", now=n)),
    ("escalate", S.ESCALATED, lambda t, n: t.escalate(reason="stuck", cause="agent", now=n)),
    ("complete", S.COMPLETED, lambda t, n: t.complete(summary="done", now=n)),
    ("cancel", S.CANCELLED, lambda t, n: t.cancel(reason="stop", now=n)),
    ("expire", S.EXPIRED, lambda t, n: t.expire(reason="old", now=n)),
]


def note_progress(status: TaskStatus | None):
    return ("note_progress", status, lambda t, n: t.note_progress(notes="progress", status=status, now=n))


command_st = st.one_of(st.sampled_from(COMMANDS), st.builds(note_progress, st.none() | st.sampled_from(list(S))))


def replay(task: Task) -> Task:
    agg = None
    for event in task.collect_events():
        agg = event.mutate(agg)
    return agg


@settings(max_examples=300, deadline=None)
@given(start=st.sampled_from(["executing", "pending_review", "escalated"]), commands=st.lists(command_st, max_size=15))
def test_every_status_change_follows_the_transition_table(start, commands):
    task = make_task(start)
    for step, (name, target, apply) in enumerate(commands, start=1):
        before = task.status
        try:
            apply(task, NOW + timedelta(minutes=step))
        except DomainError:
            assert task.status is before, f"{name} failed but moved the task"
            continue
        after = task.status
        assert isinstance(after, TaskStatus)
        assert name != "note_progress" or (before, after) not in OWNER_DECISIONS, f"task.update made {before} -> {after}"
        if before in TERMINAL:
            assert after is before, f"{name} moved a {before} task to {after}"
            assert target is None or target == before, f"{name} toward {target} succeeded on a {before} task"
        elif after != before:
            if name == "record_action" and before != S.EXECUTING:
                check_transition(before, S.EXECUTING)
                check_transition(S.EXECUTING, after)
            else:
                assert after in TRANSITIONS[before], f"{name}: {before} -> {after}"
    rebuilt = replay(task)
    assert rebuilt.status is task.status


def test_recording_an_email_moves_an_executing_task_to_waiting():
    task = make_task("executing")
    send_email(task, NOW)
    assert task.status is S.WAITING
    assert task.actions_count == 1


def test_an_action_that_awaits_nothing_leaves_the_task_executing():
    task = make_task("executing")
    task.record_action(action="post_to_forum", details={}, summary="posted", performed_by="agent", now=NOW, awaits=False)
    assert task.status is S.EXECUTING


def test_a_waiting_task_whose_last_loop_closed_unanswered_goes_back_to_executing():
    task = make_task("executing")
    send_email(task, NOW)
    task.link_loop("loop-1", now=NOW)
    task.link_loop("loop-2", now=NOW)
    close_loop_unanswered(task, "loop-1", "expired", "no reply", days=3)
    assert task.status is S.WAITING  # still waiting on loop-2

    close_loop_unanswered(task, "loop-2", "manual", "resolved by hand", days=4)
    assert task.status is S.EXECUTING


def test_a_pending_time_wake_up_is_something_to_wait_for():
    task = make_task("executing")
    send_email(task, NOW)
    task.link_loop("loop-1", now=NOW)
    task.schedule_wakeup("w1", at=NOW + timedelta(days=9), loop_ref=None, reason="check back", now=NOW)
    close_loop_unanswered(task, "loop-1", "expired", "no reply", days=3)
    assert task.status is S.WAITING


def test_signal_wakes_a_waiting_task_and_lands_in_its_inbox():
    task = make_task("executing")
    send_email(task, NOW)
    task.receive_signal(signal_ref="sig-1", signal_type="email.received", data={"sender": "bob@x.com"},
                        resolved_loops=[], now=NOW + timedelta(hours=1))
    assert task.status is S.EXECUTING
    assert task.inbox_count == 1


def test_signal_resolving_a_linked_loop_removes_it_from_the_task():
    task = make_task("executing")
    task.link_loop("loop-1", now=NOW)
    task.receive_signal(signal_ref="sig-1", signal_type="email.received", data={}, resolved_loops=["loop-1", "other"],
                        now=NOW + timedelta(hours=1))
    assert task.open_loops == []


def test_completed_task_rejects_cancel_naming_both_states():
    task = make_task("executing")
    task.complete(summary="done", now=NOW)
    with pytest.raises(InvalidTransition) as raised:
        task.cancel(reason="too late", now=NOW + timedelta(minutes=1))
    assert "completed" in str(raised.value) and "cancelled" in str(raised.value)
    assert task.status is S.COMPLETED


def test_approving_a_pending_review_task_makes_it_ready():
    task = make_task("pending_review")
    task.approve(reason="go", now=NOW)
    assert task.status is S.READY


def test_progress_notes_cannot_approve_a_task_awaiting_review():
    task = make_task("pending_review")
    with pytest.raises(OwnerDecision, match="only the owner approves: use task.approve"):
        task.note_progress(notes="looks fine to me", status="ready", now=NOW)
    assert task.status is S.PENDING_REVIEW
    task.approve(reason="go", now=NOW)
    assert task.status is S.READY


def test_progress_notes_cannot_resume_an_escalated_task():
    task = make_task("executing")
    task.escalate(reason="member asked about refunds", cause="agent", now=NOW)
    with pytest.raises(OwnerDecision, match="only owner guidance resumes: use task.guidance"):
        task.note_progress(notes="carrying on", status="executing", now=NOW + timedelta(minutes=1))
    assert task.status is S.ESCALATED
    task.give_guidance(text="offer a pause instead", now=NOW + timedelta(minutes=2))
    assert task.status is S.EXECUTING


def test_pending_review_task_cannot_act_before_approval():
    task = make_task("pending_review")
    with pytest.raises(InvalidTransition):
        send_email(task, NOW)
    assert task.actions_count == 0


def test_rejecting_an_already_cancelled_task_is_refused():
    task = make_task("pending_review")
    task.reject(reason="not now", rejection_type=None, now=NOW)
    with pytest.raises(DomainError):
        task.reject(reason="still no", rejection_type=None, now=NOW + timedelta(days=1))
    assert task.last_activity_at == NOW


def test_task_is_not_due_to_expire_again_once_escalated_for_expiry():
    task = make_task("executing", expires_at=NOW + timedelta(days=1))
    later = NOW + timedelta(days=2)
    assert task.is_due_to_expire(later)
    task.escalate(reason="expired with open loops", cause="expiry", now=later)
    assert not task.is_due_to_expire(later + timedelta(hours=1))


def test_task_escalated_for_another_cause_is_still_due_to_expire():
    task = make_task("executing", expires_at=NOW + timedelta(days=1))
    task.escalate(reason="stuck", cause="agent", now=NOW)
    assert task.is_due_to_expire(NOW + timedelta(days=2))


def test_replaying_events_rebuilds_the_same_task():
    task = make_task("executing")
    task.link_loop("loop-1", now=NOW)
    task.link_loop("loop-2", now=NOW)
    send_email(task, NOW + timedelta(minutes=1))
    task.receive_signal(signal_ref="sig-1", signal_type="email.received", data={}, resolved_loops=["loop-1"],
                        now=NOW + timedelta(hours=2))
    rebuilt = replay(task)
    assert (rebuilt.status, rebuilt.inbox_count, rebuilt.open_loops) == (S.EXECUTING, task.inbox_count, ["loop-2"])
    assert rebuilt.last_activity_at == task.last_activity_at


@pytest.mark.parametrize(
    ("status", "with_loop", "outcome"),
    [
        ("pending_review", False, S.EXPIRED), ("pending_review", True, S.EXPIRED),
        ("ready", False, S.EXPIRED), ("ready", True, S.ESCALATED),
        ("executing", False, S.EXPIRED), ("executing", True, S.ESCALATED),
        ("waiting", False, S.EXPIRED), ("waiting", True, S.ESCALATED),
        ("dormant", False, S.EXPIRED), ("dormant", True, S.EXPIRED),
        ("escalated", False, S.ESCALATED), ("escalated", True, S.ESCALATED),
    ],
)
def test_every_open_status_has_an_outcome_at_expiry_that_its_transitions_allow(status, with_loop, outcome):
    task = make_task(status, expires_at=NOW)
    if with_loop:
        task.link_loop("reply", now=NOW)
    assert task.is_due_to_expire(NOW)
    assert task.expiry_outcome() is outcome
    if outcome is S.EXPIRED:
        task.expire(reason="old", now=NOW)
    else:
        task.escalate(reason="expired", cause="expiry", now=NOW)
    assert (task.status, task.escalation_cause if outcome is S.ESCALATED else None) == (
        outcome, "expiry" if outcome is S.ESCALATED else None
    )
    assert not task.is_due_to_expire(NOW + timedelta(days=1))


def test_a_closed_task_has_no_expiry_outcome():
    task = make_task("executing")
    task.complete(summary="done", now=NOW)
    with pytest.raises(DomainError):
        task.expiry_outcome()
