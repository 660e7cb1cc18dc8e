"""What an operator does with parked messages: list them, retry one (applied once), drop one.

A retry hands the stored message to the bus as one step (`Retry`), in one transaction with the mark
that it was retried, so two retries of the same message (in turn or at once) apply it once: the
loser's commit conflicts on the parked message, and it then finds it retried.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from uuid import UUID

from eventsourcing.persistence import IntegrityError
from eventsourcing.utils import get_topic

from loopline.domain import ids
from loopline.domain.parked import ParkedMessage
from loopline.processors.application import Loopline, UnitOfWork
from loopline.processors.bus import Batch, Bus
from loopline.processors.handlers.inbound import stored_message
from loopline.processors.messages import Inbound, Retry

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


@dataclass(frozen=True)
class RetrySource:
    """The parked message, read again after a conflict (another retry or drop may have closed it)."""

    app: Loopline
    retry_of: UUID
    by: str
    now: datetime

    def read(self) -> Batch:
        parked = _get(UnitOfWork(self.app), self.retry_of)
        parked.check_open()
        inbound = Inbound(ids.message_id(parked.tenant, parked.ref), stored_message(parked))
        return Batch([Retry(self.retry_of, inbound, self.by, self.now)])

    def one_by_one(self, batch: Batch) -> Iterator[RetrySource]:
        yield self


def retry(bus: Bus, parked_id: UUID, *, by: str, now: datetime) -> str:
    """Applies the parked message once and marks it retried; returns what it did (or why the domain refused it)."""
    [outcome] = bus.process(RetrySource(bus.app, parked_id, by, now))
    if outcome.parked:
        raise StillFailing(outcome.detail)
    return outcome.detail if outcome.accepted else f"refused by the domain: {outcome.detail}"


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
