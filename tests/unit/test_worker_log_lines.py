"""`loopline run`'s JSON lines about one message — dead-lettered, refused, parked — name its tenant and, where the
message names one, its task, beside where it came in."""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator
from typing import Any
from uuid import uuid4

import pytest

from loopline.adapters.kafka_log import Topics
from loopline.adapters.kafka_worker import PartitionBatchApplier
from loopline.adapters.messages import parse_message
from loopline.processors.application import Loopline
from loopline.processors.bus import Outcome, Outcomes
from loopline.processors.handlers.table import build_bus
from loopline.processors.messages import Inbound
from loopline.runtime.worker_log import JsonLines, messages_set_aside, worker_id
from tests.conftest import command
from tests.unit.fakes import RecordingDrafter
from tests.unit.test_sources import Record

AT = "2026-03-13T10:00:00Z"


@pytest.fixture
def logged() -> Iterator[io.StringIO]:
    """What the worker's loggers write, formatted as `loopline run` formats it."""
    lines = io.StringIO()
    handler = logging.StreamHandler(lines)
    handler.setFormatter(JsonLines(worker_id()))
    loopline = logging.getLogger("loopline")
    level = loopline.level
    loopline.addHandler(handler)
    loopline.setLevel(logging.INFO)
    yield lines
    loopline.removeHandler(handler)
    loopline.setLevel(level)


def entries(lines: io.StringIO) -> list[dict[str, Any]]:
    return [json.loads(line) for line in lines.getvalue().splitlines()]


def test_dead_letters_and_refused_messages_at_scale_name_their_tenant_and_task(logged: io.StringIO) -> None:
    app = Loopline(env={"PERSISTENCE_MODULE": "eventsourcing.popo"})
    topics = Topics()
    wrong_kind = {**command("c1", "task.update", AT, "acme", task_id="t7", notes="hi"), "kind": "signal"}
    refused = command("c2", "action.record", AT, "acme", task_id="nope", action="send_email", to="a@example.com")
    records = [Record(0, json.dumps(wrong_kind).encode(), b"acme"), Record(1, b"{not json", b"bolt"),
               Record(2, json.dumps(refused).encode(), b"acme")]

    report = PartitionBatchApplier(build_bus(app, RecordingDrafter()), topics).apply(topics.commands, 3, records)
    messages_set_aside(report)

    dead = [entry for entry in entries(logged) if entry["event"] == "log"]
    assert [(e["tenant"], e.get("task_id"), e["topic"], e["partition"], e["offset"]) for e in dead] == [
        ("acme", "t7", topics.commands, 3, 0), ("bolt", None, topics.commands, 3, 1)]
    assert all(e["message"].startswith(f"dead-lettering {topics.commands}[3]@") for e in dead)
    [line] = [entry for entry in entries(logged) if entry["event"] == "message.refused"]
    assert {key: line[key] for key in ("id", "type", "tenant", "task_id", "topic", "partition", "offset", "level")} == {
        "id": "c2", "type": "action.record", "tenant": "acme", "task_id": "nope", "topic": topics.commands,
        "partition": 3, "offset": 2, "level": "info"}
    assert "nope" in line["reason"]


def test_a_parked_message_names_its_tenant_task_and_reason(logged: io.StringIO) -> None:
    message = parse_message(json.dumps(command("c3", "task.update", AT, "acme", task_id="t1", notes="n")))
    at_scale = Inbound(uuid4(), message, source="t.loopline.commands:1:41")
    embedded = Inbound(uuid4(), message, position="17")
    messages_set_aside(Outcomes([Outcome(at_scale, False, "OperationalError: gone", parked=True),
                                 Outcome(embedded, False, "OperationalError: gone", parked=True)]))

    lines = [entry for entry in entries(logged) if entry["event"] == "message.parked"]
    assert [(e["level"], e["tenant"], e["task_id"], e["id"], e["reason"]) for e in lines] == [
        ("warning", "acme", "t1", "c3", "OperationalError: gone")] * 2
    assert (lines[0]["topic"], lines[0]["partition"], lines[0]["offset"]) == ("t.loopline.commands", 1, 41)
    assert lines[1]["position"] == "17"
