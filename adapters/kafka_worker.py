"""Consumes `loopline.commands` and `loopline.signals` with exactly-once effects.

Each fetched batch of one partition is applied in one transaction together with the
partition's position (`Tracking("kafka:<topic>:<partition>", offset + 1)`). A message at or
below the stored position is skipped, and on every (re)assignment the consumer seeks to the
stored position, so Kafka's own committed offsets are only a hint; the position moves by
compare-and-set, so two workers that both hold a partition during a rebalance cannot both apply
a batch. Malformed input is recorded in the batch's transaction (`RejectedInput`); the leader's
relay sends it to `<topic>.dlq` once it is committed (adapters/kafka_relay.py).
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from eventsourcing.persistence import IntegrityError, Tracking

from loopline.adapters.kafka_log import Topics
from loopline.adapters.messages import InvalidMessage, parse_message
from loopline.processors.application import Loopline, Position, UnitOfWork
from loopline.processors.rejects import reject_input
from loopline.processors.router import MessageOutcome, UnstorableBatch, commit_batch, fresh_steps, prefetch_for
from loopline.processors.steps import apply_steps

log = logging.getLogger("loopline.kafka")
RETRIES = 10


class PartitionPositions:
    """Where each partition's processing stands, recorded as eventsourcing tracking.

    A topic that was deleted and recreated (or a broker that lost its log) starts again at
    offset 0 while the stored position is higher; the partition then starts a new epoch with
    its own position rather than skip the new messages.
    """

    def __init__(self, app: Loopline) -> None:
        self.app = app
        self._names: dict[tuple[str, int], str] = {}

    def name(self, topic: str, partition: int) -> str:
        if (topic, partition) not in self._names:
            epoch = self.app.position(f"kafka-epoch:{topic}:{partition}") or 1
            self._names[(topic, partition)] = f"kafka:{topic}:{partition}" + (f"#{epoch}" if epoch > 1 else "")
        return self._names[(topic, partition)]

    def resume_at(self, topic: str, partition: int, end_offset: int) -> int:
        """The offset to read next; starts a new epoch when the log ends before the stored position."""
        self._names.pop((topic, partition), None)
        stored = self.app.position(self.name(topic, partition))
        if stored <= end_offset:
            return stored
        epoch_name = f"kafka-epoch:{topic}:{partition}"
        epoch = (self.app.position(epoch_name) or 1) + 1
        log.warning("%s[%s] ends at %s before the processed position %s: the log was recreated; epoch %s starts at 0",
                    topic, partition, end_offset, stored, epoch)
        try:
            self.app.process_recorder.insert_tracking(Tracking(epoch_name, epoch))
        except IntegrityError:
            pass  # another worker started the epoch first
        self._names.pop((topic, partition), None)
        return self.app.position(self.name(topic, partition))


@dataclass
class BatchReport:
    applied: list[MessageOutcome] = field(default_factory=list)
    duplicates: int = 0
    dead_lettered: int = 0
    skipped: int = 0


class PartitionBatchApplier:
    """Applies one partition's records; synchronous, so it can run in a worker thread."""

    def __init__(self, app: Loopline, topics: Topics) -> None:
        self.app = app
        self.topics = topics
        self.positions = PartitionPositions(app)

    def apply(self, topic: str, partition: int, records: list[Any]) -> BatchReport:
        for _ in range(RETRIES):
            try:
                return self._apply_once(topic, partition, records)
            except IntegrityError:
                continue  # another worker advanced this partition or touched the same aggregate: redo
            except UnstorableBatch:
                if len(records) == 1:
                    raise
                return self._apply_one_by_one(topic, partition, records)
        raise RuntimeError(f"{topic}[{partition}] kept conflicting; the batch will be redelivered")

    def _apply_one_by_one(self, topic: str, partition: int, records: list[Any]) -> BatchReport:
        """One message's events could not be stored: each record in a transaction of its own, so that one is parked."""
        report = BatchReport()
        for record in records:
            part = self.apply(topic, partition, [record])
            report.applied += part.applied
            report.duplicates += part.duplicates
            report.dead_lettered += part.dead_lettered
            report.skipped += part.skipped
        return report

    def _apply_once(self, topic: str, partition: int, records: list[Any]) -> BatchReport:
        name = self.positions.name(topic, partition)
        stored = self.app.position(name)
        report = BatchReport()
        fresh = [record for record in records if record.offset + 1 > stored]
        report.skipped = len(records) - len(fresh)
        if not fresh:
            return report
        uow = UnitOfWork(self.app)
        expected_kind = "command" if topic == self.topics.commands else "signal"
        parsed = []
        for record in fresh:
            try:
                message = parse_message(record.value)
                if message.kind != expected_kind:
                    raise InvalidMessage(f"kind: a {message.kind} on {topic}; send it to {self.topics.for_kind(message.kind)}")
            except InvalidMessage as error:
                log.warning("dead-lettering %s[%s]@%s: %s", topic, partition, record.offset, error)
                reject_input(
                    uow, source=topic, position=f"{partition}:{record.offset}", raw=record.value or b"",
                    reason=str(error), key=record.key, now=_record_time(record),
                )
                report.dead_lettered += 1
                continue
            parsed.append((message, f"{topic}:{partition}:{record.offset}"))
        uow.end_step()  # the dead letters are a step of their own: a refused message must not undo them
        prefetch_for(uow, [message for message, _ in parsed])
        steps, report.duplicates = fresh_steps(uow, parsed)
        report.applied = commit_batch(
            uow, Position(name, fresh[-1].offset + 1, previous=stored), apply_steps(uow, steps), single=len(fresh) == 1
        )
        return report


def _record_time(record: Any) -> datetime:
    """When the broker took the record (its timestamp, in ms): a rejected record has no trusted `at`.
    A record without a usable timestamp (none, or out of range) is dated at the epoch rather than lost."""
    try:
        return datetime.fromtimestamp(record.timestamp / 1000, tz=timezone.utc)
    except (TypeError, ValueError, OverflowError, OSError):
        return datetime.fromtimestamp(0, tz=timezone.utc)


class KafkaWorker:
    def __init__(self, app: Loopline, bootstrap: str, topics: Topics, group_id: str = "loopline-workers") -> None:
        self.app = app
        self.bootstrap = bootstrap
        self.topics = topics
        self.group_id = group_id
        self.applier = PartitionBatchApplier(app, topics)

    async def run(self, stop: asyncio.Event, on_batch: Any = None) -> None:
        from aiokafka import AIOKafkaConsumer, ConsumerRebalanceListener
        from aiokafka.errors import CommitFailedError, IllegalStateError

        worker = self

        class SeekToStoredPositions(ConsumerRebalanceListener):
            async def on_partitions_revoked(self, revoked: Any) -> None:
                return None

            async def on_partitions_assigned(self, assigned: Any) -> None:
                ends = await consumer.end_offsets(list(assigned)) if assigned else {}
                for tp in assigned:
                    resume = await asyncio.to_thread(
                        worker.applier.positions.resume_at, tp.topic, tp.partition, ends[tp]
                    )
                    consumer.seek(tp, resume)

        consumer = AIOKafkaConsumer(
            bootstrap_servers=self.bootstrap, group_id=f"{self.topics.prefix}{self.group_id}",
            enable_auto_commit=False, auto_offset_reset="earliest", max_poll_records=500,
        )
        consumer.subscribe([self.topics.commands, self.topics.signals], listener=SeekToStoredPositions())
        await consumer.start()
        try:
            while not stop.is_set():
                batches = await consumer.getmany(timeout_ms=200, max_records=1000)
                for tp, records in batches.items():
                    report = await asyncio.to_thread(self.applier.apply, tp.topic, tp.partition, records)
                    try:
                        await consumer.commit({tp: records[-1].offset + 1})
                    except (CommitFailedError, IllegalStateError) as error:  # revoked meanwhile: tracking still holds
                        log.info("offset commit for %s skipped: %s", tp, error)
                    if on_batch:
                        on_batch(report)
        finally:
            await consumer.stop()
