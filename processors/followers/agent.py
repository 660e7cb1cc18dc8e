"""The decision processor: answers `Task.DecisionRequested` with the model, exactly once per request.

It follows the requests in the event store from its tracked position. For a batch it reads each
pending request's task (no transaction is held; the tenant's settings once per batch), calls the
model for all of them at once in a thread pool, and hands each answer to the bus as a
`DecisionReturned` (in the requests' order, while later calls are in flight): the answers are
recorded `RECORD_EVERY` to a transaction, each as a step of its own (`processors/handlers/answers.py`),
and the position moves with the last of them. A transaction holds few answers because every answer
files timers in the buckets all tenants share: a whole batch waiting on the model would meet another
process's commit there nearly every time. Answers that keep conflicting are recorded one per transaction. A request that is no longer pending (a repeat, another process's answer,
a crash after the call) records nothing, so a request gets at most one decision and a decision at
most one send; a conflict with a concurrent writer records the answers again (the model is not
asked again), and they then find their requests decided. A model that cannot decide records
`Task.DecisionFailed`: asked again by a `task_step` timer, escalated after the last.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any
from uuid import UUID

from eventsourcing.utils import get_topic

from loopline.domain.reply_routing import answered_signal
from loopline.domain.task import Task
from loopline.domain.tenant import TenantSettings
from loopline.processors.application import Loopline, Position, UnitOfWork
from loopline.processors.bus import Batch, Bus, KeptConflicting, Outcome
from loopline.processors.handlers.pausing import current_pause
from loopline.processors.messages import Answer, DecisionReturned, Held, Pending
from loopline.processors.ports import DecisionModel, DecisionRequest, ModelUnavailable
from loopline.processors.model.prompts import request_for, tenant_settings_of

TOPICS = [get_topic(Task.DecisionRequested), get_topic(Task.DecisionResumed)]
DEFAULT_CONCURRENCY = 16
RECORD_EVERY = 20
"""Answers recorded in one transaction: enough to share a commit's cost, few enough to rarely meet another writer."""


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
class AgentPass:
    """One pass: how many requests it read (0: none was waiting) and what its decisions did, in words."""

    read: int
    done: list[str]


@dataclass
class Answers:
    """A batch's answers as the bus reads them: handed over as each call returns, in the requests' order;
    read again after a conflict, the answers already in hand (no model is asked again)."""

    app: Loopline
    name: str
    end: int | None  # the notification id of the batch's last request, with the last answers: the position
    calls: list[tuple[Pending, Future[Answer]]]
    returned: list[DecisionReturned] = field(default_factory=list)
    only: int | None = None  # one answer's place, when the batch is recorded one answer at a time

    def read(self) -> Batch | None:
        previous = self.app.position(self.name)
        last = self.only is None or self.only == len(self.calls) - 1
        moves = self.end is not None and last and previous < self.end
        position = Position(self.name, self.end, previous=previous) if moves else None
        if self.only is not None:
            return Batch([self.returned[self.only]], position)
        return Batch(self._arriving() if not self.returned else list(self.returned), position)

    def one_by_one(self, batch: Batch) -> Iterator[Answers]:
        for place in range(len(self.calls)):
            yield Answers(self.app, self.name, self.end, self.calls, self.returned, only=place)

    def _arriving(self) -> Iterator[DecisionReturned]:
        """Each answer as soon as it and those before it have arrived: two tasks may compete for one
        contact's weekly limit, so the order decides, and it must not be the model's speed."""
        for item, call in self.calls:
            returned = DecisionReturned(item, call.result())
            self.returned.append(returned)
            yield returned


class Agent:
    name = "agent"

    def __init__(self, bus: Bus, model: DecisionModel, *, concurrency: int = DEFAULT_CONCURRENCY,
                 batch_size: int = 200) -> None:
        self.bus = bus
        self.app = bus.app
        self.model = model
        self.batch_size = batch_size
        self.pool = ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="loopline-model")

    def run_once(self) -> AgentPass:
        """Answers the next batch of requests."""
        previous = self.app.position(self.name)
        notifications = self.app.process_recorder.select_notifications(
            start=previous + 1, limit=self.batch_size, topics=TOPICS
        )
        if not notifications:
            return AgentPass(0, [])
        # Each call starts as soon as its request is built, so building the next ones overlaps the calls in flight.
        reader = UnitOfWork(self.app)
        calls = [(item, self._call(item, reader))
                 for item in self._pending([self.app.mapper.to_domain_event(n) for n in notifications])]
        groups = [calls[start:start + RECORD_EVERY] for start in range(0, len(calls), RECORD_EVERY)] or [[]]
        outcomes = []
        for place, group in enumerate(groups):
            end = notifications[-1].id if place == len(groups) - 1 else None
            outcomes += self._record(Answers(self.app, self.name, end, group))
        return AgentPass(len(notifications), [o.detail for o in outcomes if o.accepted and o.detail])

    def _record(self, answers: Answers) -> list[Outcome[Any]]:
        """The answers in one transaction, or, when other writers keep committing first, one per transaction
        (the answers are in hand: the model is not asked again)."""
        try:
            return self.bus.process(answers)
        except KeptConflicting:
            return [outcome for one in answers.one_by_one(Batch([])) for outcome in self.bus.process(one)]

    def close(self) -> None:
        self.pool.shutdown(wait=True)

    def _pending(self, requested: list[Any]) -> Iterator[Pending]:
        """The requests still waiting for their decision, each with everything the model is given, one by one."""
        found: set[tuple[UUID, str, int]] = set()
        settings: dict[str, TenantSettings] = {}
        reader = UnitOfWork(self.app)
        for event in requested:
            key = (event.originator_id, event.request_ref, event.attempt)
            if key in found:
                continue
            task = reader.get(event.originator_id, Task)
            pending = task.pending_decision(event.request_ref, event.attempt) if task is not None else None
            if task is None or pending is None:
                continue  # decided, failed for good, asked again since, or the task closed
            if task.tenant not in settings:
                settings[task.tenant] = tenant_settings_of(self.app, task.tenant)
            history = list(self.app.events.get(task.id, lte=task.version))
            request = request_for(reader, task, event, history, event.timestamp, settings=settings[task.tenant])
            found.add(key)
            yield Pending(
                task_id=task.id, task_ref=task.ref, tenant=task.tenant, request_ref=event.request_ref,
                attempt=event.attempt, point=event.point, purpose=event.purpose, touch=event.touch,
                loop_ref=event.loop_ref, requested_at=event.timestamp, reply_subject=_reply_subject(history, event),
                request=request,
            )

    def _call(self, item: Pending, reader: UnitOfWork) -> Future[Answer]:
        """The model's answer in the making; while the tenant or the system is paused, no call: the request is held."""
        pause = current_pause(reader, item.tenant)
        if pause is None:
            return self.pool.submit(self._decide, item.request)
        held: Future[Answer] = Future()
        held.set_result(Held(pause.says()))
        return held

    def _decide(self, request: DecisionRequest) -> Answer:
        """Runs in the pool, outside any transaction: a failure is an answer too, so nothing crashes."""
        try:
            return self.model.decide(request)
        except ModelUnavailable as error:
            return f"the model is unavailable: {error}"
        except Exception as error:  # noqa: BLE001 - an adapter's bug must not stop other tenants' decisions
            return f"the model adapter failed: {type(error).__name__}: {error}"


def _reply_subject(history: list[Any], requested: Any) -> str | None:
    """`Re:` the subject of the reply being answered (or of the last message sent), for a reply's subject."""
    subject = None
    for event in history:
        if isinstance(event, Task.SignalReceived) and event.signal_ref == answered_signal(requested.request_ref):
            subject = event.data.get("subject") or subject
        elif isinstance(event, Task.ActionRecorded) and event.sent_by_loopline and subject is None:
            subject = event.details.get("subject")
    if not subject:
        return None
    return subject if str(subject).lower().startswith("re:") else f"Re: {subject}"
