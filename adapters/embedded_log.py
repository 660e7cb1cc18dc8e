"""The embedded log: inbound messages appended to the event store, whose notification log is the log."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

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


class EmbeddedLog:
    def __init__(self, app: Loopline) -> None:
        self.app = app

    def append(self, messages: Iterable[Message], source: str) -> AppendReport:
        """Appends messages in chunks; a (tenant, id) seen before is acknowledged and ignored."""
        report = AppendReport()
        chunk: list[Message] = []
        for message in messages:
            chunk.append(message)
            if len(chunk) == CHUNK:
                self._append_chunk(chunk, source, report)
                chunk = []
        if chunk:
            self._append_chunk(chunk, source, report)
        return report

    def _append_chunk(self, chunk: list[Message], source: str, report: AppendReport) -> None:
        uow = UnitOfWork(self.app)
        appended = duplicates = 0
        for message in chunk:
            message_id = ids.message_id(message.tenant, message.ref)
            if uow.get(message_id, InboundMessage) is not None:  # stored, or earlier in this chunk
                duplicates += 1
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
                return
            for message in chunk:
                self._append_chunk([message], source, report)
            return
        report.appended += appended
        report.duplicates += duplicates
