"""Task types: the full contract each kind of task runs under. A new type is one
entry in `TASK_TYPES` plus its skill file under skills/.

Two packs share the registry: the gym pack (an outreach agent that sends) and the
assistant pack (follow-through on what an outside agent does). Confidences and
thresholds are 0–1 (a 75 elsewhere is 0.75 here).
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Literal

from loopline.domain.errors import DomainError
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


def _o(code: str, label: str, kind: OutcomeKind, description: str, revenue: float | None = None,
       provisional: bool = False, next_step: str | None = None, downgrades_to: str | None = None) -> Outcome:
    """An outcome; a revenue multiplier means revenue is attributed to it."""
    return Outcome(code, label, kind, description, attribute_revenue=revenue is not None,
                   revenue_multiplier=revenue, provisional=provisional, next_step=next_step, downgrades_to=downgrades_to)


OWNER_HANDLED = _o("owner_handled", "Owner Handled", "neutral", "The owner took the task over and handled it themselves")
"""How `task.takeover` closes any task: not a goal the agent reaches, so no type offers it to the model."""


UNRESPONSIVE = "unresponsive"
"""The outcome every sending type closes with when its cadence or budget runs out unanswered."""

_GYM: tuple[TaskType, ...] = (
    TaskType(
        name="churn_risk", label="At-Risk Member", pack="gym", category="communication", agent="retention",
        description="Reach out to members showing signs of disengagement",
        goal=Goal(
            summary="Re-engage a member who hasn't visited recently", shape="fuzzy", completion="composite",
            signals=(GoalSignal("checkin", 100, True, 14), GoalSignal("reply_positive", 60, False, 14)),
            judgment_criteria=(
                "The member has expressed a clear, specific intent to return (named a day, mentioned a class, "
                'etc). Vague positivity ("yeah maybe") does NOT count.'
            ),
            outcomes=(
                _o("retained", "Member Retained", "positive", "Member checked in within 14 days of outreach", 1.0),
                _o("verbal_commitment", "Verbal Commitment", "positive",
                   "Member said they would return. Provisional — downgrades after 14 days with no checkin.",
                   0.5, provisional=True, downgrades_to="engaged_conversation",
                   next_step="Look out for them at the class or day they named, and welcome them back in person."),
                _o("engaged_conversation", "Engaged Conversation", "neutral", "Replied positively but made no commitment."),
                _o("self_resolved", "Self-Resolved", "positive", "Member came back before outreach sent."),
                _o(UNRESPONSIVE, "No Response", "neutral", "All touches exhausted, no reply, no checkin."),
                _o("opted_out", "Opted Out", "negative", "Member requested to stop receiving messages."),
                _o("churned", "Confirmed Churn", "negative", "Member cancelled during or after outreach."),
                _o("escalated_unresolved", "Escalated (Unresolved)", "neutral", "Escalated to owner, never resolved."),
            ),
        ),
        priority="high", budget=Budget(messages=3, days=14, turns=6), cadence=CADENCES["standard"],
        auto_threshold=0.75, escalation_triggers=("member_tenure_over_1_year", "monthly_value_over_200"),
        outcome_signals=("checkin", "reply_positive"), skill="churn_risk.md",
        signal_outcomes=(("checkin", "retained"), ("class_booked", "retained"), ("cancellation", "churned")),
    ),
    TaskType(
        name="win_back", label="Win-Back", pack="gym", category="communication", agent="retention",
        description="Re-engage a member who has cancelled their membership",
        goal=Goal(
            summary="Bring a cancelled member back", shape="fuzzy", completion="composite",
            signals=(GoalSignal("reactivation", 100, True, 30), GoalSignal("reply_positive", 50, False, 30)),
            judgment_criteria="The member has expressed genuine interest in returning — not just politeness.",
            outcomes=(
                _o("recovered", "Member Recovered", "positive", "Membership reactivated", 3.0),
                _o("interested", "Interested", "positive", "Expressed interest but hasn't reactivated yet",
                   next_step="Reactivate their membership with them: write or call with how to rejoin."),
                _o(UNRESPONSIVE, "No Response", "neutral", "No reply after all touches"),
                _o("declined", "Declined", "negative", "Member explicitly said no"),
                _o("opted_out", "Opted Out", "negative", "Requested no further contact"),
                _o("self_resolved", "Self-Resolved", "positive", "Membership reactivated before outreach sent"),
                _o("refunded", "Refunded", "negative", "The reactivation's payment was refunded"),
            ),
        ),
        priority="high", budget=Budget(messages=3, days=30, turns=4), cadence=CADENCES["slow_burn"],
        auto_threshold=0.80,
        escalation_triggers=("cancellation_reason_complaint", "cancellation_reason_billing", "member_tenure_over_2_years"),
        outcome_signals=("reactivation", "reply_positive"), skill="win_back.md",
        signal_outcomes=(("reactivation", "recovered"), ("refund", "refunded")),
    ),
    TaskType(
        name="lead_followup", label="Lead Follow-up", pack="gym", category="communication", agent="sales",
        description="Nurture a new lead toward booking a trial or first visit",
        goal=Goal(
            summary="Get the lead to book a trial or visit the gym", shape="fuzzy", completion="composite",
            signals=(GoalSignal("trial_booked", 100, True, 21), GoalSignal("checkin", 100, True, 21)),
            judgment_criteria="The lead has committed to a specific date/time to visit.",
            outcomes=(
                _o("converted", "Lead Converted", "positive", "Trial booked or first checkin", 1.0,
                   next_step="Book them into the class or trial they asked for, and confirm the time with them."),
                _o("engaged", "Engaged", "positive", "Replying, asking questions, but hasn't committed"),
                _o(UNRESPONSIVE, "No Response", "neutral", "No reply"),
                _o("not_interested", "Not Interested", "negative", "Lead explicitly declined"),
            ),
        ),
        priority="medium", budget=Budget(messages=5, days=21, turns=8), cadence=CADENCES["patient"],
        auto_threshold=0.70, escalation_triggers=(),
        outcome_signals=("trial_booked", "reply_positive", "checkin"), skill="lead_followup.md",
        signal_outcomes=(("trial_booked", "converted"), ("class_booked", "converted"), ("checkin", "converted")),
    ),
    TaskType(
        name="payment_recovery", label="Payment Recovery", pack="gym", category="communication", agent="retention",
        description="Notify a member about a failed payment in a non-embarrassing way",
        goal=Goal(
            summary="Recover a failed payment without embarrassing the member", shape="binary", completion="composite",
            signals=(GoalSignal("payment_succeeded", 100, True, 7),),
            judgment_criteria=(
                "The member has acknowledged the issue and indicated they will update payment. But do NOT mark "
                "complete until payment actually succeeds."
            ),
            outcomes=(
                _o("recovered", "Payment Recovered", "positive", "Payment succeeded", 1.0),
                _o("self_resolved", "Self-Resolved", "positive", "Payment succeeded before outreach sent"),
                _o("acknowledged", "Acknowledged", "neutral", "Member acknowledged but payment still failing"),
                _o(UNRESPONSIVE, "No Response", "neutral", "No reply, payment still failing"),
                _o("cancelled", "Member Cancelled", "negative", "Member cancelled instead of fixing payment"),
                _o("refunded", "Refunded", "negative", "The recovered payment was refunded"),
            ),
        ),
        priority="critical", budget=Budget(messages=2, days=7, turns=4), cadence=CADENCES["urgent"],
        auto_threshold=0.90, escalation_triggers=("always",),
        outcome_signals=("payment_succeeded",), skill="payment_recovery.md",
        signal_outcomes=(("payment_succeeded", "recovered"), ("refund", "refunded"), ("cancellation", "cancelled")),
    ),
    TaskType(
        name="onboarding", label="New Member Onboarding", pack="gym", category="communication", agent="retention",
        description="Welcome a new member and help them build the habit in their first 30 days",
        goal=Goal(
            summary="Help a new member check in at least 3 times in their first 30 days", shape="progressive",
            completion="composite",
            signals=(GoalSignal("checkin_count_3", 100, True, 30), GoalSignal("checkin", 33, False, 30)),
            judgment_criteria=(
                "The member is engaged and forming a habit. 3+ checkins is the signal. 1-2 checkins is progress. "
                "0 checkins after 14 days is concerning."
            ),
            outcomes=(
                _o("habit_formed", "Habit Forming", "positive", "3+ checkins in first 30 days", 1.0),
                _o("some_engagement", "Some Engagement", "neutral", "1-2 checkins, still building habit"),
                _o("no_show", "No-Show", "negative", "0 checkins after 14+ days"),
                _o(UNRESPONSIVE, "No Response", "neutral", "No reply to onboarding messages"),
            ),
        ),
        priority="medium", budget=Budget(messages=4, days=30, turns=6), cadence=CADENCES["slow_burn"],
        auto_threshold=0.85, escalation_triggers=(),
        outcome_signals=("checkin_count_3", "reply_positive"), skill="onboarding.md",
        signal_outcomes=(("checkin_count_3", "habit_formed"),),
    ),
    TaskType(
        name="staff_call_member", label="Call Member", pack="gym", category="staff_todo", agent="gm",
        assignment="owner", description="A human at the gym needs to call this member",
        goal=Goal(
            summary="Have a personal phone conversation with this member", shape="binary", completion="human_confirms",
            signals=(), judgment_criteria=None,
            outcomes=(
                _o("completed", "Call Made", "positive", "Staff called the member"),
                _o("member_unreachable", "Unreachable", "neutral", "Tried calling, no answer"),
                _o("skipped", "Skipped", "neutral", "Owner decided not to call"),
            ),
        ),
        priority="high", budget=Budget(messages=0, days=3, turns=0), cadence=STAFF_REMINDERS,
        auto_threshold=0.0, escalation_triggers=("always",),
        outcome_signals=("checkin",), skill="staff_call_member.md",
    ),
    TaskType(
        name="monthly_churn_analysis", label="Monthly Churn Analysis", pack="gym", category="research", agent="gm",
        description="Analyze member data and produce a churn risk report",
        goal=Goal(
            summary="Produce a structured churn analysis report for the gym", shape="binary", completion="deliverable",
            signals=(), judgment_criteria=None,
            deliverable_spec=(
                "A report containing: total members, at-risk count, churn rate trend, top risk factors, recommended "
                "actions. Structured as markdown with a data summary."
            ),
            outcomes=(
                _o("report_produced", "Report Produced", "positive", "Analysis complete, report delivered"),
                _o("insufficient_data", "Insufficient Data", "neutral", "Not enough data to produce meaningful analysis"),
            ),
        ),
        priority="low", budget=Budget(messages=0, days=1, turns=5), cadence=CADENCES["single_shot"],
        auto_threshold=0.95, escalation_triggers=(), outcome_signals=(), skill="monthly_churn_analysis.md",
    ),
)

AD_HOC = TaskType(
    name="ad_hoc", label="Custom Task", pack="gym", category="communication", agent="gm",
    description="A custom task created by the owner or agent for a specific purpose",
    goal=Goal(
        summary="Accomplish the specific goal described by the owner", shape="fuzzy", completion="judgment",
        signals=(),
        judgment_criteria=(
            "The owner's stated goal has been achieved or the member has responded in a way that resolves the situation."
        ),
        outcomes=(
            _o("resolved", "Resolved", "positive", "Goal achieved"),
            _o(UNRESPONSIVE, "No Response", "neutral", "No reply"),
            _o("owner_handled", "Owner Handled", "positive", "Owner took over and handled it"),
        ),
    ),
    priority="medium", budget=Budget(messages=3, days=14, turns=6), cadence=CADENCES["standard"],
    auto_threshold=0.0, escalation_triggers=("always",), outcome_signals=(), skill="ad_hoc.md",
    # Shared by both packs: the follow-through gate (review below 0.5) stays for tasks without a contact.
    follow_through_threshold=0.5,
)
"""The catch-all, and the type of a task created without one: an acting ad_hoc task always needs review."""

# The assistant pack: follow-through types (budget messages 0: the outside agent acts, Loopline watches its loops).
_ASSISTANT: tuple[TaskType, ...] = (
    TaskType(
        name="meeting_scheduling", label="Meeting Scheduling", pack="assistant", category="communication",
        agent="assistant", description="Agree a meeting time with someone through a few back-and-forth emails",
        goal=Goal(
            summary="A meeting time agreed and on the calendar", shape="binary", completion="composite",
            signals=(GoalSignal("invite_accepted", 100, True, 14), GoalSignal("email_reply", 50, False, 14)),
            judgment_criteria="The other person has agreed to a specific time, or the invite was accepted.",
            outcomes=(
                _o("scheduled", "Meeting Scheduled", "positive", "A time was agreed or the invite accepted"),
                _o("declined", "Declined", "negative", "The other person declined to meet"),
                _o(UNRESPONSIVE, "No Response", "neutral", "No reply before the task ran out"),
                _o("owner_handled", "Owner Handled", "positive", "The user arranged it themselves"),
            ),
        ),
        priority="medium", budget=Budget(messages=0, days=14, turns=6), cadence=CADENCES["single_shot"],
        auto_threshold=0.5, escalation_triggers=(), outcome_signals=("invite_accepted", "email_reply"),
        skill="meeting_scheduling.md",
    ),
    TaskType(
        name="inbox_management", label="Inbox Management", pack="assistant", category="recurring",
        agent="assistant", description="Keep the user's inbox triaged over weeks: a long-running task that owns workflows",
        goal=Goal(
            summary="The inbox stays triaged and nothing that needs an answer is left waiting", shape="progressive",
            completion="human_confirms", signals=(),
            judgment_criteria="Every message that needs the user has been surfaced or answered; nothing is stuck.",
            outcomes=(
                _o("maintained", "Inbox Maintained", "positive", "The user ended the task with the inbox in order"),
                _o("handed_back", "Handed Back", "neutral", "The user took inbox handling back"),
                _o("owner_handled", "Owner Handled", "positive", "The user dealt with what was pending themselves"),
            ),
        ),
        priority="low", budget=Budget(messages=0, days=None, turns=0), cadence=CADENCES["single_shot"],
        auto_threshold=0.5, escalation_triggers=(), outcome_signals=(), skill="inbox_management.md",
        stalled_after_days=2,
    ),
)

TASK_TYPES: dict[str, TaskType] = {t.name: t for t in (*_GYM, AD_HOC, *_ASSISTANT)}


class UnknownTaskType(DomainError):
    """A task type the registry does not have."""


def check_task_type(name: str) -> TaskType:
    """The registry's type of that name; an unknown one is refused, naming the closest and every known type."""
    if name not in TASK_TYPES:
        hint = "".join(f"did you mean {close!r}? " for close in difflib.get_close_matches(name, TASK_TYPES, n=1))
        raise UnknownTaskType(f"unknown task type {name[:80]!r}; {hint}the task types are {', '.join(sorted(TASK_TYPES))}")
    return TASK_TYPES[name]


def task_type(name: str | None) -> TaskType:
    """The type of a name, `ad_hoc` for none; an unknown name raises `UnknownTaskType`."""
    return AD_HOC if name is None else check_task_type(name)
