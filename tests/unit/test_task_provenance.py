"""Every task records where it came from (issue 21 item 5, seed 002 §4), and tasks stored before still load."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from uuid import UUID

from eventsourcing.persistence import StoredEvent

from loopline.domain import ids
from loopline.domain.task import Task
from loopline.domain.task_ledger import Origin
from loopline.domain.task_provenance import Provenance
from loopline.processors.application import Loopline, UnitOfWork
from tests.conftest import command
from tests.fixtures.stored_events import FIXTURE
from tests.unit.in_memory import InMemoryLoopline

AT = datetime(2026, 5, 4, 9, 0, tzinfo=timezone.utc).isoformat().replace("+00:00", "Z")


def test_a_task_the_agent_creates_names_the_command_that_created_it() -> None:
    loopline = InMemoryLoopline()
    loopline.publish(command("m1", "task.create", AT, "acme", task_id="t1", title="Chase the invoice"))
    task = loopline.task("acme", "t1")
    assert (task.trigger_type, task.trigger_event_id, task.created_by) == ("agent", "m1", "agent")


def test_a_task_created_for_a_signal_names_the_signal_and_counts_against_its_limit() -> None:
    loopline = InMemoryLoopline()
    loopline.publish(command("m1", "task.create", AT, "acme", task_id="t1", title="Answer Ann",
                             origin={"kind": "signal", "id": "sig-7"}))
    task = loopline.task("acme", "t1")
    assert (task.trigger_type, task.trigger_event_id) == ("signal", "sig-7")
    assert Provenance.of_command(Origin("signal", "sig-7"), "m1").origin == Origin("signal", "sig-7")


def test_loopline_own_creations_count_against_the_run_that_made_them_and_the_owner_against_none() -> None:
    assert Provenance("synthesis", "run-3", "loopline").origin == Origin("run", "run-3")
    assert Provenance("routine", "digest#4", "loopline").origin == Origin("run", "digest#4")
    assert Provenance("owner", "m9", "owner").origin is None


def test_a_task_created_before_provenance_was_recorded_loads_as_the_agent_created_it() -> None:
    document = json.loads(FIXTURE.read_text(encoding="utf-8"))
    app = Loopline(env={"PERSISTENCE_MODULE": "eventsourcing.popo"})
    app.recorder.insert_events([
        StoredEvent(originator_id=UUID(item["originator_id"]), originator_version=item["originator_version"],
                    topic=item["topic"], state=item["state"].encode())
        for item in document["events"]
    ])
    task = UnitOfWork(app).get(ids.task_id("user_xyz", "task_abc"), Task)
    assert task is not None
    assert (task.trigger_type, task.trigger_event_id, task.created_by) == ("agent", None, "agent")


def test_a_version_5_snapshot_loads_as_a_task_the_agent_created() -> None:
    loopline = InMemoryLoopline()
    loopline.publish(command("m1", "task.create", AT, "acme", task_id="t1", title="Chase the invoice"))
    snapshot = Task.Snapshot.take(loopline.task("acme", "t1"))
    state = {k: v for k, v in snapshot.state.items() if k not in ("trigger_type", "trigger_event_id", "created_by")}
    old = Task.Snapshot(originator_id=snapshot.originator_id, originator_version=snapshot.originator_version,
                        timestamp=snapshot.timestamp, topic=snapshot.topic, state=state | {"class_version": 5})
    loaded = old.mutate(None)
    assert (loaded.trigger_type, loaded.trigger_event_id, loaded.created_by) == ("agent", None, "agent")
