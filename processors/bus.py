"""The one bus: every input (command, signal, timer firing, model answer) is a message applied as one
step of a batch, and the batch is committed in one transaction with its source's position.

A step either leaves its effects in the unit of work or, when the domain refuses it, is undone
(`UnitOfWork.rollback_step`) and its refusal recorded in a step of its own; the batch goes on.
A step that fails with anything else is undone and tried again (`MESSAGE_ATTEMPTS` in all, in case it was
transient), then parked with its error in a step of its own: one poison message never stops the
batch. Failures of the infrastructure (the database, the network) are not the message's fault and
propagate, so the batch is redone or the process stops.

A commit that conflicts (another process moved the position or wrote the same aggregates first)
reads the batch again from its source, which reads the stored position or state again, so nothing
another process applied meanwhile is applied twice. A batch whose events cannot be stored is
applied again one message per transaction, so the one at fault is parked alone. The sources (the
embedded log's router, the Kafka partition applier, the tick's bucket sweep, the agent, an
operator's retry of a parked message) only read and hand their batches over.
"""

from __future__ import annotations

import sqlite3
import traceback
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, Protocol, TypeVar

from eventsourcing.persistence import IntegrityError, PersistenceError

from loopline.domain.errors import DomainError
from loopline.domain.safety_limits import MESSAGE_ATTEMPTS
from loopline.processors.application import Loopline, Position, UnitOfWork

RETRIES = 10
INFRASTRUCTURE_MODULES = ("psycopg", "sqlalchemy", "aiokafka", "kafka")
M = TypeVar("M")


def is_infrastructure(error: BaseException) -> bool:
    """An error of the storage or the network, not of the message: never parked, always retried or raised."""
    if isinstance(error, (PersistenceError, sqlite3.Error, OSError, MemoryError)):
        return True
    return type(error).__module__.split(".")[0] in INFRASTRUCTURE_MODULES


@dataclass(frozen=True)
class Fault:
    """What an unexpected failure was, kept with what it parks: type, message and where it was raised."""

    error: Exception
    attempts: int

    @property
    def error_type(self) -> str:
        return type(self.error).__name__

    @property
    def message(self) -> str:
        return str(self.error)[:1000]

    @property
    def reason(self) -> str:
        return f"{self.error_type}: {self.message}" if self.message else self.error_type

    @property
    def trace(self) -> str:
        """The last frames of the traceback, one `file:line in function` per line."""
        frames = traceback.extract_tb(self.error.__traceback__)[-4:]
        return "\n".join(f"{frame.filename.rsplit('/', 2)[-1]}:{frame.lineno} in {frame.name}" for frame in frames)


class Notice(str):
    """A step's detail the sender is warned about although its message was accepted."""


class Unchanged(Notice):
    """A step's detail when its message was accepted but changed nothing although it asked for
    something other than what stands (a task.create of an existing task with another title): the
    sender is warned, since it is most often a mistake."""


@dataclass(frozen=True)
class Handler(Generic[M]):
    """What one kind of message means: `apply` makes its changes (a DomainError refuses it); `refuse`
    records why it was refused, on aggregates as they were before it; `park` records that it failed
    unexpectedly every time it was tried, so an operator can act. `prefetch` loads, for a whole
    batch at once, what its messages are about to ask for one by one."""

    apply: Callable[[UnitOfWork, M], str | None]
    refuse: Callable[[UnitOfWork, M, DomainError], None]
    park: Callable[[UnitOfWork, M, Fault], None]
    prefetch: Callable[[UnitOfWork, list[M]], None] | None = None


@dataclass(frozen=True)
class Outcome(Generic[M]):
    """What one message's step did; `step` is the message."""

    step: M
    accepted: bool
    detail: str | None
    parked: bool = False

    @property
    def warning(self) -> str | None:
        return self.detail if isinstance(self.detail, Notice) else None


@dataclass
class Outcomes(Generic[M]):
    """What a run of steps did, with the messages refused and those parked among them."""

    outcomes: list[Outcome[M]] = field(default_factory=list)

    @property
    def rejected(self) -> list[Outcome[M]]:
        return [outcome for outcome in self.outcomes if not (outcome.accepted or outcome.parked)]

    @property
    def parked(self) -> list[Outcome[M]]:
        return [outcome for outcome in self.outcomes if outcome.parked]


@dataclass(frozen=True)
class Batch:
    """Messages to apply in one transaction, with the source's new position when it keeps one. A source
    may hand its messages over as they arrive (an iterator): they are then applied as they come."""

    messages: Iterable[Any]
    position: Position | None = None


class Source(Protocol):
    """Where batches come from: read again after a conflict, so what is applied is what stands now."""

    def read(self) -> Batch | None:
        """The batch to apply now, read from the stored position (or state); None when nothing is waiting."""
        ...

    def one_by_one(self, batch: Batch) -> Iterable[Source]:
        """Sources of one message each, in turn, for a batch that could not be stored as a whole."""
        ...


class UnstorableBatch(Exception):
    """A batch of several messages could not be committed because of what one of them caused."""


class KeptConflicting(RuntimeError):
    """Other processes kept committing first, `RETRIES` times in a row: the source may try smaller batches."""


class Bus:
    """Applies, refuses, parks, commits and retries for every source, through one handler per kind of message."""

    def __init__(self, app: Loopline, handlers: Mapping[type, Handler[Any]],
                 after_step: tuple[Callable[[UnitOfWork], None], ...] = ()) -> None:
        self.app = app
        self.handlers = handlers
        self.after_step = after_step
        """What every applied step does last, inside the step: its refusal undoes the whole step."""

    def process(self, source: Source) -> list[Outcome[Any]]:
        """Applies the source's batch and commits it with its position; on a conflict reads it again."""
        for _ in range(RETRIES):
            batch = source.read()
            if batch is None:
                return []
            try:
                return self._apply_and_commit(batch)
            except IntegrityError:
                continue  # another process moved the position or wrote the same aggregates first
            except UnstorableBatch:
                return [outcome for single in source.one_by_one(batch) for outcome in self.process(single)]
        raise KeptConflicting(f"{type(source).__name__} kept conflicting with other processes; run it again")

    def apply(self, uow: UnitOfWork, message: Any) -> Outcome[Any]:
        """One message as one step of the unit of work: applied, refused or (after MESSAGE_ATTEMPTS tries) parked."""
        handler = self.handlers[type(message)]
        attempt = 0
        while True:
            attempt += 1
            try:
                detail = handler.apply(uow, message)
                for follow_up in self.after_step:
                    follow_up(uow)
            except DomainError as error:
                uow.rollback_step()
                handler.refuse(uow, message, error)
                uow.end_step()
                return Outcome(message, accepted=False, detail=str(error))
            except Exception as error:
                if is_infrastructure(error):
                    raise
                uow.rollback_step(touched=True)  # it may have failed half-way through applying an event
                if attempt < MESSAGE_ATTEMPTS:
                    continue
                fault = Fault(error, attempts=attempt)
                handler.park(uow, message, fault)
                uow.end_step()
                return Outcome(message, accepted=False, detail=fault.reason, parked=True)
            uow.end_step()
            return Outcome(message, accepted=True, detail=detail)

    def _apply_and_commit(self, batch: Batch) -> list[Outcome[Any]]:
        uow = UnitOfWork(self.app)
        if isinstance(batch.messages, list):
            self._prefetch(uow, batch.messages)
        outcomes = [self.apply(uow, message) for message in batch.messages]
        try:
            uow.commit(batch.position)
        except Exception as error:
            if isinstance(error, IntegrityError) or is_infrastructure(error):
                raise
            if len(outcomes) != 1:
                raise UnstorableBatch(str(error)) from error
            return [self._park_in_place(outcomes[0].step, Fault(error, attempts=1), batch.position)]
        return outcomes

    def _park_in_place(self, message: Any, fault: Fault, position: Position | None) -> Outcome[Any]:
        """A single message whose events cannot be stored (an event that cannot be encoded) is parked
        instead, with the position, so the source moves past it."""
        parking = UnitOfWork(self.app)
        self.handlers[type(message)].park(parking, message, fault)
        parking.commit(position)
        return Outcome(message, accepted=False, detail=fault.reason, parked=True)

    def _prefetch(self, uow: UnitOfWork, messages: list[Any]) -> None:
        by_kind: dict[type, list[Any]] = {}
        for message in messages:
            by_kind.setdefault(type(message), []).append(message)
        for kind, same in by_kind.items():
            prefetch = self.handlers[kind].prefetch
            if prefetch is not None:
                prefetch(uow, same)
