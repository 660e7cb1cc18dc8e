"""The one batch path: every input (command, signal, timer firing) is a step of a unit of work.

A step either leaves its effects in the unit of work or, when the domain refuses it, is undone
(`UnitOfWork.rollback_step`) and its refusal recorded in a step of its own; the batch goes on.
The embedded router, the Kafka edge and the tick all apply their batches through `apply_steps`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar

from loopline.domain.errors import DomainError
from loopline.processors.application import UnitOfWork


class Step(Protocol):
    def apply(self, uow: UnitOfWork) -> str | None:
        """Makes the step's changes; a DomainError refuses the step. Returns what was done, if anything."""
        ...

    def refuse(self, uow: UnitOfWork, error: DomainError) -> None:
        """Records why the step was refused, on aggregates as they were before the step."""
        ...


StepT = TypeVar("StepT", bound=Step)


@dataclass(frozen=True)
class Outcome(Generic[StepT]):
    step: StepT
    accepted: bool
    detail: str | None


def apply_steps(uow: UnitOfWork, steps: Iterable[StepT]) -> list[Outcome[StepT]]:
    """Applies each step in turn; a refused step is rolled back and recorded, and the next step goes on."""
    outcomes = []
    for step in steps:
        try:
            detail = step.apply(uow)
        except DomainError as error:
            uow.rollback_step()
            step.refuse(uow, error)
            uow.end_step()
            outcomes.append(Outcome(step, accepted=False, detail=str(error)))
            continue
        uow.end_step()
        outcomes.append(Outcome(step, accepted=True, detail=detail))
    return outcomes
