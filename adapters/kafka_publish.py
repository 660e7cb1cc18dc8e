"""An asynchronous producer, for `serve`'s requests at scale: faststream's KafkaBroker, through the publishers the
AsyncAPI document is generated from (`adapters/asyncapi.py`).

A record is what `loopline publish` appends (`KafkaPublisher`): the message's topic, the tenant as key (each tenant
keeps its order) and the same value bytes; faststream's headers ride along (`correlation_id` is the message's id).
Appending is all it does: the workers still apply each record exactly once by the positions they store with its
effects, whichever producer wrote it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable

from loopline.adapters.asyncapi import loopline_broker
from loopline.adapters.embedded_log import AppendReport
from loopline.adapters.kafka_log import Topics, record_value
from loopline.processors.messages import Message

JSON = {"content-type": "application/json"}
"""The value is the envelope already encoded, which faststream would otherwise label with no content type."""


class FaststreamPublisher:
    """Appends validated messages to their topics from async code; `start` connects, `close` disconnects."""

    def __init__(self, bootstrap: str, topics: Topics, timeout: float) -> None:
        # Every replica acknowledges, as for `loopline publish`; a request waits `timeout` seconds for the cluster.
        self._broker, self._publishers = loopline_broker(
            topics, bootstrap, acks="all", linger_ms=5, request_timeout_ms=int(timeout * 1000)
        )

    async def start(self) -> None:
        await self._broker.start()

    async def append(self, messages: Iterable[Message], source: str) -> AppendReport:
        """Sends every message, then waits until the broker took them all. Duplicates are not known here: the
        workers acknowledge and ignore a repeated id."""
        sent = [
            await self._publishers[message.kind].publish(
                record_value(message), key=message.tenant.encode(), headers=JSON, correlation_id=message.ref,
                no_confirm=True,
            )
            for message in messages
        ]
        await asyncio.gather(*sent)
        return AppendReport(appended=len(sent))

    async def close(self) -> None:
        await self._broker.stop()
