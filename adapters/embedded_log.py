"""The embedded log: inbound messages appended to the event store, whose notification log is the log."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from eventsourcing.persistence import IntegrityError

from loopline.domain import ids
from loopline.domain.inbound import InboundMessage
from loopline.processors.application import Loopline, UnitOfWork
from loopline.processors.messages import Message

CHUNK = 500


@dataclass
class AppendReport:
    appended: int = 0
    duplicates: int = 0
    repeats: list[int] = field(default_factory=list)
    """Positions (in the order given) of the repeats: messages whose id was received before, ignored."""
    changed_repeats: list[int] = field(default_factory=list)
    """Positions (in the order given) of repeats whose content differs from the message first received
    with their id: ignored like every repeat, but likely a mistake the sender should hear of."""


class EmbeddedLog:
    def __init__(self, app: Loopline) -> None:
        self.app = app

    def append(self, messages: Iterable[Message], source: str) -> AppendReport:
        """Appends messages in chunks; a (tenant, id) seen before is acknowledged and ignored."""
        report = AppendReport()
        chunk: list[tuple[int, Message]] = []
        for position, message in enumerate(messages):
            chunk.append((position, message))
            if len(chunk) == CHUNK:
                self._append_chunk(chunk, source, report)
                chunk = []
        if chunk:
            self._append_chunk(chunk, source, report)
        return report

    def _append_chunk(self, chunk: list[tuple[int, Message]], source: str, report: AppendReport) -> None:
        uow = UnitOfWork(self.app)
        appended = duplicates = 0
        changed: list[int] = []
        repeated: list[int] = []
        for position, message in chunk:
            message_id = ids.message_id(message.tenant, message.ref)
            first = uow.get(message_id, InboundMessage)  # stored, or earlier in this chunk
            if first is not None:
                duplicates += 1
                repeated.append(position)
                if not _same_content(first, message):
                    changed.append(position)
                continue
            uow.add(
                InboundMessage.receive(
                    id=message_id, at=message.at, kind=message.kind, ref=message.ref, type=message.type,
                    tenant=message.tenant, data=message.data, source=source,
                )
            )
            appended += 1
        try:
            uow.commit()
        except IntegrityError:  # a concurrent publisher appended one of these meanwhile
            if len(chunk) == 1:
                report.duplicates += 1
                report.repeats.append(chunk[0][0])
                return
            for item in chunk:
                self._append_chunk([item], source, report)
            return
        report.appended += appended
        report.duplicates += duplicates
        report.repeats += repeated
        report.changed_repeats += changed


def _same_content(first: InboundMessage, repeat: Message) -> bool:
    return (first.kind, first.type, first.data, first.created_on) == (repeat.kind, repeat.type, repeat.data, repeat.at)
