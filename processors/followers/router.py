"""Follows the embedded log (InboundMessage events in the event store) and hands its batches to the bus."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from eventsourcing.utils import get_topic

from loopline.domain.inbound import InboundMessage
from loopline.processors.application import Loopline, Position
from loopline.processors.bus import Batch, Bus
from loopline.processors.handlers.inbound import MessageOutcome, stored_message
from loopline.processors.messages import Inbound

INBOUND_TOPIC = get_topic(InboundMessage.Received)


@dataclass(frozen=True)
class LogBatches:
    """The next messages of the embedded log after the router's stored position, read again after a conflict."""

    app: Loopline
    name: str
    limit: int

    def read(self) -> Batch | None:
        previous = self.app.position(self.name)
        notifications = self.app.process_recorder.select_notifications(
            start=previous + 1, limit=self.limit, topics=[INBOUND_TOPIC]
        )
        if not notifications:
            return None
        messages = []
        for notification in notifications:
            received = self.app.mapper.to_domain_event(notification)
            assert isinstance(received, InboundMessage.Received)
            messages.append(Inbound(received.originator_id, stored_message(received), position=str(notification.id)))
        return Batch(messages, Position(self.name, notifications[-1].id, previous=previous))

    def one_by_one(self, batch: Batch) -> Iterator[LogBatches]:
        for _ in batch.messages:
            yield LogBatches(self.app, self.name, 1)


class Router:
    """Hands the embedded log to the bus in batches.

    Each batch is one transaction: every event it caused, each reject, and the router's position,
    moved by compare-and-set from the position the batch was read at. A crash before the commit
    leaves the position where it was, so the batch is simply redone; a process that committed the
    same batch first makes this commit fail, and the batch after it is read instead.
    """

    name = "router"

    def __init__(self, bus: Bus, batch_size: int = 500) -> None:
        self.bus = bus
        self.batch_size = batch_size

    def run_once(self) -> list[MessageOutcome]:
        return self.bus.process(LogBatches(self.bus.app, self.name, self.batch_size))
