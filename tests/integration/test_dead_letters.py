"""Dead letters at the Kafka edge: recorded with their batch, sent to `<topic>.dlq` once, by the relay."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from eventsourcing.persistence import IntegrityError
from sqlalchemy import select

from loopline.adapters.kafka_log import Topics
from loopline.adapters.kafka_worker import PartitionBatchApplier
from loopline.processors.application import UnitOfWork
from loopline.projections.tasks import tasks
from loopline.runtime.system import System
from tests.conftest import build_system, command
from tests.e2e.test_scale_workers import consume_all
from tests.fuzz_corpus import BAD
from tests.servers import Broker, Postgres

AT = "2026-03-13T10:00:00Z"


@dataclass(frozen=True)
class Record:
    offset: int
    key: bytes
    value: bytes
    timestamp: int = 1_773_396_000_000


@pytest.fixture
def scale(home: Path, postgres: Postgres, broker: Broker) -> Iterator[System]:
    database = postgres.new_database()
    built = build_system(
        home, LOOPLINE_EVENT_STORE=database, LOOPLINE_READ_MODEL=database, LOOPLINE_KAFKA=broker.bootstrap,
        LOOPLINE_KAFKA_TOPIC_PREFIX=f"dl{uuid.uuid4().hex[:8]}.",
    )
    yield built
    built.close()


def test_a_batch_retried_after_a_conflict_sends_each_dead_letter_once(
    scale: System, monkeypatch: pytest.MonkeyPatch
) -> None:
    topics = Topics(scale.settings.kafka_topic_prefix)
    refused = json.dumps(command("c0", "action.record", AT, "acme", task_id="nope", action="send_email", to="a@x.com")).encode()
    valid = json.dumps(command("c1", "task.create", AT, "acme", task_id="t", title="Valid")).encode()
    bad = [b'{"kind": "command", "id": "c2", ', b"\xff\xfe not even text"]
    records = [Record(0, b"acme", bad[0]), Record(1, b"acme", refused), Record(2, b"acme", bad[1]), Record(3, b"acme", valid)]

    real_commit, conflicts = UnitOfWork.commit, []

    def first_commit_conflicts(uow: UnitOfWork, tracking: object = None) -> int:
        if not conflicts:  # another worker wrote first: the batch is applied again from the start
            conflicts.append(True)
            raise IntegrityError("simulated conflict")
        return real_commit(uow, tracking)

    monkeypatch.setattr(UnitOfWork, "commit", first_commit_conflicts)
    report = PartitionBatchApplier(scale.bus, topics).apply(topics.commands, 0, records)
    monkeypatch.undo()
    assert conflicts and report.dead_lettered == 2
    assert [outcome.accepted for outcome in report.outcomes] == [False, True]  # the domain refused c0

    scale.drain()  # the leader's relay sends what the committed batch recorded
    scale.drain()
    dead = consume_all(scale.settings.kafka, topics.dlq(topics.commands), expected=len(bad))
    assert sorted(record.value for record in dead) == sorted(bad)
    headers = [{name: value.decode() for name, value in record.headers} for record in dead]
    assert len({h["loopline-key"] for h in headers}) == len(bad)
    assert sorted(h["loopline-source"] for h in headers) == [f"{topics.commands}:0:0", f"{topics.commands}:0:2"]
    assert all(record.key == b"acme" for record in dead)


def test_every_kind_of_bad_record_is_dead_lettered_and_the_valid_ones_around_it_applied(scale: System) -> None:
    topics = Topics(scale.settings.kafka_topic_prefix)
    valid = [json.dumps(command(f"c{i}", "task.create", AT, "acme", task_id=f"t{i}", title="Valid")).encode() for i in range(3)]
    bad = [make("acme", f"r{i}") for i, make in enumerate(BAD.values())] + [None]  # None: a tombstone, no value at all
    values = [valid[0], *bad[: len(bad) // 2], valid[1], *bad[len(bad) // 2 :], valid[2]]
    records = [Record(offset, b"acme", value) for offset, value in enumerate(values)]

    report = PartitionBatchApplier(scale.bus, topics).apply(topics.commands, 0, records)

    assert report.dead_lettered == len(bad)
    assert [outcome.accepted for outcome in report.outcomes] == [True, True, True]
    scale.drain()
    with scale.projections.engine.connect() as conn:
        assert sorted(conn.execute(select(tasks.c.task_id)).scalars()) == ["t0", "t1", "t2"]
    dead = consume_all(scale.settings.kafka, topics.dlq(topics.commands), expected=len(bad))
    assert sorted(record.value for record in dead) == sorted(value or b"" for value in bad)
