"""The task type registry against seed 002 §5 (gym pack) and seed 000 (assistant pack)."""

from pathlib import Path

import pytest

from loopline.domain.status import UnknownStatus
from loopline.domain.task_types import AD_HOC, CADENCES, PRIORITY_ORDER, TASK_TYPES, UnknownTaskType, task_type
from tests.unit.test_task_lifecycle import NOW, make_task

SKILLS = Path(__file__).resolve().parents[2] / "skills"

GYM = ("churn_risk", "win_back", "lead_followup", "payment_recovery", "onboarding", "staff_call_member",
       "monthly_churn_analysis", "system_automation", "ad_hoc")

# type: (priority, (messages, days, turns), cadence, threshold, triggers, outcome signals)
SEED_NUMBERS = {
    "churn_risk": ("high", (3, 14, 6), "standard", 0.75, ("member_tenure_over_1_year", "monthly_value_over_200"),
                   ("checkin", "reply_positive")),
    "win_back": ("high", (3, 30, 4), "slow_burn", 0.80,
                 ("cancellation_reason_complaint", "cancellation_reason_billing", "member_tenure_over_2_years"),
                 ("reactivation", "reply_positive")),
    "lead_followup": ("medium", (5, 21, 8), "patient", 0.70, (), ("trial_booked", "reply_positive", "checkin")),
    "payment_recovery": ("critical", (2, 7, 4), "urgent", 0.90, ("always",), ("payment_succeeded",)),
    "onboarding": ("medium", (4, 30, 6), "slow_burn", 0.85, (), ("checkin_count_3", "reply_positive")),
    "staff_call_member": ("high", (0, 3, 0), "staff_reminders", 0.0, ("always",), ("checkin",)),
    "monthly_churn_analysis": ("low", (0, 1, 5), "single_shot", 0.95, (), ()),
    "system_automation": ("low", (0, 1, 0), "single_shot", 0.95, (), ()),
    "ad_hoc": ("medium", (3, 14, 6), "standard", 0.0, ("always",), ()),
}

OUTCOMES = {
    "churn_risk": ("retained", "verbal_commitment", "engaged_conversation", "self_resolved", "unresponsive",
                   "opted_out", "churned", "escalated_unresolved"),
    "win_back": ("recovered", "interested", "unresponsive", "declined", "opted_out", "self_resolved", "refunded"),
    "lead_followup": ("converted", "engaged", "unresponsive", "not_interested"),
    "payment_recovery": ("recovered", "self_resolved", "acknowledged", "unresponsive", "cancelled", "refunded"),
    "onboarding": ("habit_formed", "some_engagement", "no_show", "unresponsive"),
    "staff_call_member": ("completed", "member_unreachable", "skipped"),
    "monthly_churn_analysis": ("report_produced", "insufficient_data"),
    "system_automation": ("executed", "not_executed"),
    "ad_hoc": ("resolved", "unresponsive", "owner_handled"),
}


@pytest.mark.parametrize("name", sorted(SEED_NUMBERS))
def test_gym_types_carry_the_seeds_numbers(name: str) -> None:
    kind = TASK_TYPES[name]
    priority, (messages, days, turns), cadence, threshold, triggers, signals = SEED_NUMBERS[name]
    assert kind.pack == "gym"
    assert (kind.priority, kind.budget.messages, kind.budget.days, kind.budget.turns) == (priority, messages, days, turns)
    assert kind.cadence.name == cadence
    assert kind.auto_threshold == pytest.approx(threshold)
    assert (kind.escalation_triggers, kind.outcome_signals) == (triggers, signals)
    assert kind.outcome_codes == OUTCOMES[name]
    assert kind.expires_in_days == days
    assert kind.skill == f"{name}.md"


def test_cadences_are_the_seeds_with_the_last_wait_ending_on_the_budgets_last_day() -> None:
    # Seed 002 §5 ends standard, patient and slow_burn with waits of 7, 14 and 21 days, past the budgets
    # of 14, 21 and 30 days they serve; §19.1 and §19.4 walk them ending on the budget's last day instead.
    assert {n: (c.intervals, c.on_exhaustion, c.dormant_check_days, c.dormant_max_days) for n, c in CADENCES.items()} == {
        "standard": ((3, 5, 6), "cancel", None, None),
        "urgent": ((1, 2, 3), "escalate", None, None),
        "patient": ((5, 10, 6), "dormant", 7, 60),
        "slow_burn": ((3, 10, 17), "dormant", 14, 90),
        "single_shot": ((), "cancel", None, None),
    }
    assert CADENCES["standard"].tones == ("friendly_checkin", "direct_offer_help", "final_open_door")
    assert CADENCES["slow_burn"].tones == ("personal_note", "different_angle", "final_door_open")
    staff = TASK_TYPES["staff_call_member"].cadence
    assert (staff.intervals, staff.tones, staff.on_exhaustion) == ((1, 2), ("reminder", "urgent_reminder"), "escalate")


@pytest.mark.parametrize("name", sorted(n for n, t in TASK_TYPES.items() if t.budget.days is not None))
def test_every_cadence_ends_by_its_budgets_last_day(name: str) -> None:
    """Else the budget's end cuts the last wait short and the cadence's own end (dormant, escalate) never comes."""
    kind = TASK_TYPES[name]
    assert kind.budget.days is not None
    assert kind.cadence_days <= kind.budget.days, (
        f"{name}: cadence {kind.cadence.name} waits until day {kind.cadence_days}, past its budget of {kind.budget.days} days")


def test_cadence_days_count_only_the_touches_the_message_budget_allows() -> None:
    assert TASK_TYPES["win_back"].cadence_days == 30  # touches on days 0, 3 and 13, then 17 days for a reply
    assert TASK_TYPES["payment_recovery"].cadence_days == 3  # 2 messages: touches on days 0 and 1, then 2 days
    assert TASK_TYPES["monthly_churn_analysis"].cadence_days == 0


def test_revenue_multipliers_and_the_provisional_outcome() -> None:
    churn = TASK_TYPES["churn_risk"]
    verbal = churn.outcome("verbal_commitment")
    assert verbal is not None and verbal.provisional and verbal.revenue_multiplier == 0.5 and verbal.attribute_revenue
    retained = churn.outcome("retained")
    assert retained is not None and retained.revenue_multiplier == 1.0 and not retained.provisional
    recovered = TASK_TYPES["win_back"].outcome("recovered")
    assert recovered is not None and recovered.revenue_multiplier == 3.0
    unresponsive = churn.outcome("unresponsive")
    assert unresponsive is not None and not unresponsive.attribute_revenue and unresponsive.kind == "neutral"
    assert [o.code for t in TASK_TYPES.values() for o in t.goal.outcomes if o.provisional] == ["verbal_commitment"]
    assert churn.outcome("nonsense") is None


def test_goals_and_signals() -> None:
    churn = TASK_TYPES["churn_risk"].goal
    assert (churn.completion, churn.shape) == ("composite", "fuzzy")
    assert [(s.type, s.weight, s.completes_goal, s.verification_window_days) for s in churn.signals] == [
        ("checkin", 100, True, 14), ("reply_positive", 60, False, 14)]
    assert "Vague positivity" in (churn.judgment_criteria or "")
    assert TASK_TYPES["onboarding"].goal.shape == "progressive"
    assert TASK_TYPES["monthly_churn_analysis"].goal.completion == "deliverable"
    assert TASK_TYPES["staff_call_member"].goal.completion == "human_confirms"


def test_only_the_outreach_types_can_send() -> None:
    assert {n for n, t in TASK_TYPES.items() if t.can_send} == {
        "churn_risk", "win_back", "lead_followup", "payment_recovery", "onboarding", "ad_hoc"}


def test_assistant_pack_keeps_todays_expiry_and_stall_numbers() -> None:
    meeting, inbox = TASK_TYPES["meeting_scheduling"], TASK_TYPES["inbox_management"]
    assert (meeting.pack, meeting.expires_in_days, meeting.stalled_after_days, meeting.review_threshold) == (
        "assistant", 14, 3, 0.5)
    assert (inbox.pack, inbox.expires_in_days, inbox.stalled_after_days, inbox.review_threshold) == (
        "assistant", None, 2, 0.5)
    assert meeting.budget.messages == inbox.budget.messages == 0
    assert AD_HOC.review_threshold == 0.5  # seed 000's gate for follow-through ad_hoc tasks


def test_priority_order_puts_critical_first() -> None:
    assert sorted(TASK_TYPES, key=lambda n: PRIORITY_ORDER[TASK_TYPES[n].priority])[0] == "payment_recovery"


def test_an_unknown_type_is_refused_with_the_closest_and_every_known_type_named() -> None:
    with pytest.raises(UnknownTaskType) as refused:
        task_type("winback")
    assert str(refused.value) == (
        "unknown task type 'winback'; did you mean 'win_back'? the task types are ad_hoc, churn_risk, "
        "inbox_management, lead_followup, meeting_scheduling, monthly_churn_analysis, onboarding, payment_recovery, "
        "staff_call_member, system_automation, win_back")
    with pytest.raises(UnknownTaskType, match=r"'sales_blitz'; the task types are ad_hoc"):
        task_type("sales_blitz")
    assert (task_type(None), task_type("churn_risk")) == (AD_HOC, TASK_TYPES["churn_risk"])


@pytest.mark.parametrize("name", sorted(TASK_TYPES))
def test_every_task_type_has_its_skill_file_naming_its_outcomes(name: str) -> None:
    kind = TASK_TYPES[name]
    text = (SKILLS / kind.skill).read_text()
    missing = [code for code in kind.outcome_codes if f"`{code}`" not in text]
    assert not missing, f"skills/{kind.skill} does not name outcome(s) {missing}"


def test_base_skill_file_exists() -> None:
    assert "## Hard Rules" in (SKILLS / "_base.md").read_text()


def test_progress_note_with_an_unknown_status_lists_the_statuses() -> None:
    with pytest.raises(UnknownStatus, match="pending_review"):
        make_task().note_progress(notes="hm", status="paused", now=NOW)
