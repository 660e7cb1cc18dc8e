"""Poison messages are parked with their reason and the stream goes on for everyone (embedded log).

The poison values here pass no validation of this version, so they are written to the log directly,
as a log written by an older, laxer version would hold them; the rest go through `publish`.
"""

from __future__ import annotations

import threading
from datetime import datetime, timezone
from typing import Any

import pytest

from loopline.domain import ids
from loopline.domain.inbound import InboundMessage
from loopline.domain.parked import ParkedMessageClosed
from loopline.projections.limits import held_counts
from loopline.domain.timeutil import parse_time
from loopline.processors.followers import parked as parked_messages
from loopline.processors.application import UnitOfWork
from loopline.processors.handlers.loops_and_timers import load_task, register_loop
from loopline.runtime.parked import everything_parked, parked_counts
from loopline.runtime.system import System
from tests.conftest import command, publish, signal
from tests.hooks.loopline_hooks import Faults
from tests.integration.helpers import loop_row, task_row, task_rows

T0 = "2026-03-13T10:00:00Z"
NOW = datetime(2026, 3, 20, tzinfo=timezone.utc)


@pytest.fixture
def faults(monkeypatch: pytest.MonkeyPatch) -> Faults:
    """Faults this test configures, checked by the real dispatch, read models and delivery."""
    injected = Faults()
    injected.install(monkeypatch.setattr)
    return injected


def append_raw(system: System, message: dict[str, Any]) -> None:
    """Writes a message to the embedded log as it is, without this version's validation."""
    uow = UnitOfWork(system.app)
    uow.add(InboundMessage.receive(
        id=ids.message_id(message["tenant"], message["id"]), at=parse_time(message["at"]), kind=message["kind"],
        ref=message["id"], type=message["type"], tenant=message["tenant"], data=message["data"], source="older version",
    ))
    uow.commit()


def healthy(tenant: str) -> list[dict[str, Any]]:
    return [command(f"{tenant}-1", "task.create", T0, tenant, task_id="t", title=f"Task of {tenant}")]


def only_parked(system: System) -> dict[str, Any]:
    (row,) = [row for row in everything_parked(system) if row["parked"] == "message"]
    return row


def test_a_task_expiring_beyond_the_calendar_is_parked_and_everyone_else_goes_on(system: System) -> None:
    append_raw(system, command("p-1", "task.create", T0, "poisoned", task_id="forever", title="Far", expires_in_days=3_000_000))
    report = publish(system, *healthy("alice"), *healthy("bob"),
                     command("p-2", "task.create", T0, "poisoned", task_id="ok", title="Fine"))

    assert [o.step.message.ref for o in report.parked] == ["p-1"]
    assert report.rejected == []
    assert sorted((row["tenant"], row["task_id"]) for row in task_rows(system)) == [
        ("alice", "t"), ("bob", "t"), ("poisoned", "ok")
    ]
    parked = only_parked(system)
    assert parked["tenant"] == "poisoned" and parked["what"] == "command task.create p-1"
    # The log's data is validated again by the command's model before any handler runs: the bound it breaks is named.
    assert parked["error"].startswith("ValidationError") and "expires_in_days" in parked["error"] and parked["attempts"] == 3
    assert parked["source"].startswith("embedded log:") and "in command_from_data" in parked["trace"]
    assert parked_counts(system) == {"messages": 1, "read_model_events": 0, "deliveries": 0}
    with system.projections.engine.connect() as conn:  # the dead letter is what the retry limit held back
        assert held_counts(conn) == {"message_attempts": 1}
    # Processing goes on after it: the next publish and tick work.
    publish(system, *healthy("carol"))
    assert task_row(system, "t", "carol")["status"] == "executing"


def test_a_webhook_signal_against_a_malformed_watch_is_parked_and_the_tenant_goes_on(system: System) -> None:
    publish(system, command("w-1", "task.create", T0, "acme", task_id="nda", title="Get the NDA signed"))
    # A loop.register with this watch is refused wherever it is read, so the loop is stored as an older version left it.
    uow = UnitOfWork(system.app)
    register_loop(uow, load_task(uow, "acme", "nda"), loop_ref="nda/signature", channel="webhook",
                  watch={"source": "docusign", "trigger_name": "signed", "match_fields": ["doc-1"]},
                  deadline=parse_time("2026-04-12T10:00:00Z"), if_unresolved="notify_user", description="the signature",
                  origin="explicit", now=parse_time(T0))
    uow.commit()
    report = publish(
        system,
        signal("w-3", "webhook.received", "2026-03-14T10:00:00Z", "acme", source="docusign", trigger_name="signed",
               payload={"doc": "doc-1"}),
        *healthy("zed"),
    )

    assert [o.step.message.ref for o in report.parked] == ["w-3"]
    assert only_parked(system)["error"].startswith("AttributeError")
    assert not loop_row(system, "nda/signature", "acme")["resolved"]
    assert task_row(system, "t", "zed")["status"] == "executing"


def test_retry_after_the_fix_applies_the_message_once(system: System, faults: Faults) -> None:
    faults.configure("handler:POISON")
    publish(system, command("f-1", "task.create", T0, "acme", task_id="later", title="POISON until fixed"), *healthy("bob"))
    parked = only_parked(system)
    assert parked["error"].startswith("InjectedFault")
    assert task_row(system, "t", "bob")["status"] == "executing"

    with pytest.raises(parked_messages.StillFailing):  # not fixed yet: stays parked with the new error
        parked_messages.retry(system.bus, parked["_ref"], by="ops", now=NOW)
    assert only_parked(system)["attempts"] == 4

    faults.configure("")  # the fix
    outcome = parked_messages.retry(system.bus, parked["_ref"], by="ops", now=NOW)
    system.drain()
    assert outcome == "created task later (executing)"
    assert task_row(system, "later", "acme")["title"] == "POISON until fixed"
    with pytest.raises(ParkedMessageClosed, match="retried already"):
        parked_messages.retry(system.bus, parked["_ref"], by="ops", now=NOW)
    assert parked_counts(system)["messages"] == 0
    (closed,) = [row for row in everything_parked(system, include_closed=True) if row["parked"] == "message"]
    assert closed["status"] == "retried" and closed["closed_by"] == "ops"


def test_two_retries_at_once_apply_the_message_once(system: System, faults: Faults) -> None:
    faults.configure("handler:POISON")
    publish(system, command("f-1", "action.record", T0, "acme", task_id="t", action="send_email", to="x@acme.example",
                            summary="POISON"), *healthy("acme"))
    parked_id = only_parked(system)["_ref"]
    faults.configure("")
    results: list[str] = []
    barrier = threading.Barrier(2)

    def retry() -> None:
        barrier.wait()
        try:
            results.append(parked_messages.retry(system.bus, parked_id, by="ops", now=NOW))
        except ParkedMessageClosed:
            results.append("closed")

    threads = [threading.Thread(target=retry) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    system.drain()
    assert results.count("closed") == 1, results
    assert task_row(system, "t", "acme")["actions"] == 1


def test_a_dropped_message_is_never_applied(system: System, faults: Faults) -> None:
    faults.configure("handler:POISON")
    publish(system, command("f-1", "task.create", T0, "acme", task_id="x", title="POISON"))
    parked_id = only_parked(system)["_ref"]
    parked_messages.drop(system.app, parked_id, by="ops", now=NOW)
    faults.configure("")
    with pytest.raises(ParkedMessageClosed, match="dropped already"):
        parked_messages.retry(system.bus, parked_id, by="ops", now=NOW)
    assert task_rows(system) == []


# --- read models ---------------------------------------------------------------------------------


def parked_events(system: System) -> list[dict[str, Any]]:
    return [row for row in everything_parked(system) if row["parked"] == "read model event"]


def test_a_read_model_handler_that_fails_on_one_event_parks_it_and_projects_the_rest(
    system: System, faults: Faults
) -> None:
    faults.configure("projection:Broken title")
    publish(system, *healthy("alice"), command("b-1", "task.create", T0, "acme", task_id="b", title="Broken title"),
            *healthy("bob"))

    assert sorted(row["tenant"] for row in task_rows(system)) == ["alice", "bob"]
    parked = parked_events(system)
    assert {row["tenant"] for row in parked} == {"acme"} and all(row["error"].startswith("InjectedFault") for row in parked)
    (created,) = [row for row in parked if row["what"] == "Task.Created in read model tasks"]
    assert created["id"] == f"p-tasks-{created['_ref'][1]}"
    assert all(status.lag == 0 for status in system.projections.status())
    assert parked_counts(system)["read_model_events"] == len(parked)

    faults.configure("")  # the fix
    name, position = created["_ref"]
    system.projections.retry_parked(name, position, by="ops", now=NOW)
    assert task_row(system, "b", "acme")["title"] == "Broken title"
    from loopline.projections.runner import ParkedEventClosed

    with pytest.raises(ParkedEventClosed):
        system.projections.retry_parked(name, position, by="ops", now=NOW)
    assert task_row(system, "b", "acme")["title"] == "Broken title"


@pytest.mark.parametrize("tenant, title", [("t" * 201, "Too long a tenant"), ("acme", "A NUL \x00 in a title")])
def test_values_postgresql_cannot_store_park_their_events_and_the_rest_is_projected(
    home: Any, postgres: Any, tenant: str, title: str
) -> None:
    from tests.conftest import build_system

    database = postgres.new_database()
    system = build_system(home, LOOPLINE_EVENT_STORE=database, LOOPLINE_READ_MODEL=database)
    try:
        append_raw(system, command("x-1", "task.create", T0, tenant, task_id="x", title=title))
        publish(system, *healthy("alice"))
        publish(system, *healthy("bob"))

        assert sorted(row["tenant"] for row in task_rows(system)) == ["alice", "bob"]
        parked = parked_events(system)
        assert parked and {row["error"].split(":")[0] for row in parked} <= {"DataError", "StringDataRightTruncation"}
        assert all(status.lag == 0 for status in system.projections.status())
    finally:
        system.close()


# --- delivery ------------------------------------------------------------------------------------


def completed(tenant: str, title: str) -> list[dict[str, Any]]:
    return [command(f"{tenant}-c1", "task.create", T0, tenant, task_id="t", title=title),
            command(f"{tenant}-c2", "task.complete", T0, tenant, task_id="t", summary="done")]


def notices(home: Any) -> list[tuple[str, str]]:
    from tests.integration.helpers import outbox

    return [(line["tenant"], line["kind"]) for line in outbox(home)]


def test_an_event_that_cannot_become_a_message_is_parked_and_requeued_once(
    system: System, home: Any, faults: Faults
) -> None:
    faults.configure("delivery:Broken deal")
    publish(system, *completed("acme", "Broken deal"), *completed("bob", "Fine deal"))
    assert notices(home) == [("bob", "task_completed")]
    (parked,) = [row for row in everything_parked(system) if row["parked"] == "delivery"]
    assert parked["tenant"] == "acme" and parked["what"].endswith("via routing")
    assert parked["error"].startswith("InjectedFault") and parked_counts(system)["deliveries"] == 1

    faults.configure("")  # the fix
    assert system.delivery.ledger.requeue(*parked["_ref"], now=NOW.timestamp())
    system.drain()
    assert not system.delivery.ledger.requeue(*parked["_ref"], now=NOW.timestamp())
    system.drain()
    assert sorted(notices(home)) == [("acme", "task_completed"), ("bob", "task_completed")]
    assert parked_counts(system)["deliveries"] == 0


class Exploding:
    """A channel with a bug for one tenant's messages."""

    name = "exploding"
    drops_repeats = False

    def accepts(self, message: dict[str, Any]) -> bool:
        return True

    def send(self, *, key: str, message: dict[str, Any]) -> None:
        if message["tenant"] == "acme":
            raise TypeError("unsupported operand")


def test_a_channel_that_raises_unexpectedly_parks_that_delivery_and_the_pass_goes_on(system: System, home: Any) -> None:
    system.delivery.add_channel(Exploding())
    publish(system, *completed("acme", "Deal"), *completed("bob", "Deal"))

    assert sorted(notices(home)) == [("acme", "task_completed"), ("bob", "task_completed")]  # the JSONL channel
    (parked,) = [row for row in everything_parked(system) if row["parked"] == "delivery"]
    assert parked["what"] == "task_completed to user via exploding" and parked["attempts"] == 1
    assert parked["error"] == "TypeError: unsupported operand"


# --- a commit that fails because of one message ------------------------------------------------


@pytest.fixture
def unstorable_titles(system: System, monkeypatch: pytest.MonkeyPatch) -> None:
    """The event store's encoder refuses a task titled "Unstorable", as it would a value it cannot encode."""
    real = system.app.mapper.to_stored_event

    def to_stored_event(event: Any) -> Any:
        if getattr(event, "title", None) == "Unstorable":
            raise ValueError("cannot encode this title")
        return real(event)

    monkeypatch.setattr(system.app.mapper, "to_stored_event", to_stored_event)


def test_a_message_whose_events_cannot_be_stored_is_parked_alone_and_its_batch_commits(
    system: System, unstorable_titles: None
) -> None:
    report = publish(system, *healthy("alice"), command("u-1", "task.create", T0, "acme", task_id="u", title="Unstorable"),
                     *healthy("bob"))

    assert [o.step.message.ref for o in report.parked] == ["u-1"]
    assert sorted(row["tenant"] for row in task_rows(system)) == ["alice", "bob"]
    parked = only_parked(system)
    assert parked["error"] == "ValueError: cannot encode this title" and parked["attempts"] == 1


def test_at_the_kafka_edge_a_message_whose_events_cannot_be_stored_is_parked_alone(
    system: System, unstorable_titles: None
) -> None:
    import json

    from loopline.adapters.kafka_log import Topics
    from loopline.adapters.kafka_worker import PartitionBatchApplier
    from tests.integration.test_dead_letters import Record

    topics = Topics("q.")
    messages = [*healthy("alice"), command("u-1", "task.create", T0, "acme", task_id="u", title="Unstorable"), *healthy("bob")]
    records = [Record(n, m["tenant"].encode(), json.dumps(m).encode()) for n, m in enumerate(messages)]
    report = PartitionBatchApplier(system.bus, topics).apply(topics.commands, 0, records)
    system.drain()

    assert [(o.step.message.ref, o.parked) for o in report.outcomes] == [("alice-1", False), ("u-1", True), ("bob-1", False)]
    assert sorted(row["tenant"] for row in task_rows(system)) == ["alice", "bob"]
    assert only_parked(system)["source"] == f"{topics.commands}:0:1"
    assert system.app.position(f"kafka:{topics.commands}:0") == 3


def test_an_action_at_the_end_of_the_calendar_is_parked_and_the_tenant_goes_on(system: System) -> None:
    publish(system, command("e-1", "task.create", T0, "acme", task_id="t", title="Last day"))
    append_raw(system, command("e-2", "action.record", "9999-12-31T00:00:00Z", "acme", task_id="t", action="send_email",
                               to="x@acme.example"))
    report = publish(system, command("e-3", "task.update", T0, "acme", task_id="t", notes="still here"), *healthy("bob"))

    assert [o.step.message.ref for o in report.parked] == ["e-2"]
    assert only_parked(system)["error"].startswith("OverflowError")
    assert task_row(system, "t", "acme")["actions"] == 0 and task_row(system, "t", "bob")["status"] == "executing"
    assert [o.accepted for o in report.outcomes if o.step.message.ref == "e-3"] == [True]
