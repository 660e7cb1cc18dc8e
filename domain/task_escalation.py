"""An escalation's handoff (seed 002 §17): the context the owner decides with, the timeouts that remind them and
then cancel, and the pause an escalated task puts on the pipeline under it."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from loopline.domain.base import TaskEvent
from loopline.domain.conversation import conversation_of
from loopline.domain.status import TaskStatus
from loopline.domain.timeutil import format_time, parse_time
from loopline.domain.wording import count, one_line, when

if TYPE_CHECKING:
    from loopline.domain.task import Task

CONVERSATION_SNAPSHOT = 5
"""The last messages (the contact's, the agent's, the owner's) an escalation's context quotes."""
DECISIONS_TRIED = 3
"""The last model decisions an escalation's context lists as tried."""
AGENT_CAUSES = frozenset({
    "model_escalated", "low_confidence", "needs_evidence", "unknown_decision", "unknown_outcome", "empty_reply",
    "missing_skill", "subtasks_per_parent",
})
"""Causes where the agent itself could not go on (its decision, its draft, its confidence)."""
MEMBER_CAUSES = frozenset({"anomaly_replies", "contact_replied"})
"""Causes where what the contact wrote stopped the task."""
SUBTASK_CAUSES = frozenset({"subtask_failed"})
"""Causes where a required subtask could not go on, which stops its parent."""
REMINDER_KIND = "escalation_reminder"
UNRESOLVED = "escalated_unresolved"
"""The outcome a type may give a task cancelled because its escalation was never answered."""


def blocked_by(cause: str) -> str:
    """Who stopped the task (§17.3 `blockedBy`): the agent, the member, a subtask, or the system (a budget, a limit,
    a fault)."""
    for who, causes in (("agent", AGENT_CAUSES), ("member", MEMBER_CAUSES), ("subtask", SUBTASK_CAUSES)):
        if cause in causes:
            return who
    return "system"


def pipeline_paused(task: Task, *ancestors: Task) -> Task | None:
    """The escalated task that holds this one's work: itself or an ancestor (given nearest first), since while a
    parent is with the owner none of its subtasks acts (§17.2); None when the task may act."""
    return next((each for each in (task, *ancestors) if each.status is TaskStatus.ESCALATED), None)


@dataclass(frozen=True)
class Timeouts:
    """When an escalation left alone reminds the owner and when it is cancelled (§17.5); None: never."""

    remind_at: datetime | None
    cancel_at: datetime | None

    @classmethod
    def starting(cls, since: datetime, *, reminder_hours: int, cancel_days: int) -> Timeouts:
        return cls(since + timedelta(hours=reminder_hours) if reminder_hours else None,
                   since + timedelta(days=cancel_days) if cancel_days else None)

    @property
    def due(self) -> tuple[datetime, ...]:
        return tuple(at for at in (self.remind_at, self.cancel_at) if at is not None)


def escalation_context(task: Task, *, cause: str, reason: str, question: str | None, history: Iterable[Any],
                       draft: dict[str, Any] | None, actions: list[dict[str, Any]], timeouts: Timeouts) -> dict[str, Any]:
    """The fields of `EscalationContextRecorded`, from the task and its events so far (`history`)."""
    events = list(history)
    turns = [turn for turn in conversation_of(events) if turn.author != "system"][-CONVERSATION_SNAPSHOT:]
    decisions = [e for e in events if type(e).__qualname__ == "Task.DecisionRecorded"][-DECISIONS_TRIED:]
    tried = {
        "touches": task.touch, "messages_used": task.messages_used, "turns_used": task.turns_used,
        "actions": task.actions_count,
        "decisions": [{"at": format_time(e.timestamp), "point": e.point, "decision": e.decision,
                       "confidence": e.confidence, "reasoning": e.reasoning} for e in decisions],
    }
    if task.is_acting:
        resume = (f"With your guidance the agent drafts its answer to {task.contact} in this thread and goes on with "
                  "the cadence; after your own reply or an approved draft it waits for theirs.")
    else:
        resume = "With your guidance the task resumes: the agent reads it in the conversation and goes on."
    return {
        "blocked_by": blocked_by(cause), "cause": cause, "reason": reason, "question": question or None, "tried": tried,
        "draft_reply": dict(draft) if draft else None, "suggested_actions": list(actions),
        "conversation": [{"author": t.author, "at": format_time(t.at), "text": t.text} for t in turns],
        "resume_instructions": resume, "remind_at": timeouts.remind_at, "cancel_at": timeouts.cancel_at,
    }


def render_handoff(context: Mapping[str, Any]) -> str:
    """The context as the owner reads it (a notice, `tasks show`): the event's fields, or its audit payload."""
    tried = context["tried"]
    lines = [f"Blocked by the {context['blocked_by']} ({context['cause']}). Tried so far: "
             f"{count(tried['touches'], 'touch', 'touches')}, {count(tried['messages_used'], 'message')} and "
             f"{count(tried['turns_used'], 'turn')} of conversation, {count(tried['actions'], 'action')} recorded."]
    if tried["decisions"]:
        lines.append("Its last decisions:")
    lines += [f"  {when(parse_time(d['at']))}, {d['point']}: decided {d['decision']} ({d['confidence']:.2f}): "
              f"{d['reasoning']}" for d in tried["decisions"]]
    if context["conversation"]:
        lines.append("Last messages:")
        lines += [f"  {turn['author']}, {when(parse_time(turn['at']))}: {one_line(turn['text'])}"
                  for turn in context["conversation"]]
    lines.append(context["resume_instructions"])
    left_alone = [f"{what} {when(parse_time(at))}" for what, at in
                  (("you are reminded", context["remind_at"]), ("it is cancelled", context["cancel_at"])) if at]
    if left_alone:
        lines.append(f"Left alone, {' and '.join(left_alone)}.")
    return "\n".join(lines)


class TaskEscalation:
    """A direct base of `Task`: its escalation's context; eventsourcing redefines the event as `Task.<Name>`."""

    class EscalationContextRecorded(TaskEvent):
        """What the owner needs to decide at a glance (§17.3), recorded as the task enters `escalated`: why and
        by whom it stopped, the contact's question, what was tried, the draft held back, what the owner can do,
        the last messages, what happens when they answer, and when they are reminded and the task is cancelled
        if nobody does."""

        blocked_by: str
        cause: str
        """The rule or decision that escalated (§18.4's `appliedRule`): `low_confidence`, `model_escalated`, …"""
        reason: str
        question: str | None
        tried: dict[str, Any]
        draft_reply: dict[str, Any] | None
        suggested_actions: list[dict[str, Any]]
        conversation: list[dict[str, Any]]
        resume_instructions: str
        remind_at: datetime | None
        cancel_at: datetime | None

    def record_escalation_context(self, context: Mapping[str, Any], *, now: datetime) -> None:
        self.trigger_event(self.EscalationContextRecorded, timestamp=now, **context)


def current_escalation(history: Iterable[Any]) -> tuple[Any, bool] | None:
    """The context of the escalation the task is in now (recorded as it entered `escalated`) and whether the owner was
    reminded of it since; None when the task has none: escalated before contexts were recorded, or escalated again
    without one (an action held for approval, `task.update`) after it left the escalation a context was filed for."""
    context, reminded = None, False
    for event in history:
        name = type(event).__qualname__
        if name == "Task.EscalationContextRecorded":
            context, reminded = event, False
        elif name == "Task.UserNotified" and event.kind == REMINDER_KIND:
            reminded = True
        elif getattr(event, "status", TaskStatus.ESCALATED) != TaskStatus.ESCALATED:
            context = None  # every event that moves a task names the status it leads to: this one left `escalated`
    return (context, reminded) if context is not None else None
