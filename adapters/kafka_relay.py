"""The outbox relay: publishes every stored domain event to `loopline.events` in notification order.

At-least-once into Kafka: the relay's position is recorded after the producer flushed, so a
crash in between republishes a tail that consumers dedupe by `notification_id`.
"""

from __future__ import annotations

import json
from typing import Any

from eventsourcing.persistence import Tracking

from loopline.adapters.kafka_log import Topics, producer
from loopline.processors.application import Loopline

SYSTEM_KEY = "_system"


class OutboxRelay:
    name = "relay"

    def __init__(self, app: Loopline, bootstrap: str, topics: Topics, batch_size: int = 1000) -> None:
        self.app = app
        self.topics = topics
        self.batch_size = batch_size
        self._producer = producer(bootstrap)

    def run_once(self) -> int:
        notifications = self.app.process_recorder.select_notifications(
            start=self.app.position(self.name) + 1, limit=self.batch_size
        )
        for notification in notifications:
            self._producer.send(self.topics.events, key=self._tenant_of(notification).encode(), value=_value(notification))
        if notifications:
            self._producer.flush()
            self.app.process_recorder.insert_tracking(Tracking(self.name, notifications[-1].id))
        return len(notifications)

    @staticmethod
    def _tenant_of(notification: Any) -> str:
        """Every tenant's event names its tenant; system events (timers) go under one key."""
        return json.loads(notification.state).get("tenant") or SYSTEM_KEY

    def close(self) -> None:
        self._producer.close()


def _value(notification: Any) -> bytes:
    """The event as JSON, its stored state (already JSON) embedded as it is rather than parsed and re-encoded."""
    envelope = json.dumps({
        "notification_id": notification.id,
        "topic": notification.topic,
        "originator_id": str(notification.originator_id),
        "originator_version": notification.originator_version,
    })
    return envelope[:-1].encode() + b', "state": ' + bytes(notification.state) + b"}"
