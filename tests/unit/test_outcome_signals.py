"""Outcome signals (issue 20 item 1, seed 002 §9, §16, §30) on the in-memory store: an `outcome.observed` closes the
contact's task with its type's outcome, is attributed late after the close, undoes a refunded recovery, confirms or
lets a verbal commitment be downgraded, closes a dormant task, and stops a send whose goal already happened."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from loopline.domain import ids
from loopline.domain.completion import ObservedSignal
from loopline.domain.contact_outcomes import ContactOutcomes
from loopline.domain.task import Task
from loopline.processors.application import UnitOfWork
from loopline.processors.handlers.goal_signals import contact_outcomes
from tests.unit.test_owner_answers import ANN, DAY0, Gym, gym

COMMITS = {"decision": "close", "outcome": "verbal_commitment", "confidence": 0.8, "reasoning": "she named Tuesday"}


def observed(world: Gym, days: float, outcome: str, **data: Any) -> str:
    result = world.publish("signal", "outcome.observed", days, contact=ANN, outcome=outcome, **data)
    assert result.accepted, result.detail
    return str(result.detail)


def of_type(world: Gym, event_class: type) -> list[Any]:
    return [e for e in world.events() if isinstance(e, event_class)]


def closed_with_a_verbal_commitment(days: float = 1) -> Gym:
    world = gym()
    world.tick(0.01)  # touch 1
    world.model.evaluation = COMMITS
    world.reply(days, "I'll come on Tuesday at 6!")
    task = world.task()
    assert (task.status, task.outcome) == ("completed", "verbal_commitment")
    return world


def test_a_checkin_after_outreach_closes_the_churn_task_retained_worth_the_average_value() -> None:
    world = gym()
    world.tick(0.01)

    said = observed(world, 2, "checkin")

    task = world.task()
    assert (task.status, task.outcome, task.attributed_value) == ("completed", "retained", 150.0)
    [evidence] = of_type(world, Task.OutcomeSignalReceived)
    assert (evidence.signal_kind, evidence.effect) == ("checkin", "closed as retained: checkin observed")
    assert "closed as retained" in said and world.model.requests[-1].point == "draft_message"  # no model call for it


def payment_recovery_sent() -> Gym:
    world = gym(task_type="payment_recovery")  # its trigger `always`: the owner approves it first
    assert world.command("task.approve", 0.005, task_id="ann").accepted
    world.tick(0.01)
    assert world.task().status == "waiting"
    return world


def test_a_payments_amount_is_its_value_and_a_later_refund_undoes_the_recovery() -> None:
    world = payment_recovery_sent()
    observed(world, 1, "payment_succeeded", value=89.0)
    assert (world.task().outcome, world.task().attributed_value) == ("recovered", 89.0)

    observed(world, 3, "refund", value=89.0)

    task = world.task()
    assert (task.status, task.outcome, task.attributed_value) == ("completed", "refunded", 0.0)
    [undone] = of_type(world, Task.OutcomeUndone)
    assert (undone.previous, undone.signal_kind) == ("recovered", "refund")


def test_a_refund_before_any_payment_changes_nothing() -> None:
    world = payment_recovery_sent()
    said = observed(world, 1, "refund", value=20.0)
    assert world.task().status == "waiting" and "changes nothing" in said


def test_a_checkin_by_a_family_members_account_is_not_the_contacts() -> None:
    world = gym()
    world.tick(0.01)

    said = observed(world, 2, "checkin", account="bob@example.com")

    assert world.task().status == "waiting" and "another member's account (bob@example.com)" in said


def test_a_checkin_before_any_message_went_out_is_self_resolved_and_credits_nothing() -> None:
    world = gym()
    observed(world, 0.001, "checkin")
    task = world.task()
    assert (task.outcome, task.attributed_value) == ("self_resolved", 0.0) and world.sent() == []


def test_the_stale_guard_closes_an_approved_task_whose_member_checked_in_during_review_instead_of_sending() -> None:
    world = gym(confidence=0.5)  # pending_review
    observed(world, 0.5, "checkin")
    assert world.task().status == "pending_review"  # the owner's to decide; the signal is kept

    assert world.command("task.approve", 2, task_id="ann").accepted
    world.tick(2.01)

    task = world.task()
    assert (task.status, task.outcome) == ("completed", "self_resolved")
    assert world.sent() == [] and world.model.requests == []


def test_a_checkin_after_the_task_closed_unresponsive_is_attributed_late_inside_the_window() -> None:
    world = gym()
    for day in (0.01, 3.01, 8.01, 14.01):  # three touches, then the cadence is spent
        world.tick(day)
    assert (world.task().status, world.task().outcome) == ("cancelled", "unresponsive")

    observed(world, 17, "checkin")

    task = world.task()
    assert (task.status, task.outcome, task.attributed_value) == ("cancelled", "retained", 150.0)
    [late] = of_type(world, Task.AttributedLate)
    assert (late.previous, late.code) == ("unresponsive", "retained")
    assert [v.late for v in of_type(world, Task.ValueAttributed)] == [True]


def test_a_checkin_past_the_attribution_window_is_kept_but_changes_nothing() -> None:
    world = gym()
    for day in (0.01, 3.01, 8.01, 14.01):
        world.tick(day)
    said = observed(world, 14.01 + 15, "checkin")
    assert world.task().outcome == "unresponsive" and "past the 14-day attribution window" in said


def test_a_verbal_commitment_with_no_checkin_in_its_window_is_downgraded() -> None:
    world = closed_with_a_verbal_commitment()
    assert world.task().attributed_value == 75.0  # half credit until verified

    world.tick(1 + 14.01)

    task = world.task()
    assert (task.status, task.outcome, task.attributed_value) == ("completed", "engaged_conversation", 0.0)
    [downgraded] = of_type(world, Task.OutcomeDowngraded)
    assert downgraded.previous == "verbal_commitment"
    world.tick(1 + 30)
    assert len(of_type(world, Task.OutcomeDowngraded)) == 1


def test_a_checkin_inside_the_window_confirms_a_verbal_commitment() -> None:
    world = closed_with_a_verbal_commitment()
    observed(world, 4, "checkin")
    world.tick(1 + 14.01)
    task = world.task()
    assert (task.outcome, task.attributed_value) == ("retained", 150.0) and not of_type(world, Task.OutcomeDowngraded)


def test_a_reply_that_only_hedges_is_no_verbal_commitment() -> None:
    world = gym()
    world.tick(0.01)
    world.model.evaluation = COMMITS
    world.reply(1, "Thanks, I'll think about it.")
    assert world.task().outcome == "engaged_conversation"


def dormant_win_back() -> Gym:
    world = gym(task_type="win_back")
    for day in (0.01, 3.01, 13.01, 30.01):  # slow_burn: three touches, dormant at the budget's end
        world.tick(day)
    assert world.task().status == "dormant"
    return world


def test_a_dormant_member_who_reactivates_closes_recovered_at_three_months_value() -> None:
    world = dormant_win_back()

    observed(world, 45, "reactivation")

    task = world.task()
    assert (task.status, task.outcome, task.attributed_value) == ("completed", "recovered", 450.0)


def test_the_dormant_check_finds_a_signal_the_task_never_acted_on() -> None:
    world = dormant_win_back()
    uow = UnitOfWork(world.app)  # kept for the contact, as a signal applied before the task's creation would be
    contact_outcomes(uow, "gym", ANN, DAY0).observe(
        ObservedSignal(ref="late-sync", kind="reactivation", value=None, at=DAY0 + timedelta(days=33)))
    uow.commit()

    world.tick(30.01 + 7.01)  # win_back's dormant_check_days: 14; not due yet
    assert world.task().status == "dormant"
    world.tick(30.01 + 14.01)

    task = world.task()
    assert (task.status, task.outcome) == ("completed", "recovered")
    assert world.sent()[-1].details["touch"] == 3  # nothing sent while dormant


def test_a_signal_about_a_contact_without_tasks_is_kept_for_them() -> None:
    world = gym()
    result = world.publish("signal", "outcome.observed", 1, contact="zoe@example.com", outcome="checkin")
    assert result.accepted and "no task of theirs counts it" in str(result.detail)
    kept = UnitOfWork(world.app).get(ids.contact_outcomes_id("gym", "zoe@example.com"), ContactOutcomes)
    assert kept is not None and [signal.kind for signal in kept.since(DAY0)] == ["checkin"]
