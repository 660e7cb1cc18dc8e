"""A task's model decisions: asked for, recorded at most once per request, or failed and retried."""

from __future__ import annotations

from datetime import date, datetime
from typing import TYPE_CHECKING, Any

from loopline.domain.base import TaskEvent
from loopline.domain.errors import DomainError

if TYPE_CHECKING:
    from loopline.domain.task import Task


ANSWERS = ("touch", "reply", "guidance")
"""Purposes of decisions that write to the contact: a newer reply's evaluation replaces any of them still pending."""


class AlreadyDecided(DomainError):
    """A decision for a request that is no longer pending: a repeat, or one recorded by another process."""


class DecisionAsked(TaskEvent):
    """What a model decision is asked for: the fields of a request, a held one and a resumed one."""

    request_ref: str
    point: str
    purpose: str
    touch: int | None
    tone: str | None
    reason: str
    attempt: int
    loop_ref: str | None


class TaskDecisions:
    """A direct base of `Task`, keeping its `pending_decisions`; eventsourcing redefines its events as `Task.<Name>`."""

    class DecisionRequested(DecisionAsked):
        """Asks the decision processor (`processors/followers/agent.py`) for a model decision; `attempt` > 1 is a retry.
        `day`: the tenant-local day whose model calls it counts on."""

        class_version = 2
        day: str | None = None

        @staticmethod
        def upcast_v1_v2(state: dict[str, Any]) -> None:
            """A version-1 request was asked before model calls were counted by day."""
            state.update(day=None)

        def apply(self, task: Task) -> None:
            held = "held" in task.pending_decisions.get(self.request_ref, {})
            task.pending_decisions[self.request_ref] = {
                "point": self.point, "purpose": self.purpose, "touch": self.touch, "tone": self.tone,
                "attempt": self.attempt, "loop_ref": self.loop_ref, "failed": 0,
            }
            task.model_calls += 1
            if self.point == "evaluate_reply" and self.attempt == 1 and not held:  # a held reply was counted then
                _reply_answered(task, self.request_ref)

    class DecisionHeld(DecisionAsked):
        """A model call a rule of `domain/model_checks.py` held back: asked for at `until`, as a failed one is retried."""

        rule: str
        why: str
        until: datetime
        day: str
        """The tenant-local day the call was held on."""

        def apply(self, task: Task) -> None:
            # Kept as the attempt before this one, failed and due again at `until`: nothing asks the model for it
            # meanwhile, the cadence waits for it, and the retry at `until` asks for this attempt.
            task.pending_decisions[self.request_ref] = {
                "point": self.point, "purpose": self.purpose, "touch": self.touch, "tone": self.tone,
                "attempt": self.attempt - 1, "loop_ref": self.loop_ref, "failed": self.attempt - 1,
                "retry_at": self.until, "held": self.rule, "reason": self.reason,
            }
            if self.point == "evaluate_reply" and self.attempt == 1:
                _reply_answered(task, self.request_ref)

    class DecisionRecorded(TaskEvent):
        """A model decision with what it was asked, which adapter and model chose and why, and the tokens it spent
        on the tenant-local `day` (of them, `cache_read_tokens` read from the prompt cache); its effects follow it."""

        class_version = 2
        request_ref: str
        point: str
        adapter: str
        model: str
        decision: str
        confidence: float
        reasoning: str
        prompt_digest: str
        input_tokens: int
        output_tokens: int
        output: dict[str, Any]
        cache_read_tokens: int = 0
        cache_write_tokens: int = 0
        day: str | None = None

        @staticmethod
        def upcast_v1_v2(state: dict[str, Any]) -> None:
            """A version-1 decision was asked before the prompt cache and the day's model-call ledger."""
            state.update(cache_read_tokens=0, cache_write_tokens=0, day=None)

        def apply(self, task: Task) -> None:
            task.pending_decisions.pop(self.request_ref, None)

    class DecisionFailed(TaskEvent):
        """The model could not decide; `retry_at` is when it is asked again (None: the task escalates instead)."""

        request_ref: str
        error: str
        attempt: int
        retry_at: datetime | None

        def apply(self, task: Task) -> None:
            pending = task.pending_decisions.get(self.request_ref)
            if pending is not None:
                pending["failed"] = self.attempt
                pending["retry_at"] = self.retry_at
            if self.retry_at is None:
                task.pending_decisions.pop(self.request_ref, None)

    class DecisionsWithdrawn(TaskEvent):
        """Decisions asked for and not answered yet that nothing will act on (the task went to the owner by a hard
        rule): an answer that comes for one later changes nothing."""

        request_refs: list[str]
        reason: str

        def apply(self, task: Task) -> None:
            for ref in self.request_refs:
                task.pending_decisions.pop(ref, None)

    class DecisionPaused(TaskEvent):
        """A pause (`domain/pause.py`) was in force when the agent read the request: no model was asked, and the
        request waits, still pending, for the resume."""

        request_ref: str
        attempt: int
        reason: str

        def apply(self, task: Task) -> None:
            task.pending_decisions[self.request_ref]["paused"] = True

    class DecisionResumed(DecisionAsked):
        """The pause is over: the paused request is asked as it was (the agent reads this as it reads a request)."""

        def apply(self, task: Task) -> None:
            task.pending_decisions[self.request_ref].pop("paused", None)

    def request_decision(
        self, *, request_ref: str, point: str, purpose: str, touch: int | None, tone: str | None, reason: str,
        now: datetime, attempt: int = 1, loop_ref: str | None = None, day: date | None = None,
    ) -> None:
        """Asks for a model decision; a request already pending at this attempt is not asked twice. Called only by
        `processors/handlers/model_calls.py`, which runs the model-call checks first and counts it on `day`."""
        self.check_open()
        pending = self.pending_decisions.get(request_ref)
        if pending is not None and pending["attempt"] >= attempt:
            return
        self.trigger_event(
            self.DecisionRequested, timestamp=now, request_ref=request_ref, point=point, purpose=purpose, touch=touch,
            tone=tone, reason=reason, attempt=attempt, loop_ref=loop_ref, day=day.isoformat() if day else None,
        )

    def withdraw_decisions(self, *, reason: str, now: datetime) -> None:
        if self.pending_decisions:
            self.trigger_event(self.DecisionsWithdrawn, timestamp=now, request_refs=sorted(self.pending_decisions),
                               reason=reason)

    def pause_decision(self, *, request_ref: str, attempt: int, reason: str, now: datetime) -> None:
        if self.pending_decision(request_ref, attempt) is None:
            raise AlreadyDecided(f"task {self.ref} has no pending decision {request_ref!r} (attempt {attempt})")
        self.trigger_event(self.DecisionPaused, timestamp=now, request_ref=request_ref, attempt=attempt, reason=reason)

    def resume_decision(self, *, request_ref: str, attempt: int, reason: str, now: datetime) -> bool:
        """Asks a paused request again; False when it is paused no more (decided, replaced by a newer reply's, closed)."""
        pending = self.pending_decision(request_ref, attempt)
        if pending is None or not pending.get("paused"):
            return False
        self.trigger_event(
            self.DecisionResumed, timestamp=now, request_ref=request_ref, point=pending["point"],
            purpose=pending["purpose"], touch=pending["touch"], tone=pending["tone"], reason=reason, attempt=attempt,
            loop_ref=pending["loop_ref"],
        )
        return True

    def is_asked(self, request_ref: str, attempt: int, now: datetime) -> bool:
        """Whether the request is pending at this attempt or later, or held back and not yet due: nothing to ask."""
        pending = self.pending_decisions.get(request_ref)
        if pending is None:
            return False
        return pending["attempt"] >= attempt or ("held" in pending and pending["retry_at"] > now)

    def hold_decision(
        self, *, request_ref: str, point: str, purpose: str, touch: int | None, tone: str | None, reason: str,
        rule: str, why: str, until: datetime, day: date, now: datetime, attempt: int = 1, loop_ref: str | None = None,
    ) -> None:
        """Holds a model call back until `until` (a model-call limit): asked for then, not dropped."""
        self.check_open()
        self.trigger_event(
            self.DecisionHeld, timestamp=now, request_ref=request_ref, point=point, purpose=purpose, touch=touch,
            tone=tone, reason=reason, attempt=attempt, loop_ref=loop_ref, rule=rule, why=why, until=until,
            day=day.isoformat(),
        )

    def pending_decision(self, request_ref: str, attempt: int) -> dict[str, Any] | None:
        """The request still waiting for this attempt's decision, or None (decided, failed, or asked again since)."""
        pending = self.pending_decisions.get(request_ref)
        if pending is None or self.is_closed or pending["attempt"] != attempt or pending["failed"] >= attempt:
            return None
        return pending

    def record_decision(
        self, *, request_ref: str, attempt: int, point: str, adapter: str, model: str, decision: str,
        confidence: float, reasoning: str, prompt_digest: str, input_tokens: int, output_tokens: int,
        output: dict[str, Any], now: datetime, cache_read_tokens: int = 0, cache_write_tokens: int = 0,
        day: date | None = None,
    ) -> None:
        """At most one decision per request: a request no longer pending refuses it (AlreadyDecided)."""
        if self.pending_decision(request_ref, attempt) is None:
            raise AlreadyDecided(f"task {self.ref} has no pending decision {request_ref!r} (attempt {attempt})")
        self.trigger_event(
            self.DecisionRecorded, timestamp=now, request_ref=request_ref, point=point, adapter=adapter, model=model,
            decision=decision, confidence=confidence, reasoning=reasoning, prompt_digest=prompt_digest,
            input_tokens=input_tokens, output_tokens=output_tokens, output=dict(output),
            cache_read_tokens=cache_read_tokens, cache_write_tokens=cache_write_tokens,
            day=day.isoformat() if day else None,
        )

    def fail_decision(self, *, request_ref: str, attempt: int, error: str, retry_at: datetime | None, now: datetime) -> None:
        if self.pending_decision(request_ref, attempt) is None:
            raise AlreadyDecided(f"task {self.ref} has no pending decision {request_ref!r} (attempt {attempt})")
        self.trigger_event(self.DecisionFailed, timestamp=now, request_ref=request_ref, error=error, attempt=attempt,
                           retry_at=retry_at)


def _reply_answered(task: Task, request_ref: str) -> None:
    """A reply counts a turn once, however often its evaluation is retried or held. It stops the cadence (only an
    evaluation saying `wait` resumes it): the touch being drafted and a touch a limit held back are dropped, so no
    follow-up goes out after the contact answered; an earlier reply still being evaluated is answered by this
    evaluation, which reads both."""
    task.turns_used += 1
    task.next_touch_at = None
    for ref, pending in list(task.pending_decisions.items()):
        if pending["purpose"] in ANSWERS and ref != request_ref:
            del task.pending_decisions[ref]
    if task.deferred is not None and not task.deferred["draft"].get("reply"):
        task.deferred = None
