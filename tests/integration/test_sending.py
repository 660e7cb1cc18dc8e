"""`send_to_contact` on the real event stores: a send is emailed and counted in the same save, a send
over a limit records nothing, and two sends racing to one contact cannot both commit."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from eventsourcing.persistence import IntegrityError

from loopline.domain import ids
from loopline.domain.send_ledger import ContactSends, TenantSends
from loopline.domain.task import Task
from loopline.domain.tenant import TenantSettings
from loopline.domain.timeutil import parse_time
from loopline.processors.application import UnitOfWork
from loopline.processors.followers.delivery import is_contact_email
from loopline.processors.handlers.sending import Deferred, Sent, send_to_contact
from loopline.runtime.system import System
from tests.conftest import command, publish
from tests.integration.helpers import trail
from tests.unit.fakes import UnsendableChannel

TENANT = "gym"
BOB = "bob@example.com"
AT = "2026-03-02T09:00:00Z"
NOW = parse_time(AT)


def outbox_lines(home: Path) -> list[dict[str, Any]]:
    path = home / "outbox.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def outbox_emails(home: Path) -> list[dict[str, Any]]:
    return [line for line in outbox_lines(home) if line.get("kind") == "send_email"]


def create_tasks(system: System, *refs: str) -> None:
    """Follow-through tasks (an assistant type sends nothing by itself): no message budget of their own."""
    publish(system, *(
        command(f"c-{ref}", "task.create", AT, tenant=TENANT, task_id=ref, title=f"Check in {ref}", contact=BOB,
                task_type="meeting_scheduling")
        for ref in refs
    ))


def task(uow: UnitOfWork, ref: str) -> Task:
    loaded = uow.get(ids.task_id(TENANT, ref), Task)
    assert loaded is not None
    return loaded


def email(subject: str) -> dict[str, Any]:
    return {"to": BOB, "subject": subject, "body": "Hi Bob, we miss you at the gym.", "decided_by": "test"}


def test_a_send_is_emailed_and_counted_in_both_ledgers(system: System, home: Path) -> None:
    create_tasks(system, "t1")
    uow = UnitOfWork(system.app)

    result = send_to_contact(uow, task(uow, "t1"), details=email("We miss you"), now=NOW, settings=TenantSettings())
    uow.commit()
    system.drain()

    assert result == Sent(BOB)
    assert [(line["to"], line["details"]["subject"]) for line in outbox_emails(home)] == [(BOB, "We miss you")]
    check = UnitOfWork(system.app)
    contact_sends = check.get(ids.contact_sends_id(TENANT, "Bob@Example.com"), ContactSends)
    tenant_sends = check.get(ids.tenant_sends_id(TENANT), TenantSends)
    assert contact_sends is not None and contact_sends.sent_at == [NOW]
    assert tenant_sends is not None and tenant_sends.per_day == {"2026-03-02": 1}


def test_a_send_over_the_weekly_limit_is_deferred_and_nothing_is_recorded(system: System, home: Path) -> None:
    create_tasks(system, "t1", "t2")
    settings = TenantSettings(member_weekly_limit=1)
    first = UnitOfWork(system.app)
    send_to_contact(first, task(first, "t1"), details=email("First"), now=NOW, settings=settings)
    first.commit()

    second = UnitOfWork(system.app)
    other = task(second, "t2")
    result = send_to_contact(second, other, details=email("Second"), now=NOW + timedelta(days=2), settings=settings)
    second.commit()
    system.drain()

    assert isinstance(result, Deferred)
    assert (result.deferral.rule, result.deferral.until) == ("member_weekly_limit", NOW + timedelta(days=7))
    assert other.actions_count == 0
    assert [line["details"]["subject"] for line in outbox_emails(home)] == ["First"]


def test_the_second_of_two_racing_sends_meets_a_version_conflict_then_the_limit(system: System, home: Path) -> None:
    create_tasks(system, "t1", "t2")
    settings = TenantSettings(member_weekly_limit=1)
    first, second = UnitOfWork(system.app), UnitOfWork(system.app)
    # Both read the contact's ledger before either commits: each alone is within the limit.
    assert send_to_contact(first, task(first, "t1"), details=email("From t1"), now=NOW, settings=settings) == Sent(BOB)
    assert send_to_contact(second, task(second, "t2"), details=email("From t2"), now=NOW, settings=settings) == Sent(BOB)

    first.commit()
    with pytest.raises(IntegrityError):
        second.commit()

    redo = UnitOfWork(system.app)
    result = send_to_contact(redo, task(redo, "t2"), details=email("From t2"), now=NOW, settings=settings)
    redo.commit()
    system.drain()
    assert isinstance(result, Deferred) and result.deferral.rule == "member_weekly_limit"
    assert [line["details"]["subject"] for line in outbox_emails(home)] == ["From t1"]


def test_the_daily_limit_counts_sends_to_every_contact_of_the_tenant(system: System, home: Path) -> None:
    refs = [f"t{n}" for n in range(3)]
    publish(system, *(
        command(f"c-{ref}", "task.create", AT, tenant=TENANT, task_id=ref, title="Check in", contact=f"{ref}@example.com",
                task_type="meeting_scheduling")
        for ref in refs
    ))
    settings = TenantSettings(daily_send_limit=2, timezone="Europe/London")
    results = []
    for ref in refs:
        uow = UnitOfWork(system.app)
        details = {**email(f"Hello {ref}"), "to": f"{ref}@example.com"}
        results.append(send_to_contact(uow, task(uow, ref), details=details, now=NOW, settings=settings))
        uow.commit()
    system.drain()

    assert results[:2] == [Sent("t0@example.com"), Sent("t1@example.com")]
    assert isinstance(results[2], Deferred)
    assert results[2].deferral.until == parse_time("2026-03-03T00:00:00Z")  # midnight in London (GMT in March)
    assert len(outbox_emails(home)) == 2


def test_a_task_whose_message_budget_is_spent_sends_nothing(system: System) -> None:
    create_tasks(system, "t1")
    uow = UnitOfWork(system.app)
    acting = task(uow, "t1")
    acting.plan_outreach(
        budget_messages=0, budget_turns=6, ends_at=None, cadence="standard", intervals=[3, 5], tones=["friendly"],
        on_exhaustion="cancel", dormant_check_days=None, dormant_max_days=None, draft=None, contact_name="Bob",
        now=NOW,
    )

    result = send_to_contact(uow, acting, details=email("Hi"), now=NOW, settings=TenantSettings())

    assert isinstance(result, Deferred)
    assert (result.deferral.rule, result.deferral.until) == ("task_message_budget", None)
    assert acting.actions_count == 0


def test_an_email_smtp_cannot_take_is_parked_given_back_and_in_the_tasks_trail(system: System, home: Path) -> None:
    system.delivery.add_channel(UnsendableChannel("smtp", accepts=is_contact_email))
    create_tasks(system, "t1")
    uow = UnitOfWork(system.app)
    send_to_contact(uow, task(uow, "t1"), details=email("We miss you"), now=NOW, settings=TenantSettings())
    uow.commit()
    system.drain()

    [parked] = system.delivery.ledger.parked()
    assert (parked["channel"], parked["to"]) == ("smtp", BOB)
    check = UnitOfWork(system.app)
    contact_sends = check.get(ids.contact_sends_id(TENANT, BOB), ContactSends)
    tenant_sends = check.get(ids.tenant_sends_id(TENANT), TenantSends)
    assert contact_sends is not None and contact_sends.sent_at == []
    assert tenant_sends is not None and tenant_sends.sent_on(NOW.date()) == 0
    [returned] = [row for row in trail(system, "t1", TENANT) if row["event"] == "Task.SendReturned"]
    assert returned["summary"] == f"email to {BOB} never left: not counted as sent" and "linefeed" in returned["reason"]
    assert [line["kind"] for line in outbox_lines(home) if line["to"] == "user"][-1] == "send_undeliverable"
