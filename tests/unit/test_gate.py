"""The creation gate (DESIGN11 §3, seed 002 §6.2): every trigger, every mode, missing confidence,
types that send nothing."""

from __future__ import annotations

import pytest

from loopline.domain.gate import TRIGGERS, initial_status
from loopline.domain.status import TaskStatus
from loopline.domain.task_types import AD_HOC, TASK_TYPES
from loopline.domain.tenant import TenantSettings

REVIEW, READY, EXECUTING = TaskStatus.PENDING_REVIEW, TaskStatus.READY, TaskStatus.EXECUTING
LIMITED, MANUAL = (TenantSettings(execution_mode=m) for m in ("limited_auto", "manual"))
CHURN, WIN_BACK, LEAD = TASK_TYPES["churn_risk"], TASK_TYPES["win_back"], TASK_TYPES["lead_followup"]


def test_manual_mode_reviews_every_acting_task() -> None:
    status, reason = initial_status(MANUAL, LEAD, 0.99, {})
    assert status is REVIEW and "manual" in reason


def test_default_settings_are_manual() -> None:
    assert initial_status(TenantSettings(), LEAD, 0.99, {})[0] is REVIEW


@pytest.mark.parametrize(("confidence", "expected"), [(0.75, READY), (0.74, REVIEW), (None, REVIEW), (0.05, REVIEW)])
def test_limited_auto_starts_only_what_reaches_the_threshold(confidence: float | None, expected: TaskStatus) -> None:
    assert initial_status(LIMITED, CHURN, confidence, {})[0] is expected


@pytest.mark.parametrize("mode", [LIMITED, MANUAL])
def test_a_confidence_below_the_threshold_goes_to_review_in_every_mode(mode: TenantSettings) -> None:
    for kind in (CHURN, WIN_BACK, LEAD):
        assert initial_status(mode, kind, 0.05, {})[0] is REVIEW


def test_missing_confidence_counts_as_zero() -> None:
    status, reason = initial_status(LIMITED, CHURN, None, {})
    assert status is REVIEW and "confidence 0.0 below churn_risk auto threshold 0.75" in reason


@pytest.mark.parametrize(("kind", "context", "trigger"), [
    (CHURN, {"member_tenure_days": 366}, "member_tenure_over_1_year"),
    (CHURN, {"monthly_value": 200.5}, "monthly_value_over_200"),
    (WIN_BACK, {"member_tenure_days": 731}, "member_tenure_over_2_years"),
    (WIN_BACK, {"cancellation_reason": "Complaint about the coach"}, "cancellation_reason_complaint"),
    (WIN_BACK, {"cancellation_reason": "billing error"}, "cancellation_reason_billing"),
    (TASK_TYPES["payment_recovery"], {}, "always"),
])
def test_each_trigger_sends_to_review_naming_it(kind, context, trigger) -> None:  # noqa: ANN001
    status, reason = initial_status(LIMITED, kind, 1.0, context)
    assert status is REVIEW and trigger in reason


@pytest.mark.parametrize(("kind", "context"), [
    (CHURN, {"member_tenure_days": 365, "monthly_value": 200}),
    (CHURN, {"member_tenure_days": "999"}),  # not a number: not tripped
    (WIN_BACK, {"member_tenure_days": 730, "cancellation_reason": "moved away"}),
])
def test_triggers_at_or_below_their_limits_let_the_task_through(kind, context) -> None:  # noqa: ANN001
    assert initial_status(LIMITED, kind, 1.0, context)[0] is READY


def test_every_trigger_the_registry_names_is_known_to_the_gate() -> None:
    assert {t for kind in TASK_TYPES.values() for t in kind.escalation_triggers} <= set(TRIGGERS)


def test_acting_ad_hoc_always_needs_review() -> None:
    status, reason = initial_status(LIMITED, AD_HOC, 1.0, {})
    assert status is REVIEW and "always" in reason


@pytest.mark.parametrize(("confidence", "expected"), [(None, EXECUTING), (0.5, EXECUTING), (0.49, REVIEW)])
def test_follow_through_tasks_keep_seed_000s_gate(confidence: float | None, expected: TaskStatus) -> None:
    # Whatever the mode: the execution mode is about what Loopline sends by itself.
    for mode in (MANUAL, LIMITED):
        assert initial_status(mode, AD_HOC, confidence, {}, acting=False)[0] is expected
        assert initial_status(mode, TASK_TYPES["meeting_scheduling"], confidence, {}, acting=False)[0] is expected


@pytest.mark.parametrize("mode", [MANUAL, LIMITED])
def test_a_type_that_sends_nothing_passes_its_triggers(mode: TenantSettings) -> None:
    status, reason = initial_status(mode, TASK_TYPES["staff_call_member"], 1.0, {}, acting=False)
    assert status is REVIEW and "escalation trigger always" in reason


def test_a_type_that_sends_nothing_is_held_to_its_threshold() -> None:
    report = TASK_TYPES["monthly_churn_analysis"]
    assert initial_status(LIMITED, report, 0.9, {}, acting=False)[0] is REVIEW
    assert initial_status(LIMITED, report, 0.95, {}, acting=False)[0] is EXECUTING
