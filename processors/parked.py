"""What an operator does with parked messages: list them, retry one (applied once), drop one.

A retry applies the stored message as its own step, in one transaction with the mark that it was
retried, so two retries of the same message (in turn or at once) apply it once: the loser's
commit conflicts on the parked message, and it then finds it retried.
"""

from __future__ import annotations

from datetime import datetime
from uuid import UUID

from eventsourcing.persistence import IntegrityError
from eventsourcing.utils import get_topic

from loopline.domain import ids
from loopline.domain.errors import DomainError
from loopline.domain.parked import ParkedMessage
from loopline.processors.application import Loopline, UnitOfWork
from loopline.processors.router import MessageStep, stored_message
from loopline.processors.steps import Fault, is_infrastructure

RETRIES = 10
TOPICS = [get_topic(cls) for cls in (
    ParkedMessage.Parked, ParkedMessage.RetryFailed, ParkedMessage.Retried, ParkedMessage.Dropped
)]


class StillFailing(Exception):
    """The retried message failed again; it stays parked with the new error."""


def short_id(parked_id: UUID) -> str:
    """The id an operator types: `m-` and the first 8 hex digits of the parked message's id."""
    return f"m-{parked_id.hex[:8]}"


def parked_messages(app: Loopline) -> list[ParkedMessage]:
    """Every parked message with its current state, oldest first (one read of their events)."""
    found: dict[UUID, ParkedMessage] = {}
    start = 1
    while True:
        batch = app.process_recorder.select_notifications(start=start, limit=5000, topics=TOPICS)
        for notification in batch:
            event = app.mapper.to_domain_event(notification)
            found[event.originator_id] = event.mutate(found.get(event.originator_id))
        if len(batch) < 5000:
            return list(found.values())
        start = batch[-1].id + 1


def retry(app: Loopline, parked_id: UUID, *, by: str, now: datetime) -> str:
    """Applies the parked message once and marks it retried; returns what it did (or why the domain refused it)."""
    for _ in range(RETRIES):
        uow = UnitOfWork(app)
        parked = uow.get(parked_id, ParkedMessage)
        assert parked is not None, f"no parked message {parked_id}"
        parked.check_open()
        uow.end_step()
        step = MessageStep(ids.message_id(parked.tenant, parked.ref), stored_message(parked))
        try:
            outcome = step.apply(uow)
        except DomainError as error:
            uow.rollback_step()
            step.refuse(uow, error)
            outcome = f"refused by the domain: {error}"
        except Exception as error:
            if is_infrastructure(error):
                raise
            uow.rollback_step(touched=True)
            fault = Fault(error, attempts=1)
            _get(uow, parked_id).retry_failed(
                error_type=fault.error_type, error=fault.message, trace=fault.trace, by=by, now=now
            )
            if _committed(uow):
                raise StillFailing(fault.reason) from error
            continue
        uow.end_step()
        _get(uow, parked_id).retried(outcome=outcome, by=by, now=now)
        if _committed(uow):
            return outcome
    raise RuntimeError("the retry kept conflicting with other writers; run it again")


def drop(app: Loopline, parked_id: UUID, *, by: str, now: datetime) -> None:
    for _ in range(RETRIES):
        uow = UnitOfWork(app)
        _get(uow, parked_id).drop(by=by, now=now)
        if _committed(uow):
            return
    raise RuntimeError("the drop kept conflicting with other writers; run it again")


def _get(uow: UnitOfWork, parked_id: UUID) -> ParkedMessage:
    parked = uow.get(parked_id, ParkedMessage)
    assert parked is not None, f"no parked message {parked_id}"
    return parked


def _committed(uow: UnitOfWork) -> bool:
    try:
        uow.commit()
    except IntegrityError:
        return False  # another retry, drop or writer got there first: look again
    return True
