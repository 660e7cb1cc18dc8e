"""The one batch path: every input (command, signal, timer firing) is a step of a unit of work.

A step either leaves its effects in the unit of work or, when the domain refuses it, is undone
(`UnitOfWork.rollback_step`) and its refusal recorded in a step of its own; the batch goes on.
A step that fails with anything else is undone and tried again (`ATTEMPTS` in all, in case it was
transient), then parked with its error in a step of its own: one poison message never stops the
batch. Failures of the infrastructure (the database, the network) are not the message's fault and
propagate, so the batch is redone or the process stops, as before.
The embedded router, the Kafka edge and the tick all apply their batches through `apply_steps`.
"""

from __future__ import annotations

import sqlite3
import traceback
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar

from eventsourcing.persistence import PersistenceError

from loopline.domain.errors import DomainError
from loopline.processors.application import UnitOfWork

ATTEMPTS = 3
INFRASTRUCTURE_MODULES = ("psycopg", "sqlalchemy", "aiokafka", "kafka")


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


class Step(Protocol):
    def apply(self, uow: UnitOfWork) -> str | None:
        """Makes the step's changes; a DomainError refuses the step. Returns what was done, if anything."""
        ...

    def refuse(self, uow: UnitOfWork, error: DomainError) -> None:
        """Records why the step was refused, on aggregates as they were before the step."""
        ...

    def park(self, uow: UnitOfWork, fault: Fault) -> None:
        """Records that the step failed unexpectedly every time it was tried, so an operator can act."""
        ...


StepT = TypeVar("StepT", bound=Step)


class Notice(str):
    """A step's detail the sender is warned about although its message was accepted."""


class Unchanged(Notice):
    """A step's detail when its message was accepted but changed nothing although it asked for
    something other than what stands (a task.create of an existing task with another title): the
    sender is warned, since it is most often a mistake."""


@dataclass(frozen=True)
class Outcome(Generic[StepT]):
    step: StepT
    accepted: bool
    detail: str | None
    parked: bool = False

    @property
    def warning(self) -> str | None:
        return self.detail if isinstance(self.detail, Notice) else None


def apply_steps(uow: UnitOfWork, steps: Iterable[StepT]) -> list[Outcome[StepT]]:
    """Applies each step in turn; a refused or parked step is rolled back and recorded, and the next step goes on."""
    return [apply_step(uow, step) for step in steps]


def apply_step(uow: UnitOfWork, step: StepT) -> Outcome[StepT]:
    attempt = 0
    while True:
        attempt += 1
        try:
            detail = step.apply(uow)
        except DomainError as error:
            uow.rollback_step()
            step.refuse(uow, error)
            uow.end_step()
            return Outcome(step, accepted=False, detail=str(error))
        except Exception as error:
            if is_infrastructure(error):
                raise
            uow.rollback_step(touched=True)  # it may have failed half-way through applying an event
            if attempt < ATTEMPTS:
                continue
            fault = Fault(error, attempts=attempt)
            step.park(uow, fault)
            uow.end_step()
            return Outcome(step, accepted=False, detail=fault.reason, parked=True)
        uow.end_step()
        return Outcome(step, accepted=True, detail=detail)
