"""Kafka partition positions on both event stores: the last record's fingerprint moves with the position."""

from __future__ import annotations

from typing import NamedTuple

import pytest
from eventsourcing.persistence import IntegrityError

from loopline.adapters.kafka_worker import LastRecord, PartitionPositions
from loopline.processors.application import UnitOfWork
from loopline.runtime.system import System

TOPIC = "loopline.commands"


class Record(NamedTuple):
    """The fields of a consumed Kafka record a position looks at."""

    offset: int
    key: bytes | None
    value: bytes
    timestamp: int


def processed(system: System, positions: PartitionPositions, record: Record, previous: int) -> None:
    UnitOfWork(system.app).commit(positions.after(positions.name(TOPIC, 0), record, previous=previous))


def test_a_resumed_partition_checks_the_last_processed_record_first(system: System) -> None:
    positions = PartitionPositions(system.app)
    last = Record(6, b"alice", b'{"id": "c7"}', 1_773_396_000_000)
    processed(system, positions, Record(2, b"bob", b'{"id": "c3"}', 1_773_395_000_000), previous=0)
    processed(system, positions, last, previous=3)

    resume, check = positions.resume_at(TOPIC, 0, end_offset=7)

    assert resume == 6 and isinstance(check, LastRecord) and check.offset == 6
    assert not check.differs([last])
    assert check.differs([last._replace(timestamp=last.timestamp + 1)])  # the same message published again
    assert check.differs([last._replace(value=b'{"id": "other"}')])
    assert check.differs([Record(0, b"alice", b'{"id": "c1"}', 1_773_397_000_000)])  # the broker read from the beginning
    assert not check.differs([Record(7, b"alice", b'{"id": "c8"}', 1_773_396_000_001)])  # it answered from the next batch
    # It answered with a whole record batch that starts before the offset asked for: the record at it decides.
    batch = [Record(4, b"carol", b'{"id": "c5"}', 1_773_395_500_000), Record(5, b"carol", b'{"id": "c6"}', 1_773_395_600_000)]
    assert not check.differs([*batch, last, Record(7, b"alice", b'{"id": "c8"}', 1_773_396_000_001)])
    assert check.differs([*batch, last._replace(value=b'{"id": "other"}')])
    assert check.differs(batch)  # from before the offset, without it: the log ends before it


def test_a_position_that_lost_its_race_leaves_the_fingerprint_as_it_was(system: System) -> None:
    positions = PartitionPositions(system.app)
    first = Record(0, b"alice", b'{"id": "c1"}', 1_773_396_000_000)
    processed(system, positions, first, previous=0)

    with pytest.raises(IntegrityError):
        processed(system, positions, Record(1, b"alice", b'{"id": "c2"}', 1_773_396_000_001), previous=0)

    _, check = positions.resume_at(TOPIC, 0, end_offset=1)
    assert check is not None and check.offset == 0 and not check.differs([first])


def test_workers_that_both_see_a_recreated_log_start_one_new_epoch(system: System) -> None:
    one, other = PartitionPositions(system.app), PartitionPositions(system.app)
    processed(system, one, Record(4, b"alice", b'{"id": "c5"}', 1_773_396_000_000), previous=0)
    _, seen = one.resume_at(TOPIC, 0, end_offset=5)
    assert seen is not None

    assert one.start_epoch(TOPIC, 0, seen.epoch, "test") == 0
    processed(system, one, Record(0, b"alice", b'{"id": "c1"}', 1_773_397_000_000), previous=0)
    assert other.start_epoch(TOPIC, 0, seen.epoch, "test") == 1  # the epoch the first worker started, where it stands

    assert one.name(TOPIC, 0) == other.name(TOPIC, 0) == f"kafka:{TOPIC}:0#2"
