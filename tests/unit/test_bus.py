"""The bus on in-memory persistence: a message refused, retried, parked, or raised when the storage failed."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timezone
from uuid import uuid4

import pytest
from eventsourcing.persistence import OperationalError

from loopline.domain.errors import DomainError
from loopline.domain.inbound import RejectedInput
from loopline.processors.application import Loopline, Position, UnitOfWork
from loopline.domain.safety_limits import MESSAGE_ATTEMPTS as ATTEMPTS
from loopline.processors.bus import Batch, Bus, Fault, Handler, Outcome

NOW = datetime(2026, 3, 13, tzinfo=timezone.utc)


@dataclass(eq=False)
class Flaky:
    """Records one aggregate, then fails `failures` times with `error` before succeeding."""

    error: Exception
    failures: int
    tried: int = 0
    parked: list[Fault] = field(default_factory=list)
    refused: list[DomainError] = field(default_factory=list)

    def apply(self, uow: UnitOfWork) -> str:
        self.tried += 1
        uow.add(RejectedInput.record(id=uuid4(), now=NOW, source="s", position=str(self.tried), raw="", encoding="utf-8",
                                     key=None, reason="test"))
        if self.tried <= self.failures:
            raise self.error
        return "done"

    def refuse(self, uow: UnitOfWork, error: DomainError) -> None:
        self.refused.append(error)

    def park(self, uow: UnitOfWork, fault: Fault) -> None:
        self.parked.append(fault)


def _app() -> Loopline:
    return Loopline(env={"PERSISTENCE_MODULE": "eventsourcing.popo"})


FLAKY: Handler[Flaky] = Handler(
    apply=lambda uow, flaky: flaky.apply(uow), refuse=lambda uow, flaky, error: flaky.refuse(uow, error),
    park=lambda uow, flaky, fault: flaky.park(uow, fault),
)


def apply_all(uow: UnitOfWork, *messages: Flaky) -> list[Outcome[Flaky]]:
    bus = Bus(uow.app, {Flaky: FLAKY})
    return [bus.apply(uow, message) for message in messages]


def _stored(app: Loopline) -> int:
    return app.process_recorder.max_notification_id() or 0


def test_a_step_failing_once_is_tried_again_and_keeps_only_the_successful_attempts_effects() -> None:
    app = _app()
    uow = UnitOfWork(app)
    step = Flaky(ValueError("transient"), failures=1)
    [outcome] = apply_all(uow, step)
    uow.commit()
    assert outcome.accepted and not outcome.parked and step.tried == 2
    assert _stored(app) == 1


def test_a_step_that_keeps_failing_is_parked_with_its_error_and_the_next_step_goes_on() -> None:
    app = _app()
    uow = UnitOfWork(app)
    poison, healthy = Flaky(OverflowError("date value out of range"), failures=99), Flaky(ValueError(), failures=0)
    outcomes = apply_all(uow, poison, healthy)
    uow.commit()
    assert [(o.accepted, o.parked) for o in outcomes] == [(False, True), (True, False)]
    assert poison.tried == ATTEMPTS and outcomes[0].detail == "OverflowError: date value out of range"
    [fault] = poison.parked
    assert fault.attempts == ATTEMPTS and "in apply" in fault.trace
    assert _stored(app) == 1  # none of the poison step's attempts left anything


def test_a_domain_refusal_is_refused_at_once_not_retried() -> None:
    step = Flaky(DomainError("no such task"), failures=99)
    [outcome] = apply_all(UnitOfWork(_app()), step)
    assert not outcome.accepted and not outcome.parked and step.tried == 1 and len(step.refused) == 1


def test_a_storage_failure_is_not_the_messages_fault_and_stops_the_batch() -> None:
    step = Flaky(OperationalError("connection lost"), failures=1)
    with pytest.raises(OperationalError):
        apply_all(UnitOfWork(_app()), step)
    assert step.parked == [] and step.tried == 1


@dataclass
class Script:
    """A source handing over prepared batches in turn, recording how often it was read and split."""

    batches: list[Batch | None]
    reads: int = 0
    singles: list[Script] = field(default_factory=list)

    def read(self) -> Batch | None:
        self.reads += 1
        return self.batches.pop(0) if self.batches else None

    def one_by_one(self, batch: Batch) -> list[Script]:
        self.singles = [Script([Batch([message])]) for message in batch.messages]
        return self.singles


def test_a_batch_whose_position_another_process_moved_is_read_again_not_applied_twice() -> None:
    app = _app()
    app.process_recorder.insert_tracking(Position("source", 1))  # another process committed this batch first
    stale = Flaky(ValueError(), failures=0)
    source = Script([Batch([stale], Position("source", 1, previous=0)), None])

    assert Bus(app, {Flaky: FLAKY}).process(source) == []
    assert source.reads == 2 and _stored(app) == 0


def test_a_batch_that_cannot_be_stored_is_applied_one_message_per_transaction_and_the_bad_one_parked() -> None:
    app = _app()
    good, bad = Flaky(ValueError(), failures=0), Unstorable(ValueError(), failures=0)
    source = Script([Batch([good, bad])])

    outcomes = Bus(app, {Flaky: FLAKY, Unstorable: FLAKY}).process(source)

    assert [(o.step, o.accepted, o.parked) for o in outcomes] == [(good, True, False), (bad, False, True)]
    assert len(source.singles) == 2 and [fault.error_type for fault in bad.parked] == ["TranscodingNotRegisteredError"]
    assert _stored(app) == 1  # the good message's effects; the bad one's could not be stored


@dataclass(eq=False)
class Unstorable(Flaky):
    """Records an event whose field no store can encode."""

    def apply(self, uow: UnitOfWork) -> str:
        self.tried += 1
        uow.add(RejectedInput.record(id=uuid4(), now=NOW, source="s", position="p", raw=object(),  # type: ignore[arg-type]
                                     encoding="utf-8", key=None, reason="test"))
        return "done"
