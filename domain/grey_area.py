"""The grey-area framework (seed 002 §18.1): one rule for every decision point. Hard rules (budgets, limits, blocked
statuses, suppression) are checked first where each point is applied, with no model involved; then `resolve` decides:
a decision at or above its point's confidence threshold is acted on; below it, the cost of being wrong decides: high
(an email, which cannot be taken back) escalates to the owner, medium (a task closed, which the owner can reopen) asks
the owner, low (an internal draft the agent can redo) goes ahead. "I don't know" (§18.3) is always an answer, and it
asks the owner."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from loopline.domain.actions import Cost

Call = Literal["act", "ask", "escalate"]


def cost_of_being_wrong(*, external_side_effect: bool, reversible: bool) -> Cost:
    """§18.1 from a step's safety profile (§15.2; an action's own is its `cost_of_error`, `domain/actions.py`): what
    leaves Loopline and cannot be taken back costs most."""
    if not external_side_effect:
        return "low"
    return "medium" if reversible else "high"


@dataclass(frozen=True)
class DecisionPoint:
    """A place the model's decision is applied: its confidence threshold and what acting on it wrongly costs."""

    name: str
    threshold: float
    cost: Cost


SEND = DecisionPoint("send", 0.5, cost_of_being_wrong(external_side_effect=True, reversible=False))
"""A drafted touch, follow-up or reply (seed 002 §6.5, §7.4): it reaches a person."""
CLOSE = DecisionPoint("close", 0.6, cost_of_being_wrong(external_side_effect=True, reversible=True))
"""A reply's evaluation that settles the task (§5.4): the outreach stops, which the owner can undo."""


def resolve(point: DecisionPoint, confidence: float) -> Call:
    """§18.1's second and third questions: the confidence against the point's threshold, then the cost (the decision
    and its confidence are recorded either way, `Task.DecisionRecorded`)."""
    if confidence >= point.threshold or point.cost == "low":
        return "act"
    return "escalate" if point.cost == "high" else "ask"


DONT_KNOW = "dont_know"
"""§18.3: the decision that says the agent does not know; the owner is asked its question, never guessed for."""
