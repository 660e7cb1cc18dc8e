"""The completion evaluator's rules (seed 002 §16.2), as pure functions: what a signal does to a task in each state."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from loopline.domain.completion import Ignore, ObservedSignal, Revise, TaskView, evaluate, is_commitment, someone_else
from loopline.domain.outreach import Close
from loopline.domain.status import TaskStatus
from loopline.domain.task_types import TASK_TYPES

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=timezone.utc)
CHURN, WIN_BACK = TASK_TYPES["churn_risk"], TASK_TYPES["win_back"]


def view(status: str = "waiting", outcome: str | None = None, closed_days: float | None = None,
         reached_out: bool = True) -> TaskView:
    return TaskView(status=TaskStatus(status), outcome=outcome, reached_out=reached_out, created_on=T0,
                    closed_at=T0 + timedelta(days=closed_days) if closed_days is not None else None)


def signal(kind: str, days: float, **data: object) -> ObservedSignal:
    return ObservedSignal.of(f"s-{kind}", T0 + timedelta(days=days), {"outcome": kind, **data})


@pytest.mark.parametrize(("status", "code"), [
    ("ready", "self_resolved"), ("waiting", "retained"), ("dormant", "retained"), ("escalated", "retained")])
def test_a_checkin_closes_an_open_churn_task(status: str, code: str) -> None:
    verdict = evaluate(view(status, reached_out=status != "ready"), signal("checkin", 2), task_type=CHURN)
    assert isinstance(verdict, Close) and (verdict.outcome, verdict.status) == (code, TaskStatus.COMPLETED)


def test_a_cancellation_closes_a_churn_task_cancelled_as_churned() -> None:
    verdict = evaluate(view(), signal("cancellation", 2), task_type=CHURN)
    assert verdict == Close("churned", TaskStatus.CANCELLED, "cancellation observed")


def test_a_task_awaiting_review_and_a_signal_from_before_the_task_change_nothing() -> None:
    assert isinstance(evaluate(view("pending_review"), signal("checkin", 1), task_type=CHURN), Ignore)
    assert isinstance(evaluate(view(), signal("checkin", -1), task_type=CHURN), Ignore)
    assert isinstance(evaluate(view(), signal("reactivation", 1), task_type=CHURN), Ignore)  # churn_risk maps none


@pytest.mark.parametrize(("outcome", "days", "expected"), [
    ("unresponsive", 13.9, Revise), ("verbal_commitment", 1, Revise), ("unresponsive", 14.1, Ignore),
    ("retained", 1, Ignore), ("self_resolved", 1, Ignore)])
def test_after_the_close_only_an_unsettled_outcome_inside_the_window_is_revised(
        outcome: str, days: float, expected: type) -> None:
    verdict = evaluate(view("cancelled", outcome, closed_days=10), signal("checkin", 10 + days), task_type=CHURN)
    assert isinstance(verdict, expected)
    if isinstance(verdict, Revise):
        assert (verdict.code, verdict.cause) == ("retained", "late_attribution")


def test_a_refund_undoes_only_an_outcome_that_carried_revenue() -> None:
    recovered = evaluate(view("completed", "recovered", closed_days=5), signal("refund", 7), task_type=WIN_BACK)
    assert isinstance(recovered, Revise) and (recovered.code, recovered.cause) == ("refunded", "undone")
    assert isinstance(evaluate(view("cancelled", "unresponsive", closed_days=5), signal("refund", 7), task_type=WIN_BACK),
                      Ignore)
    assert isinstance(evaluate(view(), signal("refund", 1), task_type=WIN_BACK), Ignore)


def test_a_signal_of_another_account_is_not_the_contacts_unless_the_task_names_it() -> None:
    family = signal("checkin", 1, account="Bob@example.com")
    assert someone_else(family, "ann@example.com", {}) == "Bob@example.com"
    assert someone_else(family, "ann@example.com", {"account": "bob@example.com"}) is None
    assert someone_else(signal("checkin", 1, member="ANN@example.com"), "ann@example.com", {}) is None


@pytest.mark.parametrize(("words", "commits"), [
    ("See you Tuesday at 6!", True), ("I'll be there tomorrow", True), ("Thanks, I'll think about it.", False),
    ("Maybe next week", False), ("Not sure yet, we'll see", False)])
def test_a_hedge_is_no_commitment(words: str, commits: bool) -> None:
    assert is_commitment(words) is commits
