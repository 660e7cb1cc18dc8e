"""Goal progress and the evaluation record (issue 20, items 2 and 3) on the in-memory store: every close is
evaluated with a score and a budget snapshot, progressive goals reach milestones, the model's judgment sets
progress, and the owner overrides, reopens and rates outcomes."""

from __future__ import annotations

from typing import Any

import pytest

from loopline.domain.goal_progress import (
    milestone_names,
    outcome_score,
    progress_layer,
    recommend,
    signal_progress,
)
from loopline.domain.task import Task
from loopline.domain.task_types import task_type
from tests.unit.test_owner_answers import ANN, Gym, gym
from tests.unit.test_task_lifecycle import make_task

CLOSE = {"decision": "close", "outcome": "engaged_conversation", "confidence": 0.9, "reasoning": "a nice chat"}


def evaluations(world: Gym, ref: str = "ann") -> list[Task.Evaluated]:
    return [e for e in world.events(ref) if isinstance(e, Task.Evaluated)]


def closed_by_the_model(evaluation: dict[str, Any] = CLOSE) -> Gym:
    world = gym()
    world.tick(0.01)  # touch 1
    world.model.evaluation = evaluation
    world.reply(1, "Thanks for checking in, all good here")
    assert world.task().is_closed
    return world


def test_a_close_by_the_models_evaluation_records_its_score_and_budget_in_the_same_save() -> None:
    world = closed_by_the_model()
    [evaluated] = evaluations(world)
    events = world.events()
    assert events.index(evaluated) == next(i for i, e in enumerate(events) if isinstance(e, Task.Completed)) + 1
    assert (evaluated.outcome, evaluated.outcome_score, evaluated.status) == ("engaged_conversation", 0, "completed")
    assert "engaged_conversation (neutral)" in evaluated.score_reason
    assert evaluated.budget == {"messages_used": 1, "messages_max": 3, "turns_used": 1, "turns_max": 6,
                                "days_used": 1.0, "days_max": 14.0}


@pytest.mark.parametrize("close, status, outcome, score", [
    (lambda w: w.command("task.takeover", 1.5, task_id="ann", reason="I called her"), "completed", "owner_handled", 0),
    (lambda w: w.command("task.cancel", 1.5, task_id="ann", reason="she moved away"), "cancelled", None, 0),
    (lambda w: w.reply(1.5, "STOP"), "cancelled", "opted_out", 0),
    (lambda w: w.tick(15), "cancelled", "unresponsive", 0),
])
def test_every_close_path_records_one_evaluation(close: Any, status: str, outcome: str | None, score: int) -> None:
    world = gym()
    world.tick(0.01)
    close(world)
    [evaluated] = evaluations(world)
    assert (world.task().status, evaluated.status, evaluated.outcome, evaluated.outcome_score) == (
        status, status, outcome, score)


def test_a_rejected_proposal_and_a_completed_follow_through_task_are_evaluated_too() -> None:
    world = gym(confidence=0.5)  # pending_review
    assert world.command("task.reject", 0.1, task_id="ann", reason="not now").accepted
    assert [(e.status, e.outcome_score) for e in evaluations(world)] == [("cancelled", 0)]
    assert world.command("task.create", 0.2, task_id="notes", title="Send the notes").accepted
    assert world.command("task.complete", 0.3, task_id="notes", summary="sent").accepted
    [evaluated] = evaluations(world, "notes")
    assert (evaluated.outcome_score, evaluated.budget["messages_max"]) == (100, None)
    assert evaluated.score_reason == "completed with no outcome code: the goal is taken as reached"
    assert world.command("task.reopen", 0.4, task_id="notes", reason="the notes had a mistake").accepted
    assert world.task("notes").status == "executing"
    assert world.command("task.complete", 0.5, task_id="notes", summary="sent again").accepted
    assert len(evaluations(world, "notes")) == 2


def test_the_close_notice_asks_the_owner_whether_the_outcome_was_right() -> None:
    [notice] = [e for e in closed_by_the_model().events() if isinstance(e, Task.UserNotified)
                and e.kind == "task_completed"]
    assert [action["command"] for action in notice.actions] == ["task.rate", "task.override_outcome", "task.reopen"]


def test_the_owner_overrides_a_closed_outcome_and_it_is_evaluated_again() -> None:
    world = closed_by_the_model()
    outcome = world.command("task.override_outcome", 3, task_id="ann", outcome="retained", reason="she came Tuesday")
    assert outcome.accepted and outcome.detail == "ann: outcome engaged_conversation overridden with retained"
    [overridden] = [e for e in world.events() if isinstance(e, Task.OutcomeOverridden)]
    assert (overridden.previous, overridden.code, overridden.by) == ("engaged_conversation", "retained", "owner")
    assert [(e.outcome, e.outcome_score) for e in evaluations(world)] == [("engaged_conversation", 0), ("retained", 100)]
    assert world.task().outcome == "retained" and world.task().attributed_value == 150


def test_an_override_names_the_types_outcomes_and_refuses_an_open_task() -> None:
    world = closed_by_the_model()
    unknown = world.command("task.override_outcome", 3, task_id="ann", outcome="converted", reason="x")
    assert not unknown.accepted and "not an outcome of task type churn_risk" in unknown.detail
    assert "retained" in unknown.detail
    open_task = gym()
    refused = open_task.command("task.override_outcome", 1, task_id="ann", outcome="retained", reason="x")
    assert not refused.accepted and "task.takeover" in refused.detail


def test_a_reopened_task_goes_back_to_work_with_its_budgets_used_and_a_fresh_time_budget() -> None:
    world = closed_by_the_model()
    outcome = world.command("task.reopen", 3, task_id="ann", reason="she has not come in yet", by="sam")
    assert outcome.accepted, outcome.detail
    task = world.task()
    assert (task.status, task.outcome, task.messages_used, task.turns_used) == ("waiting", None, 1, 1)
    [reopened] = [e for e in world.events() if isinstance(e, Task.Reopened)]
    assert (reopened.previous_status, reopened.previous_outcome, reopened.by) == ("completed", "engaged_conversation", "sam")
    assert (task.expires_at - reopened.timestamp).days == 14
    assert (task.next_touch_at - reopened.timestamp).days == 3  # the standard cadence's wait after touch 1

    world.tick(6.1)
    assert world.task().touch == 2 and len(world.sent()) == 2  # the cadence went on
    world.model.evaluation = {**CLOSE, "outcome": "verbal_commitment", "reasoning": "she named Tuesday"}
    world.reply(7, "I'll be there Tuesday")
    assert [(e.outcome, e.outcome_score) for e in evaluations(world)][-1] == ("verbal_commitment", 60)


def test_a_task_reopened_after_a_checkin_closed_it_is_not_closed_again_by_the_same_checkin() -> None:
    world = gym()
    world.tick(0.01)  # touch 1
    checkin(world, 1)
    assert (world.task().status, world.task().outcome) == ("completed", "retained")
    assert world.command("task.reopen", 2, task_id="ann", reason="that was her daughter").accepted
    world.tick(6)  # the next touch: the stale guard reads her signals first
    task = world.task()
    assert (task.status, task.outcome, task.touch) == ("waiting", None, 2)
    credited = [e.outcome for e in world.events() if isinstance(e, Task.ValueAttributed)]
    assert credited == ["retained"]


def test_only_a_closed_task_is_reopened_and_not_beside_a_newer_task_for_its_contact() -> None:
    refused = gym().command("task.reopen", 1, task_id="ann", reason="x")
    assert not refused.accepted and "nothing to reopen" in refused.detail
    world = closed_by_the_model()
    assert world.command("task.create", 2, task_id="ann-2", title="Ann again", task_type="churn_risk", contact=ANN,
                         confidence=0.9).accepted
    superseded = world.command("task.reopen", 3, task_id="ann", reason="x")
    assert not superseded.accepted and "task ann-2 works ann@example.com as churn_risk now" in superseded.detail


def test_the_owner_rates_an_outcome_up_or_down_with_why() -> None:
    world = closed_by_the_model()
    assert world.command("task.rate", 3, task_id="ann", rating="down", why="would_have_come_back_anyway",
                         note="she always comes back in spring").accepted
    [rated] = [e for e in world.events() if isinstance(e, Task.OutcomeRated)]
    assert (rated.rating, rated.why, rated.outcome, rated.note) == (
        "down", "would_have_come_back_anyway", "engaged_conversation", "she always comes back in spring")
    refused = gym().command("task.rate", 1, task_id="ann", rating="up")
    assert not refused.accepted and "rate it once it is closed or escalated" in refused.detail


def onboarding() -> Gym:
    world = Gym()
    assert world.command("tenant.configure", 0, execution_mode="limited_auto").accepted
    assert world.command("task.create", 0, task_id="ann", title="Welcome Ann", task_type="onboarding", contact=ANN,
                         confidence=0.95).accepted
    world.tick(0.01)
    return world


def checkin(world: Gym, day: float, contact: str = ANN) -> str:
    outcome = world.publish("signal", "outcome.observed", day, contact=contact, outcome="checkin")
    assert outcome.accepted, outcome.detail
    return outcome.detail


def test_a_progressive_goal_reaches_its_milestones_and_closes_at_the_last() -> None:
    world = onboarding()
    assert checkin(world, 1) == "'Welcome Ann': goal progress 33% (checkin)"
    assert checkin(world, 3) == "'Welcome Ann': goal progress 66% (checkin)"
    assert world.task().progress["milestones"] == ["first_checkin", "second_checkin"]
    assert "closed as habit_formed" in checkin(world, 5)
    progressed = [(e.score, e.recommended, e.source) for e in world.events() if isinstance(e, Task.GoalProgressed)]
    assert progressed == [(33, "continue", "signal"), (66, "continue", "signal"), (100, "complete", "signal")]
    [evaluated] = evaluations(world)
    assert (evaluated.outcome, evaluated.outcome_score) == ("habit_formed", 100)
    assert world.task().attributed_value == 150


def test_the_models_judgment_sets_progress_and_the_next_prompt_shows_it() -> None:
    world = gym()
    world.tick(0.01)
    world.model.evaluation = {"decision": "wait", "wait_days": 3, "goal_progress": 40, "confidence": 0.7,
                              "reasoning": "she sounds keen but named no day"}
    world.reply(1, "Yeah I should come back soon")
    [progressed] = [e for e in world.events() if isinstance(e, Task.GoalProgressed)]
    assert (progressed.score, progressed.source, progressed.evidence_type, progressed.recommended) == (
        40, "model", "inferred", "continue")
    world.tick(4.1)  # touch 2 is drafted with the progress in view
    assert "GOAL PROGRESS: 40% (inferred)" in world.model.requests[-1].prompt.messages[0]["content"]


def test_a_version_4_snapshot_loads_with_no_goal_progress() -> None:
    snapshot = Task.Snapshot.take(make_task())
    state = {k: v for k, v in snapshot.state.items() if k != "progress"} | {"class_version": 4}
    old = Task.Snapshot(originator_id=snapshot.originator_id, originator_version=snapshot.originator_version,
                        timestamp=snapshot.timestamp, topic=snapshot.topic, state=state)
    assert old.mutate(None).progress is None


def test_section_37_3_recommends_in_its_order() -> None:
    assert recommend(100, 0.9, "concrete_signal", outcome_kind="positive", budget_low=False) == "complete"
    assert recommend(100, 0.75, "inferred", outcome_kind=None, budget_low=False) == "complete"
    assert recommend(60, 0.65, "verbal_commitment", outcome_kind="positive", budget_low=False) == "complete"
    assert recommend(50, 0.9, "inferred", outcome_kind=None, budget_low=False) == "continue"
    assert recommend(0, 0.3, "none", outcome_kind=None, budget_low=False) == "wait_and_verify"
    assert recommend(0, 0.3, "none", outcome_kind=None, budget_low=True) == "escalate"
    assert recommend(0, 0.9, "inferred", outcome_kind="negative", budget_low=False) == "close_as_neutral"


def test_scores_follow_the_outcome_and_the_progress_recorded() -> None:
    win_back = task_type("win_back")
    assert outcome_score(win_back.outcome("recovered"), status="completed", progress=None, paid_goal=True)[0] == 100
    assert outcome_score(win_back.outcome("interested"), status="completed", progress=None, paid_goal=True)[0] == 50
    assert outcome_score(win_back.outcome("declined"), status="completed", progress=80, paid_goal=True)[0] == 0
    onboarding_goal = task_type("onboarding").goal
    assert milestone_names(onboarding_goal) == ("first_checkin", "second_checkin", "third_checkin")
    some = task_type("onboarding").outcome("some_engagement")
    assert outcome_score(some, status="expired", progress=66, paid_goal=True) == (
        66, "some_engagement (neutral); goal progress was 66%")
    assert signal_progress(onboarding_goal, "payment_succeeded", milestones=(), evidence="", budget_low=False) is None
    two = signal_progress(onboarding_goal, "checkin", milestones=("first_checkin",), evidence="", budget_low=False)
    assert two is not None and progress_layer(two.as_event_fields(), onboarding_goal) == (
        "GOAL PROGRESS: 66% (partial signal)\nMilestones: ✓ first_checkin | ✓ second_checkin | ○ third_checkin")


def test_a_verbal_commitment_downgraded_by_its_window_is_evaluated_again() -> None:
    world = closed_by_the_model({**CLOSE, "outcome": "verbal_commitment", "reasoning": "she named Tuesday"})
    world.tick(16)  # churn_risk's 14-day verification window passes with no checkin
    assert [(e.outcome, e.outcome_score) for e in evaluations(world)] == [
        ("verbal_commitment", 60), ("engaged_conversation", 0)]


def test_an_escalation_cancelled_after_seven_days_alone_is_evaluated() -> None:
    world = gym()
    world.tick(0.01)
    world.model.evaluation = {"decision": "escalate", "confidence": 0.85, "reasoning": "she asks about the discount"}
    world.reply(1, "Is the discount still on?")
    world.tick(8.5)  # left alone: the reminder at 48 h, the cancellation at 7 days
    [evaluated] = evaluations(world)
    assert (world.task().status, evaluated.outcome, evaluated.outcome_score) == ("cancelled", "escalated_unresolved", 0)
