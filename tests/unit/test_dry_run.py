"""A tenant in dry run (`tenant.configure {dry_run: true}`): every step runs and is recorded, the limits count, and
no email reaches a contact; delivery marks each `dry_run` in its ledger."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import date, timedelta

import pytest

from loopline.adapters.messages import InvalidMessage, parse_message
from loopline.domain import ids
from loopline.domain.send_ledger import TenantSends
from loopline.domain.task import Task
from loopline.domain.timeutil import format_time, parse_time
from loopline.processors.application import UnitOfWork
from tests.conftest import command
from tests.unit.in_memory import InMemoryLoopline

GYM = "gym"
T0 = parse_time("2026-03-02T14:00:00Z")


@pytest.fixture
def loopline() -> Iterator[InMemoryLoopline]:
    running = InMemoryLoopline()
    running.publish(command("cfg", "tenant.configure", format_time(T0), GYM, execution_mode="limited_auto", dry_run=True))
    yield running
    running.close()


def create(loopline: InMemoryLoopline, ref: str) -> None:
    loopline.publish(command(
        f"c-{ref}", "task.create", format_time(T0), GYM, task_id=ref, title=f"win back {ref}", task_type="churn_risk",
        contact=f"{ref}@example.com", to_name=ref, confidence=0.95, draft={"subject": "We miss you", "body": "Hi!"},
    ))


def sends(loopline: InMemoryLoopline, ref: str) -> list[Task.ActionRecorded]:
    task = loopline.task(GYM, ref)
    return [e for e in loopline.app.events.get(task.id) if isinstance(e, Task.ActionRecorded) and e.sent_by_loopline]


def test_a_dry_run_tenant_records_its_sends_and_counts_them_but_delivers_nothing(loopline: InMemoryLoopline) -> None:
    create(loopline, "ann")
    loopline.tick(T0 + timedelta(hours=1))

    [send] = sends(loopline, "ann")
    assert send.details["dry_run"] is True and send.summary.startswith("[dry run, not delivered] Emailed ann@example.com")
    assert loopline.emails() == []
    assert {row["status"] for row in loopline.delivery.ledger.rows.values()
            if row["message"].get("kind") == "send_email"} == {"dry_run"}
    tenant_sends = UnitOfWork(loopline.app).get(ids.tenant_sends_id(GYM), TenantSends)
    assert tenant_sends is not None and tenant_sends.sent_on(date(2026, 3, 2)) == 1


def test_turning_dry_run_off_lets_the_next_send_go_out(loopline: InMemoryLoopline) -> None:
    create(loopline, "ann")
    loopline.tick(T0 + timedelta(hours=1))
    loopline.publish(command("live", "tenant.configure", format_time(T0 + timedelta(hours=2)), GYM, dry_run=False))
    create(loopline, "bob")
    loopline.tick(T0 + timedelta(hours=3))

    assert [message["to"] for _, message in loopline.emails()] == ["bob@example.com"]


def test_dry_run_that_is_not_true_or_false_is_refused_naming_the_field() -> None:
    with pytest.raises(InvalidMessage, match="data.dry_run: Input should be a valid boolean"):
        parse_message(json.dumps(command("bad", "tenant.configure", format_time(T0), GYM, dry_run="yes")))
