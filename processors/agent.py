"""The decision processor: answers `Task.DecisionRequested` with the model, exactly once per request.

It follows the requests in the event store from its tracked position. For a batch it reads each
pending request's task (no transaction is held), calls the model for all of them at once in a
thread pool, and records each answer (in the requests' order, while later calls are in flight) in a
unit of work of its own: `Task.DecisionRecorded` with its effects (a send through the send checks, an escalation, a close, a wait). A request that is
no longer pending (a repeat, another process's answer, a crash after the call) records nothing,
so a request gets at most one decision and a decision at most one send; a version conflict with
a concurrent writer redoes the record, which then finds the request decided. A model that cannot
decide records `Task.DecisionFailed`: asked again by a `task_step` timer, escalated after the last.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from uuid import UUID

from eventsourcing.persistence import IntegrityError
from eventsourcing.utils import get_topic

from loopline.domain import ids
from loopline.domain.errors import DomainError
from loopline.domain.open_loop import OpenLoop
from loopline.domain.outreach import Escalate, SendReply, SendTouch, apply_draft, apply_evaluation
from loopline.domain.task import Task
from loopline.domain.task_types import task_type
from loopline.domain.timers import TimerKind
from loopline.processors.application import Loopline, Position, UnitOfWork
from loopline.processors.deadline_actions import send_followup
from loopline.processors.loops import set_timer
from loopline.processors.outreach import (
    RETRY_DELAYS,
    act,
    escalate,
    plan_of,
    progress_of,
    send_message,
)
from loopline.processors.ports import Decision, DecisionModel, DecisionRequest, Draft, ModelUnavailable
from loopline.processors.prompts import request_for
from loopline.processors.steps import Fault, apply_steps

TOPICS = [get_topic(Task.DecisionRequested)]
DEFAULT_CONCURRENCY = 16
RETRIES = 10


def concurrency_from_env() -> int:
    """`LOOPLINE_MODEL_CONCURRENCY`: how many model calls are in flight at once (default 16)."""
    raw = os.environ.get("LOOPLINE_MODEL_CONCURRENCY", "")
    try:
        value = int(raw) if raw else DEFAULT_CONCURRENCY
    except ValueError:
        raise ValueError(f"LOOPLINE_MODEL_CONCURRENCY={raw!r} is not a whole number") from None
    if value < 1:
        raise ValueError(f"LOOPLINE_MODEL_CONCURRENCY={raw!r} must be at least 1")
    return value


@dataclass(frozen=True)
class Pending:
    """One request to answer, as read before the model is called."""

    task_id: UUID
    task_ref: str
    tenant: str
    request_ref: str
    attempt: int
    point: str
    purpose: str
    touch: int | None
    loop_ref: str | None
    requested_at: datetime
    reply_subject: str | None
    request: DecisionRequest


Answer = Decision | str
"""The model's decision, or why there is none."""


@dataclass(frozen=True)
class AgentPass:
    """One pass: how many requests it read (0: none was waiting) and what its decisions did, in words."""

    read: int
    done: list[str]


class Agent:
    name = "agent"

    def __init__(self, app: Loopline, model: DecisionModel, *, concurrency: int = DEFAULT_CONCURRENCY,
                 batch_size: int = 200, before_record: Callable[[Pending], None] | None = None) -> None:
        self.app = app
        self.model = model
        self.batch_size = batch_size
        self.pool = ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="loopline-model")
        self.before_record = before_record
        """Test-only: runs between the model's answer and its record (a crash or a rival process there)."""

    def run_once(self) -> AgentPass:
        """Answers the next batch of requests."""
        previous = self.app.position(self.name)
        notifications = self.app.process_recorder.select_notifications(
            start=previous + 1, limit=self.batch_size, topics=TOPICS
        )
        if not notifications:
            return AgentPass(0, [])
        # Each call starts as soon as its request is built, so building the next ones overlaps the calls in flight.
        calls = [(item, self.pool.submit(self._decide, item.request))
                 for item in self._pending([self.app.mapper.to_domain_event(n) for n in notifications])]
        done = []
        # Answers are recorded in the requests' order (two tasks may compete for one contact's weekly limit:
        # the order decides, so it must not be the model's speed), each as soon as it and those before it
        # have arrived, while later calls are still in flight; all are recorded before the position moves.
        for item, call in calls:
            answer = call.result()
            if self.before_record is not None:
                self.before_record(item)
            done += self._record(item, answer)
        try:
            UnitOfWork(self.app).commit(Position(self.name, notifications[-1].id, previous=previous))
        except IntegrityError:
            pass  # another agent moved the position first; every request it read is answered once either way
        return AgentPass(len(notifications), done)

    def close(self) -> None:
        self.pool.shutdown(wait=True)

    def _pending(self, requested: list[Any]) -> Iterator[Pending]:
        """The requests still waiting for their decision, each with everything the model is given, one by one."""
        found: set[tuple[UUID, str, int]] = set()
        reader = UnitOfWork(self.app)
        for event in requested:
            key = (event.originator_id, event.request_ref, event.attempt)
            if key in found:
                continue
            task = reader.get(event.originator_id, Task)
            pending = task.pending_decision(event.request_ref, event.attempt) if task is not None else None
            if task is None or pending is None:
                continue  # decided, failed for good, asked again since, or the task closed
            history = list(self.app.events.get(task.id, lte=task.version))
            request = request_for(reader, task, event, history, event.timestamp)
            found.add(key)
            yield Pending(
                task_id=task.id, task_ref=task.ref, tenant=task.tenant, request_ref=event.request_ref,
                attempt=event.attempt, point=event.point, purpose=event.purpose, touch=event.touch,
                loop_ref=event.loop_ref, requested_at=event.timestamp, reply_subject=_reply_subject(history, event),
                request=request,
            )

    def _decide(self, request: DecisionRequest) -> Answer:
        """Runs in the pool, outside any transaction: a failure is an answer too, so nothing crashes."""
        try:
            return self.model.decide(request)
        except ModelUnavailable as error:
            return f"the model is unavailable: {error}"
        except Exception as error:  # noqa: BLE001 - an adapter's bug must not stop other tenants' decisions
            return f"the model adapter failed: {type(error).__name__}: {error}"

    def _record(self, item: Pending, answer: Answer) -> list[str]:
        for _ in range(RETRIES):
            uow = UnitOfWork(self.app)
            outcomes = apply_steps(uow, [DecisionStep(item, answer)])
            try:
                uow.commit()
                return [o.detail for o in outcomes if o.accepted and o.detail]
            except IntegrityError:
                continue  # a concurrent writer changed the task: record again, or find it decided
        raise RuntimeError(f"recording the decision {item.request_ref} of task {item.task_ref} kept conflicting")


def _reply_subject(history: list[Any], requested: Any) -> str | None:
    """`Re:` the subject of the reply being answered (or of the last message sent), for a reply's subject."""
    subject = None
    for event in history:
        if isinstance(event, Task.SignalReceived) and event.signal_ref == requested.request_ref:
            subject = event.data.get("subject") or subject
        elif isinstance(event, Task.ActionRecorded) and event.performed_by == "loopline" and subject is None:
            subject = event.details.get("subject")
    if not subject:
        return None
    return subject if str(subject).lower().startswith("re:") else f"Re: {subject}"


@dataclass(frozen=True)
class DecisionStep:
    """One answer recorded with its effects, or its failure; a request no longer pending records nothing."""

    item: Pending
    answer: Answer

    def apply(self, uow: UnitOfWork) -> str | None:
        task = uow.get(self.item.task_id, Task)
        if task is None or task.pending_decision(self.item.request_ref, self.item.attempt) is None:
            return None
        now = max(self.item.requested_at, task.modified_on)
        if isinstance(self.answer, str):
            return self._failed(uow, task, self.answer, now)
        return self._decided(uow, task, self.answer, now)

    def _failed(self, uow: UnitOfWork, task: Task, error: str, now: datetime) -> str:
        attempt = self.item.attempt
        retry_at = now + RETRY_DELAYS[attempt - 1] if attempt <= len(RETRY_DELAYS) else None
        task.fail_decision(request_ref=self.item.request_ref, attempt=attempt, error=error, retry_at=retry_at, now=now)
        if retry_at is not None:
            set_timer(uow, kind=TimerKind.TASK_STEP, target_id=task.id, due=retry_at, now=now)
            return f"'{task.title}': {error}; asking again at {retry_at.isoformat()}"
        return escalate(uow, task, Escalate(f"{error} (tried {attempt} times); nothing was sent", "model_unavailable"),
                        now)

    def _decided(self, uow: UnitOfWork, task: Task, decision: Decision, now: datetime) -> str | None:
        item, output = self.item, decision.output
        task.record_decision(
            request_ref=item.request_ref, attempt=item.attempt, point=decision.point, adapter=decision.adapter,
            model=decision.model, decision=str(output.get("decision", "draft")), confidence=decision.confidence,
            reasoning=decision.reasoning, prompt_digest=decision.prompt_digest, input_tokens=decision.input_tokens,
            output_tokens=decision.output_tokens, output=output, now=now,
        )
        decided_by = f"{decision.adapter} {decision.model}"
        if item.purpose == "followup":
            loop = uow.get(ids.loop_id(task.tenant, str(item.loop_ref)), OpenLoop)
            assert loop is not None, f"follow-up decision {item.request_ref} names loop {item.loop_ref}, which does not exist"
            sent = send_followup(uow, loop, task, Draft(output["subject"], output["body"], decided_by), now)
            return f"'{task.title}': {sent}"
        if not task.is_acting:
            return None
        plan, progress = plan_of(task), progress_of(task)
        draft = {"decided_by": decided_by, "decision": item.request_ref, "confidence": decision.confidence}
        if item.point == "draft_message":
            action = apply_draft(output, decision.confidence, plan=plan, progress=progress)
            if isinstance(action, SendTouch):
                touch = item.touch or action.touch
                return send_message(uow, task, draft={**draft, "subject": output["subject"], "body": output["body"]},
                                    touch=touch, now=now)
            return act(uow, task, action, now)
        action = apply_evaluation(output, decision.confidence, plan=plan, progress=progress,
                                  outcomes=task_type(task.task_type).outcome_codes, now=now)
        if isinstance(action, SendReply):
            return send_message(uow, task, draft={**draft, "subject": item.reply_subject or "", "body": action.body},
                                touch=task.touch, now=now, reply=True)
        return act(uow, task, action, now)

    def refuse(self, uow: UnitOfWork, error: DomainError) -> None:
        self._give_up(uow, f"{type(error).__name__}: {error}")

    def park(self, uow: UnitOfWork, fault: Fault) -> None:
        self._give_up(uow, fault.reason)

    def _give_up(self, uow: UnitOfWork, why: str) -> None:
        """The decision's effects were refused (or kept failing): the request ends failed and the owner is told."""
        task = uow.get(self.item.task_id, Task)
        if task is None or task.pending_decision(self.item.request_ref, self.item.attempt) is None:
            return
        now = max(self.item.requested_at, task.modified_on)
        task.fail_decision(request_ref=self.item.request_ref, attempt=self.item.attempt, error=why, retry_at=None, now=now)
        task.notify_user(kind="decision_refused",
                         message=f"'{task.title}': the model's decision could not be carried out ({why}). "
                         "Nothing was sent; decide what should happen next.", now=now)
