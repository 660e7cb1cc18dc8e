"""The Kafka log: topic names, topic creation and the producer `publish` uses (kafka-python, synchronous)."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from loopline.adapters.embedded_log import AppendReport
from loopline.domain.timeutil import format_time
from loopline.processors.messages import Message


@dataclass(frozen=True)
class Topics:
    prefix: str = ""

    @property
    def commands(self) -> str:
        return f"{self.prefix}loopline.commands"

    @property
    def signals(self) -> str:
        return f"{self.prefix}loopline.signals"

    @property
    def events(self) -> str:
        return f"{self.prefix}loopline.events"

    def for_kind(self, kind: str) -> str:
        return self.commands if kind == "command" else self.signals

    def dlq(self, topic: str) -> str:
        return f"{topic}.dlq"

    def all(self) -> list[str]:
        inputs = [self.commands, self.signals]
        return [*inputs, self.events, *map(self.dlq, inputs)]


def ensure_topics(bootstrap: str, topics: Topics, partitions: int, timeout: float) -> None:
    """Creates Loopline's topics if they are missing; existing topics are left as they are. Finding
    the cluster waits at most `timeout` seconds (kafka-python's own default is 30)."""
    from kafka import KafkaAdminClient
    from kafka.admin import NewTopic
    from kafka.errors import TopicAlreadyExistsError

    admin = KafkaAdminClient(
        bootstrap_servers=bootstrap, client_id="loopline-admin", bootstrap_timeout_ms=int(timeout * 1000)
    )
    try:
        existing = set(admin.list_topics())
        missing = [NewTopic(name, partitions, 1) for name in topics.all() if name not in existing]
        if missing:
            try:
                admin.create_topics(missing)
            except TopicAlreadyExistsError:
                pass
    finally:
        admin.close()


def envelope(message: Message) -> dict[str, Any]:
    return {"kind": message.kind, "id": message.ref, "type": message.type, "tenant": message.tenant,
            "at": format_time(message.at), "data": message.data}


def record_value(message: Message) -> bytes:
    """A message's record value on its topic: its envelope as JSON, keys sorted, whichever producer sends it."""
    return json.dumps(envelope(message), sort_keys=True).encode()


def producer(bootstrap: str, **config: Any) -> Any:
    from kafka import KafkaProducer

    return KafkaProducer(bootstrap_servers=bootstrap, acks="all", linger_ms=5, retries=10, client_id="loopline", **config)


class KafkaPublisher:
    """Appends validated messages to their topic, keyed by tenant so each tenant keeps its order. It connects on its
    first append: a process that never appends through it (serve) opens no connection and no sender thread."""

    def __init__(self, bootstrap: str, topics: Topics, timeout: float) -> None:
        self.bootstrap, self.topics = bootstrap, topics
        # A command line waits `timeout` seconds for the cluster, not kafka-python's 30 s and 60 s.
        self.wait_ms = int(timeout * 1000)
        self._producer: Any = None

    def append(self, messages: Iterable[Message], source: str) -> AppendReport:
        """Duplicates are not known here: the workers acknowledge and ignore a repeated id."""
        if self._producer is None:
            self._producer = producer(self.bootstrap, bootstrap_timeout_ms=self.wait_ms, max_block_ms=self.wait_ms)
        count = 0
        for message in messages:
            self._producer.send(
                self.topics.for_kind(message.kind), key=message.tenant.encode(), value=record_value(message)
            )
            count += 1
        self._producer.flush()
        return AppendReport(appended=count)

    def close(self) -> None:
        if self._producer is not None:
            self._producer.close()


def end_offsets(bootstrap: str, topic_names: list[str], timeout: float) -> dict[tuple[str, int], int]:
    """The offset after the last message of every partition of the given topics, waiting at most
    about `timeout` seconds for each step."""
    from kafka import KafkaConsumer, TopicPartition

    wait_ms = int(timeout * 1000)
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, client_id="loopline-status", bootstrap_timeout_ms=wait_ms,
                             request_timeout_ms=max(wait_ms, 1000))
    try:
        partitions = [
            TopicPartition(topic, partition)
            for topic in topic_names
            for partition in sorted(consumer.partitions_for_topic(topic) or ())
        ]
        return {(tp.topic, tp.partition): offset for tp, offset in consumer.end_offsets(partitions).items()}
    finally:
        consumer.close()
