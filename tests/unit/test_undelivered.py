"""A contact email the SMTP channel cannot take is parked, given back and told to the owner: the task and both
send ledgers stop counting it (issue 19, item 9)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta

import pytest

from loopline.domain import ids
from loopline.domain.send_ledger import ContactSends, TenantSends
from loopline.domain.task import Task
from loopline.domain.timeutil import format_time, parse_time
from loopline.processors.application import UnitOfWork
from loopline.processors.followers.delivery import is_contact_email
from loopline.processors.handlers.undelivered import give_back_undelivered
from tests.conftest import command
from tests.unit.fakes import UnsendableChannel
from tests.unit.in_memory import InMemoryLoopline

GYM = "gym"
ANN = "ann@example.com"
T0 = parse_time("2026-03-02T09:00:00Z")


@pytest.fixture
def loopline() -> Iterator[InMemoryLoopline]:
    running = InMemoryLoopline()
    running.delivery.add_channel(UnsendableChannel("smtp", accepts=is_contact_email))
    running.publish(command("cfg", "tenant.configure", format_time(T0), GYM, execution_mode="limited_auto"))
    running.publish(command(
        "c1", "task.create", format_time(T0), GYM, task_id="churn", title="churn_risk Ann", task_type="churn_risk",
        contact=ANN, to_name="Ann", confidence=0.95, draft={"subject": "We miss you", "body": "Hi Ann, see you soon."},
    ))
    running.tick(T0 + timedelta(hours=1))
    yield running
    running.close()


def test_an_email_delivery_cannot_send_is_parked_told_to_the_owner_and_no_longer_counted(loopline: InMemoryLoopline) -> None:
    uow = UnitOfWork(loopline.app)
    contact_sends = uow.get(ids.contact_sends_id(GYM, ANN), ContactSends)
    tenant_sends = uow.get(ids.tenant_sends_id(GYM), TenantSends)
    task = loopline.task(GYM, "churn")

    [parked] = loopline.delivery.ledger.parked()
    assert parked["channel"] == "smtp" and "linefeed" in parked["error"]
    [notice] = [m for _, m in loopline.owner.sent if m["kind"] == "send_undeliverable"]
    assert ANN in notice["text"] and "linefeed" in notice["text"]
    assert task.messages_used == 0
    assert contact_sends is not None and contact_sends.sent_within_week_of(T0 + timedelta(hours=2)) == 0
    assert tenant_sends is not None and tenant_sends.sent_on(T0.date()) == 0


def test_an_undeliverable_email_met_again_is_given_back_only_once(loopline: InMemoryLoopline) -> None:
    [parked] = loopline.delivery.ledger.parked()
    before = len(loopline.events())

    give_back_undelivered(loopline.app, key=parked["key"], reason="met again", now=T0 + timedelta(hours=2))

    assert len(loopline.events()) == before
    returned = [e for e in loopline.events() if isinstance(e, Task.SendReturned)]
    assert [(e.to, e.messages_used) for e in returned] == [(ANN, 0)]
