"""What an acting task does next (seed 002 §6.3, §6.4, §6.5, §7.1, §18.1): pure rules, hard rules first.

The plan is the snapshot of the task type taken at creation (`Task.OutreachPlanned`), the progress
is the task's counters; the rules answer with one action, and `processors/handlers/outreach.py` applies it.
No rule reads the clock: `now` is passed in.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from loopline.domain.grey_area import CLOSE, DONT_KNOW, SEND, resolve
from loopline.domain.status import TaskStatus

MIN_SEND_CONFIDENCE = SEND.threshold
"""Below this a drafted message is not sent: the task escalates with the draft saved (seed 002 §6.5, §7.4, §18.1)."""
MIN_CLOSE_CONFIDENCE = CLOSE.threshold
"""Below this an evaluation does not close the task: the owner decides (seed 002 §5.4)."""
NEEDS_EVIDENCE = frozenset({"retained", "recovered", "self_resolved"})
"""Outcomes only a fact outside the conversation shows (a check-in, a reactivation, a payment): a contact's words
never close a task so, whatever they ask the model to say; at most the type's provisional outcome, else the owner
decides (issue 19 item 8)."""
DEFAULT_WAIT_DAYS = 3
DEFAULT_DORMANT_CHECK_DAYS = 7
DEFAULT_DORMANT_MAX_DAYS = 60
UNRESPONSIVE = "unresponsive"
ON_EXHAUSTION = ("cancel", "escalate", "dormant")
GENERIC_TONE = "followup"
"""The tone of a touch when the cadence names none (single_shot): a plain follow-up."""


def planned_touches(budget_messages: int, intervals: Sequence[int]) -> int:
    """Touches a cadence plans: one per interval (the last interval is the wait after the last touch), at least
    the first one, never more than the message budget. `next_step` exhausts the cadence at this count."""
    return min(budget_messages, max(1, len(intervals)))


@dataclass(frozen=True)
class Plan:
    """The task type's numbers as the task was created with them."""

    budget_messages: int
    budget_turns: int
    ends_at: datetime | None
    intervals: tuple[int, ...]
    tones: tuple[str, ...]
    on_exhaustion: str
    dormant_check_days: int | None = None
    dormant_max_days: int | None = None
    has_draft: bool = False

    @classmethod
    def of(cls, outreach: dict[str, Any]) -> Plan:
        """From the plan a task keeps (`Task.outreach`, the fields of `Task.OutreachPlanned`)."""
        return cls(
            budget_messages=outreach["budget_messages"], budget_turns=outreach["budget_turns"],
            ends_at=outreach.get("ends_at"), intervals=tuple(outreach.get("intervals") or ()),
            tones=tuple(outreach.get("tones") or ()), on_exhaustion=outreach["on_exhaustion"],
            dormant_check_days=outreach.get("dormant_check_days"), dormant_max_days=outreach.get("dormant_max_days"),
            has_draft=bool(outreach.get("draft")),
        )

    @property
    def touches(self) -> int:
        return planned_touches(self.budget_messages, self.intervals)

    def tone(self, touch: int) -> str:
        """Touch n takes the cadence's tone n (seed 002 §36.2: touch 1 a friendly check-in, touch 2 direct,
        touch 3 an open door); past the last tone, the last one repeats."""
        if not self.tones:
            return GENERIC_TONE
        return self.tones[min(max(touch - 1, 0), len(self.tones) - 1)]

    def after_touch(self, touch: int, now: datetime) -> datetime:
        """When the step after touch `touch` is due: the cadence's interval, else the budget's end, else at once."""
        if touch - 1 < len(self.intervals):
            return now + timedelta(days=self.intervals[touch - 1])
        return self.ends_at if self.ends_at is not None else now


@dataclass(frozen=True)
class Progress:
    """Where the task stands: its status and counters, and what it waits for."""

    status: TaskStatus
    touch: int
    messages_used: int
    turns_used: int
    next_touch_at: datetime | None
    dormant_until: datetime | None
    awaiting_decision: bool
    deferred_until: datetime | None = None
    """A send a limit deferred goes out at this time, not before."""
    away_until: datetime | None = None
    """The contact's automatic reply said they are away until then: no touch goes out before."""


@dataclass(frozen=True)
class Wait:
    """Nothing to do now; `until` is when to look again (None: until something happens)."""

    until: datetime | None
    reason: str


@dataclass(frozen=True)
class SendTouch:
    touch: int
    tone: str
    use_draft: bool


@dataclass(frozen=True)
class Close:
    """Closes the task with an outcome code: `completed` for an outcome reached, `cancelled` otherwise."""

    outcome: str
    status: TaskStatus
    reason: str


@dataclass(frozen=True)
class Escalate:
    reason: str
    cause: str
    draft: dict[str, Any] | None = None


@dataclass(frozen=True)
class GoDormant:
    until: datetime
    reason: str


@dataclass(frozen=True)
class SendReply:
    body: str


@dataclass(frozen=True)
class WaitForContact:
    """The contact answered and the task waits again: the cadence resumes at `next_touch_at`."""

    next_touch_at: datetime
    reason: str


StepAction = Wait | SendTouch | Close | Escalate | GoDormant
EvaluationAction = SendReply | Close | Escalate | WaitForContact


def unresponsive(reason: str) -> Close:
    return Close(UNRESPONSIVE, TaskStatus.CANCELLED, reason)


def next_step(plan: Plan, progress: Progress, now: datetime) -> StepAction:
    """What a step of the task does at `now`: budgets and blocked statuses first, then the cadence."""
    status = progress.status
    if status not in (TaskStatus.READY, TaskStatus.EXECUTING, TaskStatus.WAITING, TaskStatus.DORMANT):
        return Wait(None, f"the task is {status}: not the agent's to work")
    if status is TaskStatus.DORMANT:
        if progress.dormant_until is not None and now >= progress.dormant_until:
            return unresponsive("dormant until its last day with no reply")
        return Wait(progress.dormant_until, "dormant: nothing is sent; a reply wakes it")
    if plan.ends_at is not None and now >= plan.ends_at:
        # Waiting on the contact, the budget's last day ends the cadence (seed 002 §19.1, §19.4); a task with a draft
        # still being written would send it dormant, so it closes; a reply (one that woke a dormant task) is still read.
        if status is TaskStatus.WAITING and not progress.awaiting_decision:
            return exhausted(plan, now, "its time budget ran out")
        if status is TaskStatus.EXECUTING and progress.awaiting_decision:
            return Wait(None, "the model is reading the contact's reply")
        return unresponsive("its time budget ran out")
    if progress.awaiting_decision:
        return Wait(None, "waiting for the model's decision")
    if progress.deferred_until is not None:
        if now < progress.deferred_until:
            return Wait(progress.deferred_until, "a send limit deferred the message")
        return SendTouch(progress.touch + 1, plan.tone(progress.touch + 1), use_draft=False)
    if progress.away_until is not None and now < progress.away_until:
        return Wait(progress.away_until, "the contact is away, as their automatic reply said")
    if progress.turns_used >= plan.budget_turns:
        return Escalate(f"the conversation used all {plan.budget_turns} turns without an outcome", "turn_budget")
    if progress.touch == 0 and progress.turns_used == 0:  # a contact who wrote first is answered, not touched
        if progress.messages_used >= plan.budget_messages:
            return exhausted(plan, now, f"no message budget left ({plan.budget_messages})")
        return SendTouch(1, plan.tone(1), use_draft=plan.has_draft)
    if progress.next_touch_at is None:
        return Wait(plan.ends_at, "waiting for the contact's answer")
    if now < progress.next_touch_at:
        return Wait(progress.next_touch_at, "the next touch is not due yet")
    if progress.messages_used >= plan.budget_messages:
        return exhausted(plan, now, f"all {plan.budget_messages} messages of its budget were sent without a reply")
    if progress.touch >= plan.touches:
        return exhausted(plan, now, f"all {progress.touch} touches of the cadence were sent without a reply")
    touch = progress.touch + 1
    return SendTouch(touch, plan.tone(touch), use_draft=False)


def exhausted(plan: Plan, now: datetime, reason: str) -> StepAction:
    """The cadence's `on_exhaustion`: close as unresponsive, hand to the owner, or go dormant."""
    if plan.on_exhaustion == "escalate":
        return Escalate(f"{reason}; this cadence asks the owner to decide", "cadence_exhausted")
    if plan.on_exhaustion == "dormant":
        days = plan.dormant_max_days or DEFAULT_DORMANT_MAX_DAYS
        return GoDormant(now + timedelta(days=days), f"{reason}; dormant for up to {days} days, a reply wakes it")
    return unresponsive(reason)


def apply_draft(
    output: dict[str, Any], confidence: float, *, plan: Plan, progress: Progress, owner_approves: str | None = None,
) -> SendTouch | Escalate:
    """A drafted touch is sent only with budget left, enough confidence and, when `owner_approves` says why the owner
    approves it first (execution mode manual, seed 002 §7.6, or an onboarding phase, §26), not at all; else the owner
    gets the draft."""
    draft = {"subject": output.get("subject", ""), "body": output.get("body", "")}
    if progress.messages_used >= plan.budget_messages:
        return Escalate(f"a touch was drafted but the message budget ({plan.budget_messages}) is spent", "message_budget",
                        draft)
    if resolve(SEND, confidence) != "act":
        return Escalate(f"the drafted message has confidence {confidence:.2f}, below {MIN_SEND_CONFIDENCE}: "
                        "the draft is saved for you to review", "low_confidence", draft)
    touch = progress.touch + 1
    if owner_approves:
        return held_for_owner(touch, draft, owner_approves)
    return SendTouch(touch, plan.tone(touch), use_draft=False)


def held_for_owner(touch: int, draft: dict[str, Any], why: str) -> Escalate:
    """A touch the agent would send unasked while the tenant reviews every task (`why`: the `manual` mode or an
    onboarding phase): the owner approves it first."""
    return Escalate(f"touch {touch} is due, and {why}: nothing goes out unasked, so the "
                    "draft waits for your approval", "manual_mode",
                    {"subject": draft.get("subject", ""), "body": draft.get("body", "")})


def apply_evaluation(
    output: dict[str, Any], confidence: float, *, plan: Plan, progress: Progress, outcomes: tuple[str, ...],
    now: datetime, provisional: tuple[str, ...] = (),
) -> EvaluationAction:
    """What a reply's evaluation leads to (seed 002 §6.5): reply, close with an outcome, escalate, wait, or ask the
    owner what the agent does not know (§18.3); below its point's threshold a reply or a close goes to the owner (§18.1).
    `provisional` are the type's outcomes a reply may reach before a fact confirms them (`verbal_commitment`)."""
    decision, reasoning = output.get("decision"), str(output.get("reasoning") or "")
    if decision == "reply":
        draft = {"body": output.get("reply_body") or ""}
        if resolve(SEND, confidence) != "act":
            return Escalate(f"the reply drafted has confidence {confidence:.2f}, below {MIN_SEND_CONFIDENCE}: "
                            "the draft is saved for you to review", "low_confidence", draft)
        if progress.messages_used >= plan.budget_messages:
            return Escalate(f"it wants to reply but the message budget ({plan.budget_messages}) is spent",
                            "message_budget", draft)
        if not draft["body"].strip():
            return Escalate("the evaluation said reply but wrote no reply", "empty_reply")
        return SendReply(draft["body"])
    if decision == "close":
        outcome = output.get("outcome")
        if outcome not in outcomes:
            return Escalate(f"the evaluation closed with outcome {outcome!r}, which is not one of this type's "
                            f"({', '.join(outcomes)}): {reasoning}", "unknown_outcome")
        if resolve(CLOSE, confidence) != "act":
            return Escalate(f"the evaluation would close as {outcome} with confidence {confidence:.2f}, below "
                            f"{MIN_CLOSE_CONFIDENCE}: you decide whether it is settled ({reasoning})", "low_confidence")
        if outcome in NEEDS_EVIDENCE:
            return _without_evidence(str(outcome), reasoning, provisional)
        return Close(str(outcome), TaskStatus.COMPLETED, reasoning or f"closed as {outcome}")
    if decision == "wait":
        days = output.get("wait_days") or DEFAULT_WAIT_DAYS
        return WaitForContact(now + timedelta(days=days), reasoning or f"waiting {days} days")
    if decision == "escalate":
        return Escalate(reasoning or "the evaluation asks for the owner", "model_escalated")
    if decision == DONT_KNOW:  # §18.3: not a guess, a question for the owner, whatever its confidence
        return Escalate(f"the agent does not know, and asks you: {output.get('question')} ({reasoning})", DONT_KNOW)
    return Escalate(f"the evaluation's decision {decision!r} is not one Loopline knows", "unknown_decision")


def _without_evidence(outcome: str, reasoning: str, provisional: tuple[str, ...]) -> Close | Escalate:
    """A close as an outcome that needs evidence, read from a reply: the provisional outcome, else the owner's call."""
    why = f"the evaluation would close as {outcome}, which a reply alone cannot show"
    if provisional:
        return Close(provisional[0], TaskStatus.COMPLETED, f"{why}, so {provisional[0]} until a check-in confirms it "
                     f"({reasoning})")
    return Escalate(f"{why}: you decide whether it happened ({reasoning})", "needs_evidence")
