"""Consumes `loopline.commands` and `loopline.signals` with exactly-once effects.

Each fetched batch of one partition is applied in one transaction together with the
partition's position (`Tracking("kafka:<topic>:<partition>", offset + 1)`) and a fingerprint of
the batch's last record. A message at or below the stored position is skipped, and on every
(re)assignment the consumer seeks to the stored position (reading the last processed record
again, to tell a recreated log: see PartitionPositions), so Kafka's own committed offsets are
only a hint; the position moves by compare-and-set, so two workers that both hold a partition
during a rebalance cannot both apply a batch. Malformed input is recorded in the batch's
transaction (`RejectedInput`); the leader's relay sends it to `<topic>.dlq` once it is
committed (adapters/kafka_relay.py).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from eventsourcing.persistence import IntegrityError, Tracking

from loopline.adapters.kafka_log import Topics
from loopline.adapters.messages import InvalidMessage, parse_message
from loopline.domain import ids
from loopline.processors.application import Loopline, Position
from loopline.processors.bus import Batch, Bus, Outcomes
from loopline.processors.handlers.inbound import Repeated
from loopline.processors.messages import Inbound, Unreadable

log = logging.getLogger("loopline.kafka")
CHECK_WAIT = 5.0  # seconds to wait for the last processed record on assignment before asking where the log ends
REQUEST_TIMEOUT_MS = 40_000  # every broker call of the consumer gives up after this (aiokafka's default, stated)


@dataclass(frozen=True)
class LastRecord:
    """The record a partition's stored position was last moved past, to be found again on assignment."""

    epoch: int
    offset: int
    fingerprint: int

    def differs(self, records: list[Any]) -> bool:
        """Whether the records read from `offset` on show a recreated log: the broker has another record
        at `offset`, or answers from before it without it (a missing offset is answered from the log's
        beginning, `auto_offset_reset`). A broker may answer with a whole record batch that starts before
        `offset`: the record at `offset` in it decides. Records only past `offset` tell nothing (a broker
        may answer from the next record batch; retention may have deleted it)."""
        at = next((record for record in records if record.offset == self.offset), None)
        if at is not None:
            return fingerprint(at) != self.fingerprint
        return records[0].offset < self.offset


class PartitionPositions:
    """Where each partition's processing stands, recorded as eventsourcing tracking.

    Beside each position, in the same transaction, goes a fingerprint of the last record processed
    (`<name>/last`). On assignment the consumer reads that record again: if the log no longer has
    it, or has another record at its offset, the topic was deleted and recreated (or the broker lost
    its log), however long the new log has grown. The partition then starts a new epoch, with its
    own position, at the new log's beginning: every message in it is processed, and those already
    received (by tenant and id) are acknowledged as duplicates, so nothing is applied twice.
    """

    def __init__(self, app: Loopline) -> None:
        self.app = app
        self._names: dict[tuple[str, int], str] = {}

    def name(self, topic: str, partition: int) -> str:
        if (topic, partition) not in self._names:
            epoch = self._epoch(topic, partition)
            self._names[(topic, partition)] = f"kafka:{topic}:{partition}" + (f"#{epoch}" if epoch > 1 else "")
        return self._names[(topic, partition)]

    def after(self, name: str, record: Any, previous: int) -> Position:
        """The position past `record`, with the record's fingerprint stored beside it."""
        return Position(name, record.offset + 1, previous=previous, marks=((f"{name}/last", fingerprint(record)),))

    def resume_at(self, topic: str, partition: int, end_offset: int) -> tuple[int, LastRecord | None]:
        """The offset to read next: the last processed record's, to check it first, when its fingerprint is stored."""
        self._names.pop((topic, partition), None)
        name = self.name(topic, partition)
        stored = self.app.position(name)
        if stored == 0:
            return 0, None
        last = self.app.position(f"{name}/last")
        if last:
            return stored - 1, LastRecord(self._epoch(topic, partition), stored - 1, last)
        if stored <= end_offset:  # a position stored before fingerprints were: the log's end is all there is to go by
            return stored, None
        why = f"ends at {end_offset}, before the processed position {stored}"
        return self.start_epoch(topic, partition, self._epoch(topic, partition), why), None

    def start_epoch(self, topic: str, partition: int, seen: int, why: str) -> int:
        """Starts the epoch after `seen` (once, however many workers saw it end); returns where to read next."""
        epoch_name = f"kafka-epoch:{topic}:{partition}"
        if self._epoch(topic, partition) == seen:
            log.warning("%s[%s] %s: the log was recreated; epoch %s processes it from its beginning (messages "
                        "already received are duplicates)", topic, partition, why, seen + 1)
            try:
                self.app.process_recorder.insert_tracking(Tracking(epoch_name, seen + 1))
            except IntegrityError:
                pass  # another worker started the epoch first
        self._names.pop((topic, partition), None)
        return self.app.position(self.name(topic, partition))

    def _epoch(self, topic: str, partition: int) -> int:
        return self.app.position(f"kafka-epoch:{topic}:{partition}") or 1


def fingerprint(record: Any) -> int:
    """63 bits of a hash of the record's key, value and broker timestamp: a recreated log's record differs."""
    digest = hashlib.blake2b(digest_size=8)
    for part in (record.key or b"", record.value or b"", str(record.timestamp).encode()):
        digest.update(len(part).to_bytes(8, "big"))
        digest.update(part)
    return int.from_bytes(digest.digest(), "big") >> 1 or 1  # a tracking value of 0 reads as "none"


@dataclass
class BatchReport(Outcomes[Inbound]):
    """A partition batch's messages applied (refused and parked among them), and those it passed over."""

    duplicates: int = 0
    dead_lettered: int = 0
    skipped: int = 0


@dataclass(frozen=True)
class PartitionRecords:
    """Records of one partition as the bus reads them: those past the stored position (read again after
    a conflict), each parsed into a message, or kept as unreadable for the dead-letter topic."""

    positions: PartitionPositions
    topics: Topics
    topic: str
    partition: int
    records: list[Any]

    def read(self) -> Batch | None:
        name = self.positions.name(self.topic, self.partition)
        stored = self.positions.app.position(name)
        fresh = [record for record in self.records if record.offset + 1 > stored]
        if not fresh:
            return None
        return Batch([self._message(record) for record in fresh], self.positions.after(name, fresh[-1], previous=stored))

    def one_by_one(self, batch: Batch) -> Iterator[PartitionRecords]:
        for record in self.records:
            yield PartitionRecords(self.positions, self.topics, self.topic, self.partition, [record])

    def _message(self, record: Any) -> Inbound | Unreadable:
        topic, partition = self.topic, self.partition
        expected_kind = "command" if topic == self.topics.commands else "signal"
        try:
            message = parse_message(record.value)
            if message.kind != expected_kind:
                raise InvalidMessage(f"kind: a {message.kind} on {topic}; send it to {self.topics.for_kind(message.kind)}")
        except InvalidMessage as error:
            log.warning("dead-lettering %s[%s]@%s: %s", topic, partition, record.offset, error, extra={"fields": {
                "topic": topic, "partition": partition, "offset": record.offset, **_named(record)}})
            return Unreadable(source=topic, position=f"{partition}:{record.offset}", raw=record.value or b"",
                              reason=str(error), key=record.key, at=_record_time(record))
        return Inbound(ids.message_id(message.tenant, message.ref), message, f"{topic}:{partition}:{record.offset}")


class PartitionBatchApplier:
    """Hands one partition's records to the bus; synchronous, so it can run in a worker thread."""

    def __init__(self, bus: Bus, topics: Topics) -> None:
        self.bus = bus
        self.topics = topics
        self.positions = PartitionPositions(bus.app)

    def apply(self, topic: str, partition: int, records: list[Any]) -> BatchReport:
        outcomes = self.bus.process(PartitionRecords(self.positions, self.topics, topic, partition, records))
        report = BatchReport(skipped=len(records) - len(outcomes))
        for outcome in outcomes:
            if isinstance(outcome.step, Unreadable):
                report.dead_lettered += 1
            elif isinstance(outcome.detail, Repeated):
                report.duplicates += 1
            else:
                report.outcomes.append(outcome)
        return report


def _named(record: Any) -> dict[str, str]:
    """The tenant (the record's key, as the publishers write it) and the task a dead letter names, as far as its
    value can be read: it may not be JSON at all."""
    named = {"tenant": record.key.decode("utf-8", "replace")} if record.key else {}
    try:
        value = json.loads(record.value or b"")
    except (ValueError, RecursionError):  # not JSON, or nested past what the parser reads
        return named
    if not isinstance(value, dict):
        return named
    data = value.get("data")
    task_id = data.get("task_id") if isinstance(data, dict) else None
    if "tenant" not in named and isinstance(value.get("tenant"), str):
        named["tenant"] = value["tenant"]
    return {**named, **({"task_id": task_id} if isinstance(task_id, str) else {})}


def _record_time(record: Any) -> datetime:
    """When the broker took the record (its timestamp, in ms): a rejected record has no trusted `at`.
    A record without a usable timestamp (none, or out of range) is dated at the epoch rather than lost."""
    try:
        return datetime.fromtimestamp(record.timestamp / 1000, tz=timezone.utc)
    except (TypeError, ValueError, OverflowError, OSError):
        return datetime.fromtimestamp(0, tz=timezone.utc)


class KafkaWorker:
    def __init__(self, bus: Bus, bootstrap: str, topics: Topics, group_id: str = "loopline-workers") -> None:
        self.bootstrap = bootstrap
        self.topics = topics
        self.group_id = group_id
        self.applier = PartitionBatchApplier(bus, topics)
        self.held: dict[Any, int] = {}  # per assigned partition, the offset after the last record read
        self._highwater: Any = None

    def partitions(self) -> list[str]:
        return sorted(f"{tp.topic}[{tp.partition}]" for tp in self.held)

    def lag(self) -> int | None:
        """Records in the held partitions past the last read, from the high watermarks of the latest fetches
        (no broker call); None before every held partition has been fetched from."""
        marks = [self._highwater(tp) if self._highwater else None for tp in self.held]
        if any(mark is None for mark in marks):
            return None
        return sum(max(mark - self.held[tp], 0) for tp, mark in zip(self.held, marks, strict=True))

    async def run(self, stop: asyncio.Event, on_batch: Any = None) -> None:
        from aiokafka import AIOKafkaConsumer, ConsumerRebalanceListener
        from aiokafka.errors import CommitFailedError, IllegalStateError

        positions = self.applier.positions
        # Assigned partitions whose last processed record is still to be read again, and when to stop waiting for it.
        unchecked: dict[Any, tuple[LastRecord, float]] = {}
        reading_from = self.held  # per partition held, the offset after the last record read
        # Assigned partitions not yet sought to their stored positions: none of their records is applied
        # until they are (a rebalance listener's failure is only logged by aiokafka, so the loop retries).
        unpositioned: set[Any] = set()

        async def seek_to_stored(tp: Any, end: int) -> None:
            resume, last = await asyncio.to_thread(positions.resume_at, tp.topic, tp.partition, end)
            unchecked.pop(tp, None)
            if last is not None:
                unchecked[tp] = (last, time.monotonic() + CHECK_WAIT)
            consumer.seek(tp, resume)
            reading_from[tp] = resume

        async def recreated(tp: Any, last: LastRecord, why: str) -> None:
            unchecked.pop(tp, None)
            resume = await asyncio.to_thread(positions.start_epoch, tp.topic, tp.partition, last.epoch, why)
            consumer.seek(tp, resume)
            reading_from[tp] = resume

        async def check_overdue() -> None:
            """A broker that answers an offset past its log's end with nothing (not OffsetOutOfRange, as
            Tansu does) never sends the record to check: past the wait, the log's end decides."""
            now = time.monotonic()
            for tp, (last, deadline) in list(unchecked.items()):
                if now < deadline:
                    continue
                end = (await consumer.end_offsets([tp]))[tp]
                if end <= last.offset:
                    await recreated(tp, last, f"ends at {end}, before the processed record {last.offset}")
                else:
                    unchecked[tp] = (last, now + CHECK_WAIT)

        async def position(partitions: set[Any]) -> None:
            """Seeks each partition to its stored position; those the broker or the database could not
            answer for stay unpositioned, to be tried again."""
            try:
                ends = await consumer.end_offsets(sorted(partitions)) if partitions else {}
                for tp in sorted(partitions):
                    await seek_to_stored(tp, ends[tp])
                    unpositioned.discard(tp)
            except Exception as error:  # noqa: BLE001 - e.g. a broker still starting: its records wait
                log.warning("could not find the stored positions of %s partition(s) yet (%s: %s); trying again",
                            len(unpositioned), type(error).__name__, error)
                await asyncio.sleep(0.5)

        class SeekToStoredPositions(ConsumerRebalanceListener):
            async def on_partitions_revoked(self, revoked: Any) -> None:
                for tp in revoked:
                    unchecked.pop(tp, None)
                    unpositioned.discard(tp)
                    reading_from.pop(tp, None)
                if revoked:
                    _event("partitions.revoked", partitions=_names(revoked), holding=_names(reading_from))

            async def on_partitions_assigned(self, assigned: Any) -> None:
                unpositioned.update(assigned)
                await position(set(assigned))
                _event("partitions.assigned", partitions=_names(assigned), holding=_names(reading_from))

        consumer = AIOKafkaConsumer(
            bootstrap_servers=self.bootstrap, group_id=f"{self.topics.prefix}{self.group_id}",
            enable_auto_commit=False, auto_offset_reset="earliest", max_poll_records=500,
            request_timeout_ms=REQUEST_TIMEOUT_MS,
        )
        consumer.subscribe([self.topics.commands, self.topics.signals], listener=SeekToStoredPositions())
        self._highwater = consumer.highwater
        await consumer.start()
        try:
            while not stop.is_set():
                if unpositioned:
                    await position(set(unpositioned))
                batches = await consumer.getmany(timeout_ms=200, max_records=1000)
                for tp, records in batches.items():
                    if tp in unpositioned:
                        continue  # read from wherever the broker chose: read again from the stored position
                    if records[0].offset < reading_from.get(tp, 0) and tp not in unchecked:
                        # The broker answered from the log's beginning (its log ended before our offset): check it.
                        await seek_to_stored(tp, (await consumer.end_offsets([tp]))[tp])
                        continue
                    reading_from[tp] = records[-1].offset + 1
                    last, _ = unchecked.pop(tp, (None, 0.0))
                    if last is not None and last.differs(records):
                        why = (f"answered offset {last.offset} from {records[0].offset}" if records[0].offset < last.offset
                               else f"has another record at {last.offset} than processed")
                        await recreated(tp, last, why)
                        continue
                    report = await asyncio.to_thread(self.applier.apply, tp.topic, tp.partition, records)
                    try:
                        await consumer.commit({tp: records[-1].offset + 1})
                    except (CommitFailedError, IllegalStateError) as error:  # revoked meanwhile: tracking still holds
                        log.info("offset commit for %s skipped: %s", tp, error)
                    if on_batch:
                        on_batch(report)
                if unchecked:
                    await check_overdue()
        finally:
            await consumer.stop()
            self.held.clear()


def _names(partitions: Any) -> list[str]:
    return [f"{tp.topic}[{tp.partition}]" for tp in sorted(partitions)]


def _event(name: str, **fields: Any) -> None:
    """A structured event for the worker's log (runtime/worker_log.py formats it)."""
    log.info(name, extra={"event": name, "fields": fields})
