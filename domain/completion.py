"""The completion evaluator (seed 002 §9, §16): what an observed outcome signal means for one task, and whether a
reply's words are a commitment. Deterministic rules, no model: a signal is a fact, so a fact decides.

A signal closes an open task with the outcome its type maps it to (`TaskType.signal_outcomes`), `self_resolved`
when nothing had reached the contact yet (§30); after the close, inside the type's attribution window, it revises
the outcome (a late attribution, §16.2); a refund undoes an outcome that carried revenue. A signal made by another
member's account (a family member's checkin) is not the contact's.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Literal

from loopline.domain.outreach import Close, EvaluationAction
from loopline.domain.status import TaskStatus
from loopline.domain.task_contract import GoalSignal, Outcome, TaskType

SELF_RESOLVED = "self_resolved"
UNDOING_SIGNALS = frozenset({"refund"})
"""Signals that take back what an earlier one gave (a refund after a payment): they only revise a closed outcome."""
ACCOUNT_FIELDS = ("account", "member")
"""Signal (and task context) fields naming the account behind a signal, when it is not the contact's own."""
CLOSES_ON_SIGNAL = frozenset({TaskStatus.READY, TaskStatus.EXECUTING, TaskStatus.WAITING, TaskStatus.DORMANT,
                              TaskStatus.ESCALATED})
"""The statuses a signal closes a task in; one awaiting review is the owner's, and the stale guard reads the signal
before the task's first send (§30)."""
NONCOMMITTAL = re.compile(
    r"\b(think about it|thinking about it|maybe|not sure|we'?ll see|i'?ll see|might|perhaps|possibly|no promises)\b",
    re.IGNORECASE,
)
"""Words that hedge: "I'll think about it" is no commitment to come back (§16.2)."""


@dataclass(frozen=True)
class ObservedSignal:
    """One `outcome.observed`: its kind (`checkin`, `payment_succeeded`, …), amount, time and the account behind it."""

    ref: str
    kind: str
    value: float | None
    at: datetime
    account: str | None = None

    @classmethod
    def of(cls, ref: str, at: datetime, data: dict[str, Any]) -> ObservedSignal:
        account = next((str(data[name]) for name in ACCOUNT_FIELDS if data.get(name)), None)
        return cls(ref=ref, kind=str(data["outcome"]), value=data.get("value"), at=at, account=account)


@dataclass(frozen=True)
class Revise:
    """A closed task's outcome becomes `code`: a late attribution, or a refund undoing the outcome."""

    code: str
    cause: Literal["late_attribution", "undone"]
    reason: str


@dataclass(frozen=True)
class Ignore:
    reason: str


Verdict = Close | Revise | Ignore
"""`Close`: the task closes with the outcome, completed for a positive one and cancelled otherwise."""


def is_commitment(words: str) -> bool:
    """Whether a reply commits to something: a hedge ("I'll think about it", "maybe") does not."""
    return NONCOMMITTAL.search(words) is None


def weigh_commitment(action: EvaluationAction, words: str | None, *, task_type: TaskType) -> EvaluationAction:
    """A reply's evaluation closing as a provisional outcome (a verbal commitment) on words that hedge ("I'll think
    about it") closes as the outcome it downgrades to instead; any other action is kept as it is."""
    if not isinstance(action, Close):
        return action
    outcome = task_type.outcome(action.outcome)
    if outcome is None or outcome.downgrades_to is None or is_commitment(words or ""):
        return action
    return Close(outcome.downgrades_to, action.status,
                 f"{action.reason}; but the reply hedges, which is no commitment, so {outcome.downgrades_to}")


def someone_else(signal: ObservedSignal, contact: str, context: dict[str, Any]) -> str | None:
    """The other account behind the signal, or None when it is the contact's (or names no account)."""
    if signal.account is None:
        return None
    own = {contact.lower(), *(str(context[name]).lower() for name in ACCOUNT_FIELDS if context.get(name))}
    return None if signal.account.lower() in own else signal.account


def attribution_window(goal_signals: Iterable[GoalSignal], kind: str) -> timedelta:
    """How long after a close the type still attributes `kind`: its goal signal's verification window, else the
    longest of the type's (a refund is judged within the window of the payment it undoes)."""
    windows = {signal.type: signal.verification_window_days for signal in goal_signals}
    return timedelta(days=windows.get(kind, max(windows.values(), default=0)))


@dataclass(frozen=True)
class TaskView:
    """What the evaluator reads of a task (its status, outcome, when it closed and whether it reached out)."""

    status: TaskStatus
    outcome: str | None
    closed_at: datetime | None
    reached_out: bool
    created_on: datetime


def evaluate(task: TaskView, signal: ObservedSignal, *, task_type: TaskType) -> Verdict:
    """What the signal does to the task, from its type's `signal_outcomes`, spectrum and goal signals."""
    mapped = dict(task_type.signal_outcomes).get(signal.kind)
    if mapped is None:
        return Ignore(f"{task_type.name} maps no outcome to {signal.kind}")
    if signal.at < task.created_on:
        return Ignore(f"the {signal.kind} happened before the task was created")
    if task.closed_at is None:
        return _while_open(task, signal, mapped, task_type)
    return _after_close(task, signal, mapped, task_type)


def _while_open(task: TaskView, signal: ObservedSignal, mapped: str, task_type: TaskType) -> Verdict:
    if signal.kind in UNDOING_SIGNALS:
        return Ignore(f"a {signal.kind} undoes an outcome reached before it; the task has none yet")
    if task.status not in CLOSES_ON_SIGNAL:
        return Ignore(f"the task is {task.status}; its first send reads the {signal.kind} again")
    outcome = task_type.outcome(mapped)
    positive = outcome is not None and outcome.kind == "positive"
    if positive and not task.reached_out and task_type.outcome(SELF_RESOLVED) is not None:
        return Close(SELF_RESOLVED, TaskStatus.COMPLETED, f"{signal.kind} observed before any message reached them")
    status = TaskStatus.COMPLETED if positive else TaskStatus.CANCELLED
    return Close(mapped, status, f"{signal.kind} observed{_amount(signal)}")


def _after_close(task: TaskView, signal: ObservedSignal, mapped: str, task_type: TaskType) -> Verdict:
    assert task.closed_at is not None
    window = attribution_window(task_type.goal.signals, signal.kind)
    if signal.at > task.closed_at + window:
        return Ignore(f"the {signal.kind} came {(signal.at - task.closed_at).days} days after the close, past the "
                      f"{window.days}-day attribution window")
    current = task_type.outcome(task.outcome) if task.outcome else None
    if signal.kind in UNDOING_SIGNALS:
        if current is None or not current.attribute_revenue:
            return Ignore(f"a {signal.kind} undoes only an outcome that carried revenue, not {task.outcome}")
        return Revise(mapped, "undone", f"{signal.kind} observed after it closed as {task.outcome}")
    if task.outcome == mapped or _settled(current):
        return Ignore(f"the task already closed as {task.outcome}")
    return Revise(mapped, "late_attribution", f"{signal.kind} observed {_after(signal.at - task.closed_at)} it closed "
                  f"as {task.outcome}, inside the {window.days}-day attribution window")


def _settled(current: Outcome | None) -> bool:
    """An outcome a later signal does not change: one a fact reached (revenue, not provisional) or self-resolved."""
    return current is not None and (current.code == SELF_RESOLVED or (current.attribute_revenue and not current.provisional))


def _after(delay: timedelta) -> str:
    days = delay.days
    return "the day" if days == 0 else f"{days} day{'s' if days != 1 else ''} after"


def _amount(signal: ObservedSignal) -> str:
    return f" ({signal.value:g})" if signal.value is not None else ""
