"""The outbox relay: publishes every stored domain event to `loopline.events` in notification order,
and every input a Kafka worker rejected or parked to `<topic>.dlq`.

At-least-once into Kafka: the relay's position is recorded after the producer flushed, so a
crash in between republishes a tail that consumers dedupe by `notification_id` (events) or the
`loopline-key` header (dead letters). Dead letters are sent from here, after the batch that
rejected them committed, so a retried batch never sends one twice.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from eventsourcing.persistence import Tracking
from eventsourcing.utils import get_topic

from loopline.adapters.kafka_log import Topics, producer
from loopline.domain.inbound import RejectedInput
from loopline.domain.parked import ParkedMessage
from loopline.processors.application import Loopline
from loopline.processors.followers.parked import short_id
from loopline.processors.handlers.rejects import raw_bytes

log = logging.getLogger("loopline.relay")
SYSTEM_KEY = "_system"
# The relay's producer gives up on a record after its delivery_timeout_ms (kafka-python's default, 120 s,
# held the leader's projecting and delivering up for minutes after a broker restart); flushing waits a
# little longer.
PRODUCER = {"request_timeout_ms": 10_000, "delivery_timeout_ms": 30_000, "max_block_ms": 10_000}
FLUSH_TIMEOUT = 35.0
CLOSE_TIMEOUT = 5.0
REJECTED_TOPIC = get_topic(RejectedInput.Recorded)
PARKED_TOPIC = get_topic(ParkedMessage.Parked)


class OutboxRelay:
    name = "relay"

    def __init__(self, app: Loopline, bootstrap: str, topics: Topics, batch_size: int = 1000) -> None:
        self.app = app
        self.topics = topics
        self.batch_size = batch_size
        self.bootstrap = bootstrap
        self._producer = producer(bootstrap, **PRODUCER)

    def run_once(self) -> int:
        notifications = self.app.process_recorder.select_notifications(
            start=self.app.position(self.name) + 1, limit=self.batch_size
        )
        if notifications:
            if not self._sent(notifications):
                return 0  # the position stays put: the next pass sends the batch again
            self.app.process_recorder.insert_tracking(Tracking(self.name, notifications[-1].id))
        return len(notifications)

    def _sent(self, notifications: list[Any]) -> bool:
        """Whether the broker took every record, within a bounded wait; if not (it restarted, or timed
        out), a new producer sends the batch again on the next pass, as a failed producer may not
        recover on its own."""
        from kafka.errors import KafkaError

        sent = []
        try:
            for notification in notifications:
                sent.append(self._producer.send(
                    self.topics.events, key=self._tenant_of(notification).encode(), value=_value(notification)
                ))
                if notification.topic == REJECTED_TOPIC:
                    self._dead_letter(notification)
                elif notification.topic == PARKED_TOPIC:
                    self._dead_letter_parked(notification)
            self._producer.flush(timeout=FLUSH_TIMEOUT)
            for future in sent:
                future.get(timeout=0)
        except KafkaError as error:
            log.warning("the broker did not take %s event(s) (%s): sending them again", len(notifications), error)
            self._producer.close(timeout=5)
            self._producer = producer(self.bootstrap, **PRODUCER)
            return False
        return True

    def _dead_letter(self, notification: Any) -> None:
        """Sends a Kafka worker's reject, with its original bytes (a secret it names masked) and key, to its topic's
        dead-letter topic."""
        reject = self.app.mapper.to_domain_event(notification)
        assert isinstance(reject, RejectedInput.Recorded)
        if reject.source not in (self.topics.commands, self.topics.signals):
            return  # rejected by `loopline publish` from a file: reported there, never on Kafka
        self._producer.send(
            self.topics.dlq(reject.source), key=reject.key.encode() if reject.key is not None else None,
            value=raw_bytes(reject), headers=[
                ("loopline-reason", reject.reason.encode()),
                ("loopline-source", f"{reject.source}:{reject.position}".encode()),
                ("loopline-key", str(reject.originator_id).encode()),
            ],
        )

    def _dead_letter_parked(self, notification: Any) -> None:
        """Sends a message a worker parked (its handler kept failing) to its topic's dead-letter topic,
        as its envelope, with the error and where it came from."""
        parked = self.app.mapper.to_domain_event(notification)
        assert isinstance(parked, ParkedMessage.Parked)
        if parked.source not in (self.topics.commands, self.topics.signals):
            return  # parked from the embedded log: `loopline parked list` shows it
        envelope = {"kind": parked.kind, "id": parked.ref, "type": parked.type, "tenant": parked.tenant,
                    "at": parked.at, "data": parked.data}
        self._producer.send(
            self.topics.dlq(parked.source), key=parked.tenant.encode(), value=json.dumps(envelope).encode(), headers=[
                ("loopline-reason", f"parked: {parked.error_type}: {parked.error}".encode()),
                ("loopline-source", f"{parked.source}:{parked.position}".encode()),
                ("loopline-key", str(parked.originator_id).encode()),
                ("loopline-parked", short_id(parked.originator_id).encode()),
            ],
        )

    @staticmethod
    def _tenant_of(notification: Any) -> str:
        """Every tenant's event names its tenant; system events (timers) go under one key."""
        return json.loads(notification.state).get("tenant") or SYSTEM_KEY

    def close(self) -> None:
        # Bounded: records not flushed are not lost (the position is recorded only after a flush), and a close
        # waiting on a broker that went away held a leader's shutdown, and the relay's restart, for ever.
        self._producer.close(timeout=CLOSE_TIMEOUT)


def _value(notification: Any) -> bytes:
    """The event as JSON, its stored state (already JSON) embedded as it is rather than parsed and re-encoded."""
    envelope = json.dumps({
        "notification_id": notification.id,
        "topic": notification.topic,
        "originator_id": str(notification.originator_id),
        "originator_version": notification.originator_version,
    })
    return envelope[:-1].encode() + b', "state": ' + bytes(notification.state) + b"}"
