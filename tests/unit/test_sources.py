"""Every source only reads and hands its messages to the bus: the embedded log's router, the Kafka
partition applier, the tick, the agent and an operator's retry of a parked message, each driven
through the same recording fake of the bus on in-memory persistence."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from loopline.adapters.embedded_log import EmbeddedLog
from loopline.adapters.kafka_log import Topics
from loopline.adapters.kafka_worker import PartitionBatchApplier
from loopline.adapters.messages import parse_message
from loopline.domain import ids
from loopline.domain.parked import ParkedMessage
from loopline.domain.timers import TimerKind
from loopline.processors.followers import parked
from loopline.processors.followers.agent import Agent
from loopline.processors.application import Loopline, UnitOfWork
from loopline.processors.handlers.table import build_bus
from loopline.processors.messages import BucketSwept, DecisionReturned, Inbound, Retry, TimerFired, Unreadable, WheelSwept
from loopline.processors.followers.router import Router
from loopline.processors.followers.scheduler import Scheduler
from tests.conftest import command
from tests.unit.fakes import RecordingBus, RecordingDrafter, ScriptedModel

T0 = "2026-03-13T10:00:00Z"
LATER = datetime(2026, 3, 16, 10, 0, 1, tzinfo=timezone.utc)
CREATE = command("c1", "task.create", T0, task_id="t1", title="Meet Rahul")
EMAIL = command("c2", "action.record", T0, task_id="t1", action="send_email", to="rahul@company.com", subject="Next week?")


@dataclass(frozen=True)
class Record:
    """A Kafka record as aiokafka hands it over."""

    offset: int
    value: bytes
    key: bytes | None = None
    timestamp: int = 1_773_396_000_000


def _app() -> Loopline:
    return Loopline(env={"PERSISTENCE_MODULE": "eventsourcing.popo"})


def _applied(app: Loopline, *messages: dict[str, Any]) -> None:
    """The messages appended to the embedded log and applied by the real bus."""
    EmbeddedLog(app).append([parse_message(json.dumps(m)) for m in messages], "test")
    Router(build_bus(app, RecordingDrafter())).run_once()


def test_the_router_hands_the_logs_messages_over_in_order_with_their_positions() -> None:
    app = _app()
    EmbeddedLog(app).append([parse_message(json.dumps(m)) for m in (CREATE, EMAIL)], "test")
    bus = RecordingBus(app)

    outcomes = Router(bus).run_once()  # type: ignore[arg-type]

    [batch] = bus.batches
    assert [(type(m), m.message.ref, m.source) for m in batch] == [(Inbound, "c1", None), (Inbound, "c2", None)]
    assert all(m.position for m in batch) and len(outcomes) == 2


def test_the_kafka_partition_applier_hands_over_messages_and_unreadable_records_past_the_stored_position() -> None:
    app = _app()
    bus = RecordingBus(app)
    topics = Topics()
    records = [Record(0, json.dumps(CREATE).encode()), Record(1, b"{not json"), Record(2, json.dumps(EMAIL).encode())]

    report = PartitionBatchApplier(bus, topics).apply(topics.commands, 0, records)  # type: ignore[arg-type]

    [batch] = bus.batches
    assert [type(m) for m in batch] == [Inbound, Unreadable, Inbound]
    assert [batch[0].source, batch[1].position] == [f"{topics.commands}:0:0", "0:1"]
    assert (len(report.outcomes), report.dead_lettered, report.skipped) == (2, 1, 0)


def test_the_tick_hands_over_each_due_timer_then_the_end_of_the_bucket_and_of_the_sweep() -> None:
    app = _app()
    _applied(app, CREATE, EMAIL)
    bus = RecordingBus(app)

    Scheduler(bus).tick(LATER)  # type: ignore[arg-type]

    handed = [m for batch in bus.batches for m in batch]
    fired = [m for m in handed if isinstance(m, TimerFired)]
    assert TimerKind.LOOP_DEADLINE in {m.kind for m in fired} and all(m.now == LATER for m in fired)
    assert any(isinstance(m, BucketSwept) for m in handed)
    assert isinstance(handed[-1], WheelSwept) and handed[-1].now == LATER


def test_the_agent_hands_over_each_pending_requests_answer_without_recording_it() -> None:
    app, model = _app(), ScriptedModel()
    _applied(app, CREATE, EMAIL)
    Scheduler(build_bus(app, RecordingDrafter())).tick(LATER)  # asks the model for a follow-up
    bus = RecordingBus(app)
    agent = Agent(bus, model)  # type: ignore[arg-type]

    try:
        answered = agent.run_once()
    finally:
        agent.close()

    [batch] = bus.batches
    [returned] = batch
    assert isinstance(returned, DecisionReturned) and returned.pending.purpose == "followup"
    assert returned.answer.output["subject"] == "Touch follow-up" and answered.read == 1  # type: ignore[union-attr]
    assert len(model.requests) == 1


def test_a_parked_retry_hands_the_stored_message_over_with_its_retry() -> None:
    app = _app()
    message_id = ids.message_id("user_xyz", "c1")
    parked_id = ids.parked_message_id(message_id)
    uow = UnitOfWork(app)
    uow.add(ParkedMessage.park(
        id=parked_id, now=LATER, tenant="user_xyz", kind="command", ref="c1", type="task.create",
        data={"task_id": "t1", "title": "Meet Rahul"}, at=T0, source="embedded log", position="1",
        error_type="ValueError", error="boom", trace="", attempts=3,
    ))
    uow.commit()
    bus = RecordingBus(app)

    outcome = parked.retry(bus, parked_id, by="ops", now=LATER)  # type: ignore[arg-type]

    [[retry]] = bus.batches
    assert isinstance(retry, Retry) and retry.inbound.message_id == message_id
    assert retry.inbound.message.ref == "c1" and outcome == "handled Retry"
