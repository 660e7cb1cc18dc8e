"""The Task aggregate: multi-step work an agent tracks across time and channels (seed 000 Part 1)."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from eventsourcing.domain import Aggregate

from loopline.domain.base import LooplineAggregate, TaskEvent
from loopline.domain.errors import DomainError
from loopline.domain.status import AT_EXPIRY, TERMINAL, TaskStatus, check_transition, parse_status


class TaskClosed(DomainError):
    """The task is completed, cancelled or expired; it takes no more work."""


class DuplicateWakeup(DomainError):
    pass


class AlreadyDecided(DomainError):
    """A decision for a request that is no longer pending: a repeat, or one recorded by another process."""


class OwnerDecision(DomainError):
    """A status change only the owner may make (seed 002 §3, seed 004 §2), asked for by progress notes."""


OWNER_DECISIONS: dict[tuple[TaskStatus, TaskStatus], str] = {
    (TaskStatus.PENDING_REVIEW, TaskStatus.READY): "only the owner approves: use task.approve",
    (TaskStatus.ESCALATED, TaskStatus.EXECUTING): "only owner guidance resumes: use task.guidance",
}
"""Transitions `task.update` may not make, with the command that makes each."""


class Task(LooplineAggregate):
    """Events carry the business time as their timestamp and every field their `apply` needs.

    The state stays small (counters, not lists of everything that happened; the read models
    keep the history), so snapshots of long-running tasks stay cheap to write and to load.
    Every event names its tenant and task, and every event that moves the task names the
    status it leads to.
    """

    OWNER = {"tenant": "tenant", "task_ref": "ref"}

    class_version = 2
    """Version 2 adds the outreach plan and its counters (`upcast_v1_v2` gives old snapshots their defaults)."""

    class Created(Aggregate.Created):
        tenant: str
        ref: str
        title: str
        description: str
        task_type: str
        status: str
        expires_at: datetime | None
        priority: str | None
        contact: str | None
        confidence: float | None
        context: dict[str, Any]
        reason: str

    class ActionRecorded(TaskEvent):
        action: str
        details: dict[str, Any]
        summary: str
        performed_by: str
        status: str

        def apply(self, task: Task) -> None:
            task.actions_count += 1
            if self.performed_by == "loopline":
                task.deferred = None  # what a limit held back has gone out (or a newer message replaced it)
            task._moved(self.status, self.timestamp)

    class LoopLinked(TaskEvent):
        loop_ref: str

        def apply(self, task: Task) -> None:
            task.open_loops.append(self.loop_ref)

    class LoopClosed(TaskEvent):
        loop_ref: str
        resolved_by: str

        def apply(self, task: Task) -> None:
            task.open_loops.remove(self.loop_ref)

    class SignalReceived(TaskEvent):
        signal_ref: str
        signal_type: str
        data: dict[str, Any]
        resolved_loops: list[str]
        status: str

        def apply(self, task: Task) -> None:
            task.inbox_count += 1
            for loop_ref in self.resolved_loops:
                task.open_loops.remove(loop_ref)
            task._moved(self.status, self.timestamp)

    class ProgressNoted(TaskEvent):
        notes: str
        status: str

        def apply(self, task: Task) -> None:
            task._moved(self.status, self.timestamp)

    class UserNotified(TaskEvent):
        kind: str
        message: str

        def apply(self, task: Task) -> None:
            task.notifications += 1

    class Reviewed(TaskEvent):
        decision: str
        reason: str
        rejection_type: str | None
        status: str

        def apply(self, task: Task) -> None:
            task._moved(self.status, self.timestamp)

    class GuidanceGiven(TaskEvent):
        text: str
        status: str

        def apply(self, task: Task) -> None:
            task.escalation_reason = None
            task._moved(self.status, self.timestamp)

    class Escalated(TaskEvent):
        reason: str
        cause: str
        status: str

        def apply(self, task: Task) -> None:
            task.escalation_reason = self.reason
            task.escalation_cause = self.cause
            task._moved(self.status, self.timestamp)

    class Completed(TaskEvent):
        summary: str
        status: str

        def apply(self, task: Task) -> None:
            task._moved(self.status, self.timestamp)

    class Cancelled(TaskEvent):
        reason: str
        status: str

        def apply(self, task: Task) -> None:
            task._moved(self.status, self.timestamp)

    class Expired(TaskEvent):
        reason: str
        status: str

        def apply(self, task: Task) -> None:
            task._moved(self.status, self.timestamp)

    class WaitEnded(TaskEvent):
        """A waiting task's last open loop closed without an answer and no wake-up is pending: the agent's turn."""

        reason: str
        status: str

        def apply(self, task: Task) -> None:
            task._moved(self.status, self.timestamp)

    class WorkflowOutputRecorded(TaskEvent):
        workflow: str
        name: str
        output: Any

        def apply(self, task: Task) -> None:
            task.workflows.setdefault(self.workflow, 0)
            task.workflows[self.workflow] += 1
            task._moved(task.status, self.timestamp)

    class WakeupScheduled(TaskEvent):
        wake_ref: str
        at: datetime | None
        loop_ref: str | None
        reason: str

        def apply(self, task: Task) -> None:
            task.wakeups[self.wake_ref] = {"at": self.at, "loop_ref": self.loop_ref, "reason": self.reason}

    class WokenUp(TaskEvent):
        wake_ref: str
        cause: str
        reason: str
        status: str

        def apply(self, task: Task) -> None:
            task.wakeups.pop(self.wake_ref, None)  # an escalation wakes without a scheduled wake-up
            if self.cause == "escalation":  # being nudged is not activity: a stalled task stays flagged
                task.status = self.status
            else:
                task._moved(self.status, self.timestamp)

    class StallCheckScheduled(TaskEvent):
        at: datetime

        def apply(self, task: Task) -> None:
            task.next_stall_check = self.at

    class StallFlagged(TaskEvent):
        idle_days: int
        last_activity_at: datetime

        def apply(self, task: Task) -> None:
            task.stalled_since = self.timestamp

    class DecisionRequested(TaskEvent):
        """Asks the decision processor (`processors/agent.py`) for a model decision; `attempt` > 1 is a retry."""

        request_ref: str
        point: str
        purpose: str
        touch: int | None
        tone: str | None
        reason: str
        attempt: int
        loop_ref: str | None

        def apply(self, task: Task) -> None:
            task.pending_decisions[self.request_ref] = {
                "point": self.point, "purpose": self.purpose, "touch": self.touch, "tone": self.tone,
                "attempt": self.attempt, "loop_ref": self.loop_ref, "failed": 0,
            }
            if self.point == "evaluate_reply" and self.attempt == 1:  # a reply counts a turn once, however often retried
                task.turns_used += 1
                # A reply stops the cadence (only an evaluation saying `wait` resumes it): the touch being drafted
                # and a touch a limit held back are dropped, so no follow-up goes out after the contact answered.
                task.next_touch_at = None
                for ref, pending in list(task.pending_decisions.items()):
                    if pending["purpose"] == "touch":
                        del task.pending_decisions[ref]
                if task.deferred is not None and not task.deferred["draft"].get("reply"):
                    task.deferred = None

    class DecisionRecorded(TaskEvent):
        """A model decision with what it was asked and why it chose (BRIEF invariant 8); its effects follow it."""

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

    class TouchSent(TaskEvent):
        """A message went to the contact (`touch` is the cadence position; a reply keeps it): counts against the budget."""

        touch: int
        messages_used: int
        next_touch_at: datetime | None

        def apply(self, task: Task) -> None:
            task.touch = self.touch
            task.messages_used = self.messages_used
            task.next_touch_at = self.next_touch_at
            task.deferred = None

    class SendDeferred(TaskEvent):
        """A send that would break a limit waits until `until`, with its draft kept (no new model call then)."""

        rule: str
        reason: str
        until: datetime
        draft: dict[str, Any]

        def apply(self, task: Task) -> None:
            task.deferred = {"rule": self.rule, "until": self.until, "draft": self.draft}

    class NextTouchScheduled(TaskEvent):
        """The contact answered and the evaluation said wait: the cadence resumes at `next_touch_at`."""

        next_touch_at: datetime
        reason: str
        status: str

        def apply(self, task: Task) -> None:
            task.next_touch_at = self.next_touch_at
            task.status = self.status  # waiting again; the reply before it was the activity

    class OutcomeSet(TaskEvent):
        """The outcome code a closing task ends with, from its type's spectrum (seed 002 §5.3)."""

        code: str
        kind: str
        provisional: bool
        reason: str

        def apply(self, task: Task) -> None:
            task.outcome = self.code

    class WentDormant(TaskEvent):
        """The cadence is spent and says dormant: nothing is sent; a reply wakes the task, `until` closes it."""

        until: datetime
        reason: str
        status: str

        def apply(self, task: Task) -> None:
            task.dormant_until = self.until
            task._moved(self.status, self.timestamp)

    class OutreachPlanned(TaskEvent):
        """An acting task's budget and cadence, copied from its type at creation (seed 002 §6.1): a later
        change of the registry never changes a running task."""

        budget_messages: int
        budget_turns: int
        ends_at: datetime | None
        cadence: str
        intervals: list[int]
        tones: list[str]
        on_exhaustion: str
        dormant_check_days: int | None
        dormant_max_days: int | None
        draft: dict[str, Any] | None
        contact_name: str | None

        def apply(self, task: Task) -> None:
            task.outreach = {
                "budget_messages": self.budget_messages, "budget_turns": self.budget_turns, "ends_at": self.ends_at,
                "cadence": self.cadence, "intervals": list(self.intervals), "tones": list(self.tones),
                "on_exhaustion": self.on_exhaustion, "dormant_check_days": self.dormant_check_days,
                "dormant_max_days": self.dormant_max_days, "draft": self.draft, "contact_name": self.contact_name,
            }

    class ContextMerged(TaskEvent):
        """A second `task.create` for the same contact and type added its context to this active task (§7.7)."""

        context: dict[str, Any]
        source_ref: str

        def apply(self, task: Task) -> None:
            task.context = {**task.context, **self.context}

    def __init__(
        self,
        tenant: str,
        ref: str,
        title: str,
        description: str,
        task_type: str,
        status: str,
        expires_at: datetime | None,
        priority: str | None,
        contact: str | None,
        confidence: float | None,
        context: dict[str, Any],
        reason: str,
    ) -> None:
        self.tenant = tenant
        self.ref = ref
        self.title = title
        self.description = description
        self.task_type = task_type
        self.status = TaskStatus(status)
        self.expires_at = expires_at
        self.priority = priority
        self.contact = contact
        self.confidence = confidence
        self.context = context
        self.last_activity_at: datetime = self.created_on
        self.actions_count = 0
        self.inbox_count = 0
        self.open_loops: list[str] = []
        self.notifications = 0
        self.escalation_reason: str | None = None
        self.escalation_cause: str | None = None
        self.workflows: dict[str, int] = {}
        self.wakeups: dict[str, dict[str, Any]] = {}
        self.stalled_since: datetime | None = None
        self.next_stall_check: datetime | None = None
        self.outreach: dict[str, Any] | None = None
        """The plan of an acting task (`OutreachPlanned`); None for a follow-through task."""
        self.messages_used = 0
        self.turns_used = 0
        self.touch = 0
        self.next_touch_at: datetime | None = None
        """When the cadence's next step is due; None after a reply, until an evaluation says wait."""
        self.dormant_until: datetime | None = None
        self.pending_decisions: dict[str, dict[str, Any]] = {}
        """Model decisions asked for and not yet recorded, by request ref (`processors/agent.py` reads them)."""
        self.deferred: dict[str, Any] | None = None
        """A send a limit deferred, with its draft, sent as is when the limit frees up."""
        self.outcome: str | None = None

    @staticmethod
    def upcast_v1_v2(state: dict[str, Any]) -> None:
        """A version-1 snapshot is of a task that never planned outreach."""
        state.update(outreach=None, messages_used=0, turns_used=0, touch=0, next_touch_at=None, dormant_until=None,
                     pending_decisions={}, deferred=None, outcome=None)

    @classmethod
    def create(cls, *, id: Any, now: datetime, **fields: Any) -> Task:  # noqa: A002
        return cls._create(cls.Created, id=id, timestamp=now, **fields)

    @property
    def is_acting(self) -> bool:
        """Loopline works it itself: drafts, sends, follows the cadence (DESIGN11 "acting task")."""
        return self.outreach is not None

    def plan_outreach(
        self, *, budget_messages: int, budget_turns: int, ends_at: datetime | None, cadence: str,
        intervals: list[int], tones: list[str], on_exhaustion: str, dormant_check_days: int | None,
        dormant_max_days: int | None, draft: dict[str, Any] | None, contact_name: str | None, now: datetime,
    ) -> None:
        self.trigger_event(
            self.OutreachPlanned, timestamp=now, budget_messages=budget_messages, budget_turns=budget_turns,
            ends_at=ends_at, cadence=cadence, intervals=list(intervals), tones=list(tones),
            on_exhaustion=on_exhaustion, dormant_check_days=dormant_check_days, dormant_max_days=dormant_max_days,
            draft=dict(draft) if draft is not None else None, contact_name=contact_name,
        )

    def merge_context(self, context: dict[str, Any], *, source_ref: str, now: datetime) -> None:
        """Later values win key by key; the task's status and plan are unchanged."""
        self.check_open()
        self.trigger_event(self.ContextMerged, timestamp=now, context=dict(context), source_ref=source_ref)

    @property
    def status(self) -> TaskStatus:
        # Stored as a plain string, so a snapshot (JSON) restores it like every other field.
        return TaskStatus(self.__dict__["status"])

    @status.setter
    def status(self, value: str) -> None:
        self.__dict__["status"] = str(TaskStatus(value))

    def _moved(self, status: str, at: datetime) -> None:
        """Every change of state is activity: it also clears a stalled flag."""
        self.status = TaskStatus(status)
        # A reply kept for a loop registered late is stamped with its own, later time: never go back.
        self.last_activity_at = max(self.last_activity_at, at)
        self.stalled_since = None

    @property
    def is_closed(self) -> bool:
        return self.status in TERMINAL

    def check_open(self) -> None:
        if self.is_closed:
            raise TaskClosed(f"task {self.ref} is {self.status}; it takes no more work")

    def _target(self, target: TaskStatus) -> TaskStatus:
        check_transition(self.status, target)
        return target

    def _after_action(self, awaits: bool) -> TaskStatus:
        """An action that awaits an answer leaves the task waiting on it; one that awaits nothing leaves
        it executing (an escalated task stays with the owner, a waiting one keeps waiting)."""
        if self.status in (TaskStatus.WAITING, TaskStatus.ESCALATED):
            return self.status
        if self.status is not TaskStatus.EXECUTING:
            check_transition(self.status, TaskStatus.EXECUTING)
        if not awaits:
            return TaskStatus.EXECUTING
        check_transition(TaskStatus.EXECUTING, TaskStatus.WAITING)
        return TaskStatus.WAITING

    def record_action(
        self, *, action: str, details: dict[str, Any], summary: str, performed_by: str, now: datetime, awaits: bool = True
    ) -> None:
        """`awaits` says whether a loop for the action's answer is registered with it (a task waits only on something)."""
        self.check_open()
        self.trigger_event(
            self.ActionRecorded, timestamp=now, action=action, details=details, summary=summary,
            performed_by=performed_by, status=self._after_action(awaits),
        )

    def check_may_act(self) -> None:
        """Raises what recording an action would raise now (a task not yet approved cannot act), so a send is
        refused before the model is asked to write it."""
        self.check_open()
        self._after_action(True)

    def end_wait(self, *, reason: str, now: datetime) -> None:
        """A task is `waiting` only while a loop is open, a wake-up or a decision is pending; with none left (a loop
        passed its deadline or was resolved by hand), it goes back to `executing`: the agent's turn."""
        pending = any(w["loop_ref"] is None or w["loop_ref"] in self.open_loops for w in self.wakeups.values())
        pending = pending or bool(self.pending_decisions)  # the model is writing what comes next
        if self.status is TaskStatus.WAITING and not self.open_loops and not pending:
            self.trigger_event(self.WaitEnded, timestamp=now, reason=reason, status=self._target(TaskStatus.EXECUTING))

    def link_loop(self, loop_ref: str, *, now: datetime) -> None:
        self.check_open()
        self.trigger_event(self.LoopLinked, timestamp=now, loop_ref=loop_ref)

    def close_loop(self, loop_ref: str, *, resolved_by: str, now: datetime) -> None:
        if loop_ref in self.open_loops:
            self.trigger_event(self.LoopClosed, timestamp=now, loop_ref=loop_ref, resolved_by=resolved_by)

    def receive_signal(
        self, *, signal_ref: str, signal_type: str, data: dict[str, Any], resolved_loops: list[str], now: datetime
    ) -> None:
        """Stores the signal in the inbox and wakes a waiting or dormant task."""
        status = self.status
        if status in (TaskStatus.WAITING, TaskStatus.DORMANT):
            status = self._target(TaskStatus.EXECUTING)
        resolved = [ref for ref in resolved_loops if ref in self.open_loops]
        self.trigger_event(
            self.SignalReceived, timestamp=now, signal_ref=signal_ref, signal_type=signal_type, data=data,
            resolved_loops=resolved, status=status,
        )
        self._wake_for_signal(resolved, signal_ref=signal_ref, signal_type=signal_type, now=now)

    def close_loop_by_signal_in_inbox(self, loop_ref: str, *, signal_ref: str, signal_type: str, now: datetime) -> None:
        """A signal this task already received resolves one more of its loops (registered late): no second
        inbox entry, but the loop closes and its wake-up wakes as if both had been resolved together."""
        self.close_loop(loop_ref, resolved_by="signal_match", now=now)
        self._wake_for_signal([loop_ref], signal_ref=signal_ref, signal_type=signal_type, now=now)

    def _wake_for_signal(self, resolved: list[str], *, signal_ref: str, signal_type: str, now: datetime) -> None:
        for wake_ref, wakeup in list(self.wakeups.items()):
            if wakeup["loop_ref"] in resolved:
                self.wake(wake_ref, cause="signal", reason=f"{signal_type} {signal_ref} came first", now=now)

    def note_progress(self, *, notes: str, status: str | None, now: datetime) -> None:
        self.check_open()
        target = parse_status(status) if status else self.status
        if target != self.status:
            check_transition(self.status, target)
        if target in TERMINAL:
            raise TaskClosed(f"use task.complete or task.cancel to close task {self.ref}, not task.update")
        owner_decision = OWNER_DECISIONS.get((self.status, target))
        if owner_decision:
            raise OwnerDecision(f"task.update cannot move task {self.ref} from {self.status} to {target}; {owner_decision}")
        self.trigger_event(self.ProgressNoted, timestamp=now, notes=notes, status=target)

    def notify_user(self, *, kind: str, message: str, now: datetime) -> None:
        self.trigger_event(self.UserNotified, timestamp=now, kind=kind, message=message)

    def approve(self, *, reason: str, now: datetime) -> None:
        self.trigger_event(
            self.Reviewed, timestamp=now, decision="approved", reason=reason, rejection_type=None,
            status=self._target(TaskStatus.READY),
        )

    def reject(self, *, reason: str, rejection_type: str | None, now: datetime) -> None:
        self.trigger_event(
            self.Reviewed, timestamp=now, decision="rejected", reason=reason, rejection_type=rejection_type,
            status=self._target(TaskStatus.CANCELLED),
        )

    def give_guidance(self, *, text: str, now: datetime) -> None:
        self.trigger_event(self.GuidanceGiven, timestamp=now, text=text, status=self._target(TaskStatus.EXECUTING))

    def escalate(self, *, reason: str, cause: str, now: datetime) -> None:
        """Hands the task to the owner; an escalated task escalated again stays escalated with the newer reason."""
        status = self.status if self.status is TaskStatus.ESCALATED else self._target(TaskStatus.ESCALATED)
        self.trigger_event(self.Escalated, timestamp=now, reason=reason, cause=cause, status=status)

    def complete(self, *, summary: str, now: datetime) -> None:
        self.trigger_event(self.Completed, timestamp=now, summary=summary, status=self._target(TaskStatus.COMPLETED))

    def cancel(self, *, reason: str, now: datetime) -> None:
        self.trigger_event(self.Cancelled, timestamp=now, reason=reason, status=self._target(TaskStatus.CANCELLED))

    def expire(self, *, reason: str, now: datetime) -> None:
        self.trigger_event(self.Expired, timestamp=now, reason=reason, status=self._target(TaskStatus.EXPIRED))

    def request_decision(
        self, *, request_ref: str, point: str, purpose: str, touch: int | None, tone: str | None, reason: str,
        now: datetime, attempt: int = 1, loop_ref: str | None = None,
    ) -> None:
        """Asks for a model decision; a request already pending at this attempt is not asked twice."""
        self.check_open()
        pending = self.pending_decisions.get(request_ref)
        if pending is not None and pending["attempt"] >= attempt:
            return
        self.trigger_event(
            self.DecisionRequested, timestamp=now, request_ref=request_ref, point=point, purpose=purpose, touch=touch,
            tone=tone, reason=reason, attempt=attempt, loop_ref=loop_ref,
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
        output: dict[str, Any], now: datetime,
    ) -> None:
        """At most one decision per request: a request no longer pending refuses it (AlreadyDecided)."""
        if self.pending_decision(request_ref, attempt) is None:
            raise AlreadyDecided(f"task {self.ref} has no pending decision {request_ref!r} (attempt {attempt})")
        self.trigger_event(
            self.DecisionRecorded, timestamp=now, request_ref=request_ref, point=point, adapter=adapter, model=model,
            decision=decision, confidence=confidence, reasoning=reasoning, prompt_digest=prompt_digest,
            input_tokens=input_tokens, output_tokens=output_tokens, output=dict(output),
        )

    def fail_decision(self, *, request_ref: str, attempt: int, error: str, retry_at: datetime | None, now: datetime) -> None:
        if self.pending_decision(request_ref, attempt) is None:
            raise AlreadyDecided(f"task {self.ref} has no pending decision {request_ref!r} (attempt {attempt})")
        self.trigger_event(self.DecisionFailed, timestamp=now, request_ref=request_ref, error=error, attempt=attempt,
                           retry_at=retry_at)

    def touch_sent(self, *, touch: int, next_touch_at: datetime | None, now: datetime) -> None:
        self.trigger_event(self.TouchSent, timestamp=now, touch=touch, messages_used=self.messages_used + 1,
                           next_touch_at=next_touch_at)

    def defer_send(self, *, rule: str, reason: str, until: datetime, draft: dict[str, Any], now: datetime) -> None:
        self.check_open()
        self.trigger_event(self.SendDeferred, timestamp=now, rule=rule, reason=reason, until=until, draft=dict(draft))

    def schedule_next_touch(self, at: datetime, *, reason: str, now: datetime) -> None:
        """Waits for the contact again (a loop on their reply is opened with it) until the cadence's next touch."""
        self.check_open()
        status = self._target(TaskStatus.WAITING) if self.status is TaskStatus.EXECUTING else self.status
        self.trigger_event(self.NextTouchScheduled, timestamp=now, next_touch_at=at, reason=reason, status=status)

    def set_outcome(self, *, code: str, kind: str, provisional: bool, reason: str, now: datetime) -> None:
        self.check_open()
        self.trigger_event(self.OutcomeSet, timestamp=now, code=code, kind=kind, provisional=provisional, reason=reason)

    def go_dormant(self, *, until: datetime, reason: str, now: datetime) -> None:
        self.trigger_event(self.WentDormant, timestamp=now, until=until, reason=reason,
                           status=self._target(TaskStatus.DORMANT))

    def record_workflow_output(self, *, workflow: str, output: Any, now: datetime) -> str:
        """Stores one output of a workflow the task owns, under a file name unique within the task."""
        self.check_open()
        number = self.workflows.get(workflow, 0) + 1
        extension = "md" if isinstance(output, str) else "json"
        name = f"{workflow}_{now.astimezone(timezone.utc):%Y-%m-%dT%H%M%SZ}_{number}.{extension}"
        self.trigger_event(self.WorkflowOutputRecorded, timestamp=now, workflow=workflow, name=name, output=output)
        return name

    def schedule_wakeup(self, wake_ref: str, *, at: datetime | None, loop_ref: str | None, reason: str, now: datetime) -> None:
        """Time (`at`), condition (`loop_ref`, a registered loop) or both; whichever comes first wakes the task."""
        self.check_open()
        if wake_ref in self.wakeups:
            raise DuplicateWakeup(f"task {self.ref} already has a pending wake-up {wake_ref!r}")
        self.trigger_event(self.WakeupScheduled, timestamp=now, wake_ref=wake_ref, at=at, loop_ref=loop_ref, reason=reason)

    def wake(self, wake_ref: str, *, cause: str, reason: str, now: datetime) -> None:
        """Wakes a waiting or dormant task for a pending wake-up; the wake-up's other trigger is then void."""
        status = self.status
        if status in (TaskStatus.WAITING, TaskStatus.DORMANT):
            status = self._target(TaskStatus.EXECUTING)
        self.trigger_event(self.WokenUp, timestamp=now, wake_ref=wake_ref, cause=cause, reason=reason, status=status)

    def wakeups_due(self, now: datetime) -> list[str]:
        """Time-only wake-ups whose time has come (a wake-up with a condition loop wakes through that loop)."""
        return [
            ref for ref, wakeup in self.wakeups.items()
            if wakeup["loop_ref"] is None and wakeup["at"] is not None and wakeup["at"] <= now
        ]

    def wakeup_for_loop(self, loop_ref: str) -> str | None:
        return next((ref for ref, wakeup in self.wakeups.items() if wakeup["loop_ref"] == loop_ref), None)

    def schedule_stall_check(self, at: datetime, *, now: datetime) -> None:
        self.trigger_event(self.StallCheckScheduled, timestamp=now, at=at)

    def stall_check_due(self, now: datetime) -> bool:
        """False for a check already done: its timer fired before (a repeated tick) and the next one is set."""
        return not self.is_closed and self.next_stall_check is not None and self.next_stall_check <= now

    def check_stalled(self, *, after_days: int, now: datetime) -> bool:
        """Flags the task when it has had no activity for `after_days` and waits for nothing: no open
        loop (whose deadline will act), no pending wake-up and no decision asked of the model. Once, until activity clears it."""
        if (self.is_closed or self.stalled_since is not None or self.open_loops or self.wakeups or self.pending_decisions
                or self.deferred):
            return False  # waiting on a loop, a wake-up, the model or a send limit is not idle
        if self.status in (TaskStatus.ESCALATED, TaskStatus.PENDING_REVIEW):
            return False  # already waiting on the owner
        idle = now - self.last_activity_at
        if idle.days < after_days:
            return False
        self.trigger_event(self.StallFlagged, timestamp=now, idle_days=idle.days, last_activity_at=self.last_activity_at)
        return True

    def expiry_outcome(self) -> TaskStatus:
        """The status reaching its expiry leads to from the task's current status (`AT_EXPIRY`)."""
        self.check_open()
        without_loops, with_loops = AT_EXPIRY[self.status]
        return with_loops if self.open_loops else without_loops

    def is_due_to_expire(self, now: datetime) -> bool:
        """Due, and not already escalated for expiry (seed 000 lifecycle step 5 guards re-escalation)."""
        return (
            self.expires_at is not None
            and self.expires_at <= now
            and not self.is_closed
            and not (self.status is TaskStatus.ESCALATED and self.escalation_cause == "expiry")
        )
