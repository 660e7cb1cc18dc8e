"""`loopline publish`'s Kafka producer connects on its first append, so a process that never appends through it
(serve, which appends through faststream) opens no connection and starts no sender thread."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import pytest

from loopline.adapters import kafka_log
from loopline.adapters.kafka_log import KafkaPublisher, Topics
from loopline.adapters.messages import parse_message
from tests.conftest import command


@dataclass
class RecordingProducer:
    bootstrap: str
    config: dict[str, Any]
    sent: list[tuple[str, bytes]] = field(default_factory=list)
    closed: bool = False

    def send(self, topic: str, key: bytes, value: bytes) -> None:
        self.sent.append((topic, key))

    def flush(self) -> None:
        return None

    def close(self) -> None:
        self.closed = True


@pytest.fixture
def made(monkeypatch: pytest.MonkeyPatch) -> list[RecordingProducer]:
    producers: list[RecordingProducer] = []

    def producer(bootstrap: str, **config: Any) -> RecordingProducer:
        producers.append(RecordingProducer(bootstrap, config))
        return producers[-1]

    monkeypatch.setattr(kafka_log, "producer", producer)
    return producers


def test_constructing_and_closing_the_publisher_opens_no_connection(made: list[RecordingProducer]) -> None:
    publisher = KafkaPublisher("broker:9092", Topics(), timeout=3)
    publisher.close()
    assert made == []


def test_the_first_append_connects_once_with_the_command_lines_timeout(made: list[RecordingProducer]) -> None:
    publisher = KafkaPublisher("broker:9092", Topics("p."), timeout=3)
    message = parse_message(json.dumps(command("c1", "task.create", "2026-03-02T09:00:00Z", "acme", task_id="t1",
                                               title="Send the quote")))
    assert publisher.append([message], "publish").appended == 1
    publisher.append([message], "publish")
    publisher.close()
    [connected] = made
    assert connected.config == {"bootstrap_timeout_ms": 3000, "max_block_ms": 3000} and connected.closed
    assert connected.sent == [("p.loopline.commands", b"acme")] * 2
