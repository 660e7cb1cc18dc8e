"""The contract every task type runs under: its goal and outcome spectrum, budget and cadence (seed 002 §5.0).

The packs of types are in `domain/task_packs.py`; the registry is `domain/task_types.py`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from loopline.domain.outreach import planned_touches

Priority = Literal["critical", "high", "medium", "low"]
PRIORITY_ORDER: dict[str, int] = {"critical": 0, "high": 1, "medium": 2, "med": 2, "low": 3}
"""Lower runs first; `med` is task.create's accepted short form of `medium`."""

OnExhaustion = Literal["cancel", "escalate", "dormant"]
OutcomeKind = Literal["positive", "neutral", "negative"]
GoalShape = Literal["binary", "progressive", "fuzzy"]
Completion = Literal["signal", "judgment", "deliverable", "human_confirms", "composite"]
Pack = Literal["gym", "assistant"]


@dataclass(frozen=True)
class Cadence:
    """When follow-ups go out: touch 1 at once, touch k+1 `intervals[k-1]` days after touch k."""

    name: str
    intervals: tuple[int, ...]
    tones: tuple[str, ...]
    on_exhaustion: OnExhaustion
    dormant_check_days: int | None = None
    dormant_max_days: int | None = None


# Each cadence's last wait ends on the last day of the budgets it serves (14, 21 and 30 days: seed 002 §19.1,
# §19.4), so its `on_exhaustion` is what ends an unanswered task, never the clock cutting the wait short.
CADENCES: dict[str, Cadence] = {
    c.name: c
    for c in (
        Cadence("standard", (3, 5, 6), ("friendly_checkin", "direct_offer_help", "final_open_door"), "cancel"),
        Cadence("urgent", (1, 2, 3), ("friendly_urgent", "direct_followup", "escalation_warning"), "escalate"),
        Cadence("patient", (5, 10, 6), ("warm_checkin", "gentle_followup", "no_pressure_final"), "dormant",
                dormant_check_days=7, dormant_max_days=60),
        Cadence("slow_burn", (3, 10, 17), ("personal_note", "different_angle", "final_door_open"), "dormant",
                dormant_check_days=14, dormant_max_days=90),
        Cadence("single_shot", (), (), "cancel"),
    )
}

STAFF_REMINDERS = Cadence("staff_reminders", (1, 2), ("reminder", "urgent_reminder"), "escalate")
"""staff_call_member's own cadence: reminders to the staff, not messages to a member."""


@dataclass(frozen=True)
class Outcome:
    """One possible ending of a task; `provisional` ones are downgraded if no signal confirms them."""

    code: str
    label: str
    kind: OutcomeKind
    description: str
    attribute_revenue: bool
    revenue_multiplier: float | None = None
    provisional: bool = False
    next_step: str | None = None
    """What the owner does next when a task ends so (a conversion: book the class), told in the notice."""
    downgrades_to: str | None = None
    """A provisional outcome's code once its verification window passes with no confirming signal."""


@dataclass(frozen=True)
class GoalSignal:
    """A concrete event that shows progress to the goal; `weight` is 0–100 (a share of the goal)."""

    type: str
    weight: int
    completes_goal: bool
    verification_window_days: int


@dataclass(frozen=True)
class Goal:
    summary: str
    shape: GoalShape
    """How progress is measured: binary (done or not), progressive (milestones) or fuzzy (judged)."""
    completion: Completion
    signals: tuple[GoalSignal, ...]
    judgment_criteria: str | None
    outcomes: tuple[Outcome, ...]
    deliverable_spec: str | None = None


@dataclass(frozen=True)
class Budget:
    """Hard limits: messages sent, days from creation (None: no end), model turns."""

    messages: int
    days: int | None
    turns: int


@dataclass(frozen=True)
class TaskType:
    name: str
    label: str
    description: str
    category: str
    pack: Pack
    agent: str
    goal: Goal
    priority: Priority
    budget: Budget
    cadence: Cadence
    auto_threshold: float
    """Below this confidence a new acting task waits for owner review in `limited_auto` mode."""
    escalation_triggers: tuple[str, ...]
    outcome_signals: tuple[str, ...]
    skill: str
    """File name under skills/."""
    stalled_after_days: int = 3
    """No activity for this long flags the task as stalled for the proactive run."""
    follow_through_threshold: float | None = None
    """Below this confidence a follow-through task (no contact) waits for review; None: `auto_threshold`."""
    assignment: str = "agent"
    signal_outcomes: tuple[tuple[str, str], ...] = ()
    """Outcome signal kind (`outcome.observed`'s `outcome`) -> the code of this type's spectrum it closes the task with
    (`domain/completion.py`); a kind not named changes nothing."""

    @property
    def expires_in_days(self) -> int | None:
        return self.budget.days

    @property
    def cadence_days(self) -> int:
        """Days from touch 1 to the end of the wait after the last touch the cadence plans within the message budget."""
        return sum(self.cadence.intervals[:planned_touches(self.budget.messages, self.cadence.intervals)])

    @property
    def can_send(self) -> bool:
        return self.budget.messages > 0

    @property
    def review_threshold(self) -> float:
        """The confidence gate's threshold for follow-through tasks: below it, a new task waits for review."""
        return self.auto_threshold if self.follow_through_threshold is None else self.follow_through_threshold

    def outcome(self, code: str) -> Outcome | None:
        """The type's outcome of that code; `owner_handled` is every type's (`task.takeover`), in its words if it has one."""
        found = next((o for o in self.goal.outcomes if o.code == code), None)
        return OWNER_HANDLED if found is None and code == OWNER_HANDLED.code else found

    @property
    def outcome_codes(self) -> tuple[str, ...]:
        return tuple(o.code for o in self.goal.outcomes)


def outcome(code: str, label: str, kind: OutcomeKind, description: str, revenue: float | None = None,
            provisional: bool = False, next_step: str | None = None, downgrades_to: str | None = None) -> Outcome:
    """An outcome; a revenue multiplier means revenue is attributed to it."""
    return Outcome(code, label, kind, description, attribute_revenue=revenue is not None,
                   revenue_multiplier=revenue, provisional=provisional, next_step=next_step, downgrades_to=downgrades_to)


OWNER_HANDLED = outcome("owner_handled", "Owner Handled", "neutral", "The owner took the task over and handled it themselves")
"""How `task.takeover` closes any task: not a goal the agent reaches, so no type offers it to the model."""


UNRESPONSIVE = "unresponsive"
"""The outcome every sending type closes with when its cadence or budget runs out unanswered."""
