"""The decision processor: answers `Task.DecisionRequested` with the model, exactly once per request.

It follows the requests in the event store from its tracked position. For a batch it reads each
pending request's task (no transaction is held; the tenant's settings once per batch), calls the
model for all of them at once, each in a thread of its own (at most `concurrency` at a time), and
hands the answers to the bus as `DecisionReturned`s, in the requests' order, `RECORD_EVERY` to a
transaction while later calls are in flight, each as a step of its own (`processors/handlers/answers.py`);
the position moves with the last of them. A pass waits for a call no longer than one call's timeout
(`call_timeout`): a model that hangs (or retries) goes on in the background, the position stops before
its request, the decision waits, and a later pass records its answer without asking again. A
transaction holds few answers because every answer files timers in the buckets all tenants share: a
whole batch waiting on the model would meet another process's commit there nearly every time. Answers
that keep conflicting are recorded one per transaction. A request that is no longer pending (a repeat, another process's answer,
a crash after the call) records nothing, so a request gets at most one decision and a decision at
most one send; a conflict with a concurrent writer records the answers again (the model is not
asked again), and they then find their requests decided. A model that cannot decide records
`Task.DecisionFailed`: asked again by a `task_step` timer, escalated after the last.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future, wait
from dataclasses import dataclass, field
from typing import Any, TypeVar
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
T = TypeVar("T")
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


Key = tuple[UUID, str, int]
"""A request to answer: its task, request ref and attempt."""


@dataclass
class Call:
    """One model call in a thread of its own: its answer to come, and when it got a slot (None: it waits for one)."""

    answer: Future[Answer] = field(default_factory=Future)
    started: float | None = None


class Agent:
    name = "agent"

    def __init__(self, bus: Bus, model: DecisionModel, *, concurrency: int = DEFAULT_CONCURRENCY,
                 batch_size: int = 200, call_timeout: float | None = None) -> None:
        self.bus = bus
        self.app = bus.app
        self.model = model
        self.batch_size = batch_size
        self.call_timeout = call_timeout
        """The longest a pass waits for a call (the model's own timeout for one try); None: until it answers."""
        self.slots = threading.BoundedSemaphore(concurrency)
        self.in_flight: dict[Key, Call] = {}
        """Calls started and not yet recorded: a later pass takes their answers."""

    def run_once(self) -> AgentPass:
        """Answers the next batch of requests, in order, as far as their calls answered within one call's timeout
        of starting: a later call (a hanging model, its retries) goes on in the background, its request stays
        unanswered (the position stops before it), and a later pass records its answer; no model is asked twice."""
        previous = self.app.position(self.name)
        notifications = self.app.process_recorder.select_notifications(
            start=previous + 1, limit=self.batch_size, topics=TOPICS
        )
        if not notifications:
            return AgentPass(0, [])
        # Each call starts as soon as its request is built, so building the next ones overlaps the calls in flight.
        reader = UnitOfWork(self.app)
        calls = [(place, item, self._call(item, reader)) for place, item in self._pending(notifications)]
        asked = {_key(item) for _, item, _ in calls}
        for key in [key for key, call in self.in_flight.items() if key not in asked and call.answer.done()]:
            del self.in_flight[key]  # answered by another process meanwhile, or no longer pending
        ends = None if self.call_timeout is None else time.monotonic() + self.call_timeout
        outcomes: list[Outcome[Any]] = []
        answered = 0
        for first in range(0, max(len(calls), 1), RECORD_EVERY):
            group = calls[first:first + RECORD_EVERY]
            ready = _answered(group, ends, self.call_timeout)
            answered += ready
            last = ready < len(group) or first + RECORD_EVERY >= len(calls)
            end = (notifications[-1].id if ready == len(group) else group[ready][0] - 1) if last else None
            answers = [(item, call.answer) for _, item, call in group[:ready]]
            outcomes += self._record(Answers(self.app, self.name, end, answers))
            for _, item, _ in group[:ready]:
                self.in_flight.pop(_key(item), None)
            if last:
                break
        read = len(notifications) if answered == len(calls) else answered
        return AgentPass(read, [o.detail for o in outcomes if o.accepted and o.detail])

    def _call(self, item: Pending, reader: UnitOfWork) -> Call:
        """The request's call: the one in flight, or a new one in a daemon thread (a call that hangs never keeps
        the process from ending; its request is asked again by the next process). While the tenant or the system is
        paused, no call: the request is held (read again by each pass, so a resume is seen)."""
        pause = current_pause(reader, item.tenant)
        if pause is not None and _key(item) not in self.in_flight:
            held = Call()
            held.answer.set_result(Held(pause.says()))
            return held
        key = _key(item)
        known = self.in_flight.get(key)
        if known is None or (known.answer.done() and known.answer.exception() is not None):
            call = self.in_flight[key] = Call()

            def ask() -> None:
                with self.slots:
                    call.started = time.monotonic()
                    try:
                        call.answer.set_result(self._decide(item.request))
                    except BaseException as error:  # the process being stopped: raised to the pass that waits
                        call.answer.set_exception(error)

            threading.Thread(target=ask, name="loopline-model", daemon=True).start()
        return self.in_flight[key]

    def _record(self, answers: Answers) -> list[Outcome[Any]]:
        """The answers in one transaction, or, when other writers keep committing first, one per transaction
        (the answers are in hand: the model is not asked again)."""
        try:
            return self.bus.process(answers)
        except KeptConflicting:
            return [outcome for one in answers.one_by_one(Batch([])) for outcome in self.bus.process(one)]

    def close(self) -> None:
        """Forgets the calls in flight: their requests are asked again by whichever process answers them next."""
        self.in_flight.clear()

    def _pending(self, notifications: list[Any]) -> Iterator[tuple[int, Pending]]:
        """The requests still waiting for their decision, each with its notification's id and everything the model
        is given, one by one."""
        found: set[Key] = set()
        settings: dict[str, TenantSettings] = {}
        reader = UnitOfWork(self.app)
        for notification in notifications:
            event = self.app.mapper.to_domain_event(notification)
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
            yield notification.id, Pending(
                task_id=task.id, task_ref=task.ref, tenant=task.tenant, request_ref=event.request_ref,
                attempt=event.attempt, point=event.point, purpose=event.purpose, touch=event.touch,
                loop_ref=event.loop_ref, requested_at=event.timestamp, reply_subject=_reply_subject(history, event),
                request=request,
            )

    def _decide(self, request: DecisionRequest) -> Answer:
        """Runs in a thread of its own, outside any transaction."""
        return answer_or_why(lambda: self.model.decide(request))


def answer_or_why(call: Callable[[], T]) -> T | str:
    """A model call's answer, or why there is none: a failure is an answer too, so nothing crashes."""
    try:
        return call()
    except ModelUnavailable as error:
        return f"the model is unavailable: {error}"
    except Exception as error:  # noqa: BLE001 - an adapter's bug must not stop other tenants' calls
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


def _key(item: Pending) -> Key:
    return item.task_id, item.request_ref, item.attempt


def _answered(calls: list[tuple[int, Pending, Call]], ends: float | None, call_timeout: float | None) -> int:
    """How many calls from the first have answered, each waited for until one call's timeout after it got its
    slot and no later than the pass's end (`ends`; None: every call is waited for until it answers)."""
    for place, (_, _, call) in enumerate(calls):
        if ends is None or call_timeout is None:
            call.answer.result()
            continue
        until = ends if call.started is None else min(ends, call.started + call_timeout)
        if not wait([call.answer], timeout=max(0.0, until - time.monotonic())).done:
            return place
    return len(calls)
