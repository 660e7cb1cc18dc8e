"""How far a task is towards its goal (seed 002 §37): a score from 0 to 100 with its evidence, the milestones a
progressive goal has reached, what the pipeline does with it (§37.3), and the score a closed task is evaluated with
(§8). Pure rules: the caller passes the goal, the signal or the judgment, and the time."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Any, Literal

from loopline.domain.task_contract import Goal, GoalSignal, Outcome

EvidenceType = Literal["concrete_signal", "verbal_commitment", "inferred", "partial_signal", "none"]
Recommended = Literal["complete", "wait_and_verify", "continue", "escalate", "close_as_neutral"]

PROVISIONAL_SCORE = 60
"""A verbal commitment is a goal reached 60% of the way (§37.1): only a signal shows the rest."""
SHORT_OF_GOAL_SCORE = 50
"""A positive outcome short of the goal the type pays for (`interested`, `engaged`): half way."""
ORDINALS = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth")


@dataclass(frozen=True)
class GoalProgress:
    """Where the task stands: `score` 0–100, the outcome code that best describes it now, the evaluator's confidence
    (0–1, as everywhere in Loopline), the evidence, the milestones reached and what §37.3 recommends next."""

    score: int
    outcome: str | None
    confidence: float
    evidence_type: EvidenceType
    evidence: str
    milestones: tuple[str, ...]
    recommended: Recommended

    def as_event_fields(self) -> dict[str, Any]:
        return {**asdict(self), "milestones": list(self.milestones)}


def milestone_signal(goal: Goal) -> GoalSignal | None:
    """The signal a progressive goal counts towards its milestones (onboarding's checkin, worth 33 each)."""
    if goal.shape != "progressive":
        return None
    return next((s for s in goal.signals if not s.completes_goal and 0 < s.weight < 100), None)


def milestone_names(goal: Goal) -> tuple[str, ...]:
    """A progressive goal's milestones, in order: `first_checkin`, `second_checkin`, `third_checkin`."""
    signal = milestone_signal(goal)
    if signal is None:
        return ()
    return tuple(f"{ORDINALS[n]}_{signal.type}" for n in range(min(round(100 / signal.weight), len(ORDINALS))))


def reached_outcome(goal: Goal) -> str | None:
    """The outcome code of the goal reached: the positive, confirmed outcome the type pays for, else its first."""
    confirmed = [o for o in goal.outcomes if o.kind == "positive" and not o.provisional]
    paid = [o for o in confirmed if o.attribute_revenue]
    return (paid or confirmed)[0].code if confirmed else None


def recommend(score: int, confidence: float, evidence_type: EvidenceType, *, outcome_kind: str | None,
              budget_low: bool) -> Recommended:
    """§37.3, in order: a concrete signal or a goal fully reached completes it, a verbal commitment completes it
    provisionally, partial progress continues, low confidence waits (or escalates on the budget's last message), a
    negative outcome closes."""
    if evidence_type == "concrete_signal" and confidence >= 0.8:
        return "complete"
    if score >= 100 and confidence >= 0.7:
        return "complete"
    if evidence_type == "verbal_commitment" and confidence >= 0.6:
        return "complete"
    if 0 < score < 100:
        return "continue"
    if confidence < 0.5:
        return "escalate" if budget_low else "wait_and_verify"
    if outcome_kind == "negative":
        return "close_as_neutral"
    return "continue"


def signal_progress(goal: Goal, signal_type: str, *, milestones: tuple[str, ...], evidence: str,
                    budget_low: bool) -> GoalProgress | None:
    """A goal signal's progress (§37.4): a completing signal reaches the goal; a progressive goal's signal reaches its
    next milestone; another weighted signal (a positive reply) is partial evidence of its weight. None: the goal does
    not count that signal."""
    signal = next((s for s in goal.signals if s.type == signal_type), None)
    if signal is None:
        return None
    names = milestone_names(goal)
    if signal is milestone_signal(goal) and names:
        reached = names[:min(len(milestones) + 1, len(names))]
        score = 100 if len(reached) == len(names) else len(reached) * signal.weight
        kind: EvidenceType = "concrete_signal" if score >= 100 else "partial_signal"
    else:
        reached, score = milestones, 100 if signal.completes_goal else signal.weight
        kind = "concrete_signal" if signal.completes_goal else "partial_signal"
    outcome = reached_outcome(goal) if score >= 100 else None
    return GoalProgress(score, outcome, 1.0, kind, evidence, tuple(reached),
                        recommend(score, 1.0, kind, outcome_kind="positive", budget_low=budget_low))


def judgment_progress(goal: Goal, output: dict[str, Any], confidence: float, *, milestones: tuple[str, ...],
                      budget_low: bool) -> GoalProgress | None:
    """The fuzzy-judgment path (§37.5): the model's evaluation of a reply says how far the goal is (`goal_progress`,
    0–100) against the goal's criteria; None when it did not say."""
    score = output.get("goal_progress")
    if not isinstance(score, int) or isinstance(score, bool):
        return None
    code = output.get("outcome") if output.get("decision") == "close" else None
    outcome = next((o for o in goal.outcomes if o.code == code), None)
    kind: EvidenceType = "verbal_commitment" if outcome and outcome.provisional else "inferred"
    evidence = str(output.get("reasoning") or "the model's judgment of the reply")
    return GoalProgress(score, code, confidence, kind, evidence, milestones,
                        recommend(score, confidence, kind, outcome_kind=outcome.kind if outcome else None,
                                  budget_low=budget_low))


def outcome_score(outcome: Outcome | None, *, status: str, progress: int | None, paid_goal: bool) -> tuple[int, str]:
    """The score a closed task is evaluated with (§8 `outcomeScore`), and why. `paid_goal`: the type attributes revenue
    to some outcome, so a positive outcome without revenue falls short of the goal."""
    reached = f"; goal progress was {progress}%" if progress is not None else ""
    if outcome is None:
        if status == "completed" and progress is None:
            return 100, "completed with no outcome code: the goal is taken as reached"
        return progress or 0, f"{status} with no outcome code{reached or ' and no progress recorded'}"
    words = f"{outcome.code} ({outcome.kind}{', provisional' if outcome.provisional else ''})"
    if outcome.kind == "negative":
        return 0, f"{words}: the goal was not reached"
    if outcome.provisional:
        return max(progress or 0, PROVISIONAL_SCORE), f"{words}: said, not yet shown by a signal{reached}"
    if outcome.kind == "positive" and (outcome.attribute_revenue or not paid_goal):
        return 100, f"{words}: the goal was reached"
    if outcome.kind == "positive":
        return max(progress or 0, SHORT_OF_GOAL_SCORE), f"{words}: progress short of the goal{reached}"
    return progress or 0, f"{words}{reached or ': no progress recorded'}"


def budget_snapshot(*, messages_used: int, messages_max: int | None, turns_used: int, turns_max: int | None,
                    created: datetime, ends_at: datetime | None, now: datetime) -> dict[str, Any]:
    """What the task used of its budgets when it was evaluated (§8 `budgetRemaining`'s counterpart), days to two decimals."""
    day = 86400
    return {
        "messages_used": messages_used, "messages_max": messages_max, "turns_used": turns_used, "turns_max": turns_max,
        "days_used": round((now - created).total_seconds() / day, 2),
        "days_max": round((ends_at - created).total_seconds() / day, 2) if ends_at else None,
    }
