"""What an acting task does next: cadence, budgets, exhaustion, dormancy and reply evaluations (domain/outreach.py)."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta, timezone

import pytest

from loopline.domain.outreach import (
    NEEDS_EVIDENCE,
    Close,
    Escalate,
    GoDormant,
    Plan,
    Progress,
    SendReply,
    SendTouch,
    Wait,
    WaitForContact,
    apply_draft,
    apply_evaluation,
    next_step,
)
from loopline.domain.status import TaskStatus

DAY0 = datetime(2026, 3, 2, 9, 0, tzinfo=timezone.utc)
S = TaskStatus
STANDARD = Plan(
    budget_messages=3, budget_turns=6, ends_at=DAY0 + timedelta(days=16), intervals=(3, 5, 7),
    tones=("friendly_checkin", "direct_offer_help", "final_open_door"), on_exhaustion="cancel",
)
OUTCOMES = ("retained", "verbal_commitment", "unresponsive", "opted_out")


def day(n: float) -> datetime:
    return DAY0 + timedelta(days=n)


def progress(status: S = S.READY, *, touch: int = 0, messages: int = 0, turns: int = 0,
             next_touch_at: datetime | None = None, dormant_until: datetime | None = None,
             awaiting: bool = False) -> Progress:
    return Progress(status, touch, messages, turns, next_touch_at, dormant_until, awaiting)


def run_cadence(plan: Plan, until: float) -> list[tuple[float, object]]:
    """Plays the cadence with no reply: each step at the time the previous one asked for, as the tick would."""
    state, now, seen = progress(), day(0), []
    while now <= day(until):
        action = next_step(plan, state, now)
        seen.append(((now - DAY0).days, action))
        if isinstance(action, SendTouch):
            state = replace(state, status=S.WAITING, touch=action.touch, messages_used=state.messages_used + 1,
                            next_touch_at=plan.after_touch(action.touch, now))
            now = min(state.next_touch_at, plan.ends_at or state.next_touch_at)
        else:
            break
    return seen


def test_standard_cadence_sends_touches_at_days_0_3_8_then_closes_unresponsive():
    plan = replace(STANDARD, ends_at=None)
    seen = run_cadence(plan, until=30)
    assert [(d, type(a).__name__) for d, a in seen] == [
        (0, "SendTouch"), (3, "SendTouch"), (8, "SendTouch"), (15, "Close")]
    assert [a.tone for _, a in seen[:3]] == ["friendly_checkin", "direct_offer_help", "final_open_door"]
    assert seen[-1][1] == Close("unresponsive", S.CANCELLED, seen[-1][1].reason)
    assert "3 messages" in seen[-1][1].reason


def test_first_touch_uses_the_creation_draft_when_there_is_one():
    assert next_step(replace(STANDARD, has_draft=True), progress(), day(0)) == SendTouch(1, "friendly_checkin", True)
    assert next_step(STANDARD, progress(), day(0)) == SendTouch(1, "friendly_checkin", False)


def test_time_budget_closes_the_task_unresponsive_before_any_other_rule():
    state = progress(S.WAITING, touch=1, messages=1, next_touch_at=day(3), turns=9)
    action = next_step(STANDARD, state, STANDARD.ends_at)
    assert isinstance(action, Close) and action.outcome == "unresponsive" and "time budget" in action.reason


def test_a_touch_not_yet_due_waits_until_it_is():
    state = progress(S.WAITING, touch=1, messages=1, next_touch_at=day(3))
    assert next_step(STANDARD, state, day(2)) == Wait(day(3), "the next touch is not due yet")


def test_spent_message_budget_exhausts_the_cadence_even_with_touches_left():
    plan = replace(STANDARD, budget_messages=2)
    state = progress(S.WAITING, touch=2, messages=2, next_touch_at=day(8))
    action = next_step(plan, state, day(8))
    assert isinstance(action, Close) and "messages" in action.reason


def test_spent_turn_budget_escalates():
    state = progress(S.EXECUTING, touch=1, messages=1, turns=6, next_touch_at=day(3))
    action = next_step(STANDARD, state, day(3))
    assert isinstance(action, Escalate) and action.cause == "turn_budget"


@pytest.mark.parametrize("on_exhaustion, kind", [("cancel", Close), ("escalate", Escalate), ("dormant", GoDormant)])
def test_exhaustion_follows_the_cadence(on_exhaustion, kind):
    plan = replace(STANDARD, ends_at=None, on_exhaustion=on_exhaustion, dormant_max_days=90)
    state = progress(S.WAITING, touch=3, messages=3, next_touch_at=day(15))
    action = next_step(plan, state, day(15))
    assert isinstance(action, kind)
    if isinstance(action, GoDormant):
        assert action.until == day(15 + 90)


@pytest.mark.parametrize("on_exhaustion, kind", [("cancel", Close), ("escalate", Escalate), ("dormant", GoDormant)])
def test_the_budgets_last_day_ends_a_task_waiting_on_the_contact_as_its_cadence_says(on_exhaustion, kind):
    plan = replace(STANDARD, on_exhaustion=on_exhaustion, dormant_max_days=90)
    state = progress(S.WAITING, touch=2, messages=2, next_touch_at=day(20))
    action = next_step(plan, state, plan.ends_at)
    assert isinstance(action, kind) and "time budget" in action.reason


@pytest.mark.parametrize("state", [progress(S.READY), progress(S.WAITING, touch=2, messages=2, awaiting=True)])
def test_the_budgets_last_day_closes_a_task_not_waiting_on_the_contact_alone_unresponsive(state):
    # Never sent: nothing to stay dormant on; a draft still being written would go out while dormant.
    plan = replace(STANDARD, on_exhaustion="dormant", dormant_max_days=90)
    action = next_step(plan, state, plan.ends_at)
    assert isinstance(action, Close) and action.outcome == "unresponsive"


def test_a_reply_that_woke_a_dormant_task_past_its_budgets_end_is_still_evaluated():
    woken = progress(S.EXECUTING, touch=3, messages=3, turns=1, awaiting=True, dormant_until=day(120))
    assert next_step(STANDARD, woken, day(45)) == Wait(None, "the model is reading the contact's reply")


def test_dormant_task_sends_nothing_and_closes_unresponsive_at_its_last_day():
    state = progress(S.DORMANT, touch=3, messages=3, dormant_until=day(75))
    assert isinstance(next_step(STANDARD, state, day(40)), Wait)
    action = next_step(replace(STANDARD, ends_at=None), state, day(75))
    assert isinstance(action, Close) and action.outcome == "unresponsive"


def test_after_a_reply_no_cadence_touch_is_due():
    state = progress(S.WAITING, touch=1, messages=2, next_touch_at=None)
    assert isinstance(next_step(STANDARD, state, day(10)), Wait)


@pytest.mark.parametrize("status", [S.PENDING_REVIEW, S.ESCALATED, S.COMPLETED, S.CANCELLED])
def test_tasks_not_the_agents_to_work_are_left_alone(status):
    assert isinstance(next_step(STANDARD, progress(status), day(0)), Wait)


def test_a_task_awaiting_the_model_does_not_step_again():
    assert isinstance(next_step(STANDARD, progress(awaiting=True), day(0)), Wait)


def test_single_shot_waits_for_its_budget_end_then_closes():
    plan = replace(STANDARD, intervals=(), tones=())
    assert plan.after_touch(1, day(0)) == plan.ends_at
    action = next_step(plan, progress(S.WAITING, touch=1, messages=1, next_touch_at=plan.ends_at), plan.ends_at)
    assert isinstance(action, Close) and action.outcome == "unresponsive"


REPLYING = progress(S.EXECUTING, touch=1, messages=1, turns=1)


def evaluate(output: dict, confidence: float = 0.9, state: Progress = REPLYING):
    return apply_evaluation(output, confidence, plan=STANDARD, progress=state, outcomes=OUTCOMES, now=day(2))


def test_confident_reply_is_sent():
    assert evaluate({"decision": "reply", "reply_body": "See you Thursday!"}) == SendReply("See you Thursday!")


def test_unsure_reply_escalates_with_the_draft_saved_for_the_owner():
    action = evaluate({"decision": "reply", "reply_body": "Maybe?"}, confidence=0.49)
    assert isinstance(action, Escalate) and action.draft == {"body": "Maybe?"} and "0.49" in action.reason


def test_reply_with_no_message_budget_left_escalates():
    action = evaluate({"decision": "reply", "reply_body": "Hi"}, state=replace(REPLYING, messages_used=3))
    assert isinstance(action, Escalate) and action.cause == "message_budget"


def test_close_needs_an_outcome_of_the_types_spectrum():
    assert evaluate({"decision": "close", "outcome": "verbal_commitment", "reasoning": "booked"}) == Close(
        "verbal_commitment", S.COMPLETED, "booked")
    action = evaluate({"decision": "close", "outcome": "delighted"})
    assert isinstance(action, Escalate) and "delighted" in action.reason


@pytest.mark.parametrize(("confidence", "closes"), [(0.6, True), (0.59, False), (0.05, False)])
def test_a_close_needs_a_confidence_of_0_6(confidence: float, closes: bool):
    action = evaluate({"decision": "close", "outcome": "verbal_commitment", "reasoning": "booked"}, confidence)
    assert isinstance(action, Close) is closes
    assert closes or (isinstance(action, Escalate) and action.cause == "low_confidence")


@pytest.mark.parametrize("outcome", sorted(NEEDS_EVIDENCE))
def test_a_reply_never_closes_with_an_outcome_that_needs_evidence_the_owner_decides(outcome: str):
    """"Mark this task won": however sure the model is, a contact's words show no check-in or payment."""
    action = apply_evaluation({"decision": "close", "outcome": outcome, "reasoning": "they said so"}, 0.99,
                              plan=STANDARD, progress=REPLYING, outcomes=(outcome, "opted_out"), now=day(2))
    assert isinstance(action, Escalate) and action.cause == "needs_evidence" and outcome in action.reason


def test_a_reply_closes_at_most_with_the_types_provisional_outcome():
    action = apply_evaluation({"decision": "close", "outcome": "retained", "reasoning": "back on Monday"}, 0.99,
                              plan=STANDARD, progress=REPLYING, outcomes=OUTCOMES, now=day(2),
                              provisional=("verbal_commitment",))
    assert isinstance(action, Close) and action.outcome == "verbal_commitment"
    assert "would close as retained, which a reply alone cannot show" in action.reason


def test_below_the_close_floor_the_owner_decides_before_any_outcome_is_weighed():
    action = evaluate({"decision": "close", "outcome": "retained", "reasoning": "won"}, 0.05)
    assert isinstance(action, Escalate) and action.cause == "low_confidence"


def test_wait_resumes_the_cadence_after_wait_days():
    assert evaluate({"decision": "wait", "wait_days": 5}).next_touch_at == day(7)
    assert evaluate({"decision": "wait"}).next_touch_at == day(5)
    assert isinstance(evaluate({"decision": "wait"}), WaitForContact)


def test_escalate_hands_the_task_to_the_owner_with_the_reasoning():
    assert evaluate({"decision": "escalate", "reasoning": "asks about a refund"}) == Escalate(
        "asks about a refund", "model_escalated")


def test_drafted_touch_is_sent_only_when_confident_and_within_budget():
    state = progress(S.WAITING, touch=1, messages=1, next_touch_at=day(3))
    assert apply_draft({"subject": "s", "body": "b"}, 0.8, plan=STANDARD, progress=state) == SendTouch(
        2, "direct_offer_help", False)
    low = apply_draft({"subject": "s", "body": "b"}, 0.2, plan=STANDARD, progress=state)
    assert isinstance(low, Escalate) and low.draft == {"subject": "s", "body": "b"}
    spent = apply_draft({"subject": "s", "body": "b"}, 0.9, plan=STANDARD, progress=replace(state, messages_used=3))
    assert isinstance(spent, Escalate) and spent.cause == "message_budget"


def test_a_touch_the_owner_approves_first_is_held_with_its_draft_whatever_its_confidence():
    state = progress(S.WAITING, touch=1, messages=1, next_touch_at=day(3))
    held = apply_draft({"subject": "s", "body": "b"}, 0.95, plan=STANDARD, progress=state,
                       owner_approves="the execution mode is manual")
    assert isinstance(held, Escalate) and (held.cause, held.draft) == ("manual_mode", {"subject": "s", "body": "b"})
    assert "touch 2 is due, and the execution mode is manual" in held.reason


def test_a_deferred_send_waits_for_its_limit_then_goes_out():
    state = replace(progress(S.WAITING, touch=1, messages=1, next_touch_at=day(3)), deferred_until=day(4))
    assert next_step(STANDARD, state, day(3.5)) == Wait(day(4), "a send limit deferred the message")
    assert isinstance(next_step(STANDARD, state, day(4)), SendTouch)


def test_no_touch_goes_out_while_the_contact_is_away_not_even_the_first() -> None:
    away = replace(progress(), away_until=day(9))
    assert next_step(STANDARD, away, day(1)) == Wait(day(9), "the contact is away, as their automatic reply said")
    assert next_step(STANDARD, away, day(9)) == SendTouch(1, "friendly_checkin", use_draft=False)
    waiting = replace(progress(S.WAITING, touch=1, messages=1, next_touch_at=day(3)), away_until=day(9))
    assert isinstance(next_step(STANDARD, waiting, day(3)), Wait)
    assert next_step(STANDARD, waiting, day(9)) == SendTouch(2, "direct_offer_help", use_draft=False)
