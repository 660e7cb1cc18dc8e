"""Pause and stop (seed 002 §7.6, §7.14; issue 19 item 3): while a tenant or the whole system is paused nothing
is sent and no model is asked; what falls due is held, not dropped, and resuming sends it in order under the same
limits."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta

import pytest
from eventsourcing.persistence import IntegrityError

from loopline.domain.pause import SystemSwitch
from loopline.domain.task import Task
from loopline.domain.tenant import Tenant
from loopline.domain.timeutil import format_time, parse_time
from loopline.processors.application import UnitOfWork
from loopline.processors.handlers.answers import apply
from loopline.processors.handlers.outreach import step_task
from loopline.processors.handlers.pausing import pause_tenant_now
from loopline.processors.messages import DecisionReturned, Held, Pending
from tests.conftest import ANY_HOUR, command, signal
from tests.unit.in_memory import InMemoryLoopline

GYM, SPA = "gym", "spa"
T0 = parse_time("2026-03-02T09:00:00Z")
HOUR = timedelta(hours=1)


@pytest.fixture
def loopline() -> Iterator[InMemoryLoopline]:
    running = InMemoryLoopline()
    for tenant in (GYM, SPA):
        running.publish(command(f"cfg-{tenant}", "tenant.configure", format_time(T0), tenant,
                                execution_mode="limited_auto", **ANY_HOUR))
    yield running
    running.close()


def at(offset: timedelta) -> str:
    return format_time(T0 + offset)


def create(loopline: InMemoryLoopline, ref: str, contact: str, tenant: str = GYM, offset: timedelta = HOUR) -> None:
    loopline.publish(command(
        f"c-{ref}", "task.create", at(offset), tenant, task_id=ref, title=f"Win back {ref}", task_type="churn_risk",
        contact=contact, to_name=ref, confidence=0.95, draft={"subject": f"We miss you, {ref}", "body": "Come back!"},
    ))


def pause(loopline: InMemoryLoopline, ref: str, type_: str, offset: timedelta, tenant: str = GYM) -> list[str]:
    outcomes = loopline.publish(command(ref, type_, at(offset), tenant, reason=f"{type_} for the test"))
    return [outcome.detail for outcome in outcomes]


def sent_to(loopline: InMemoryLoopline) -> list[str]:
    return [message["to"] for _, message in loopline.emails()]


def test_a_paused_tenant_sends_nothing_and_the_resume_sends_everything_held(loopline: InMemoryLoopline) -> None:
    pause(loopline, "p", "tenant.pause", timedelta(0))
    for n, name in enumerate(("ann", "ben", "cat")):
        create(loopline, name, f"{name}@example.com", offset=HOUR + n * timedelta(minutes=1))
    loopline.tick(T0 + 2 * HOUR)
    loopline.tick(T0 + 30 * HOUR)

    assert sent_to(loopline) == []
    held = [event.work["target"] for event in loopline.events() if isinstance(event, Tenant.WorkHeld)]
    assert len(held) == 3

    [said] = pause(loopline, "r", "tenant.resume", 40 * HOUR)
    loopline.tick(T0 + 40 * HOUR)

    assert said == "resumed tenant gym: 3 held step(s) go on, under the same limits"
    assert sorted(sent_to(loopline)) == ["ann@example.com", "ben@example.com", "cat@example.com"]
    assert all(parse_time(message["at"]) >= T0 + 40 * HOUR for _, message in loopline.emails())


def test_resuming_sends_under_the_same_limits(loopline: InMemoryLoopline) -> None:
    loopline.publish(command("limit", "tenant.configure", at(timedelta(0)), GYM, daily_send_limit=1))
    pause(loopline, "p", "tenant.pause", timedelta(0))
    create(loopline, "ann", "ann@example.com")
    create(loopline, "ben", "ben@example.com")
    loopline.tick(T0 + 2 * HOUR)

    pause(loopline, "r", "tenant.resume", 3 * HOUR)
    loopline.tick(T0 + 3 * HOUR)
    assert len(sent_to(loopline)) == 1

    loopline.tick(T0 + 24 * HOUR)
    assert sorted(sent_to(loopline)) == ["ann@example.com", "ben@example.com"]


def test_a_reply_while_paused_asks_no_model_until_the_resume(loopline: InMemoryLoopline) -> None:
    create(loopline, "ann", "ann@example.com")
    loopline.tick(T0 + 2 * HOUR)
    assert sent_to(loopline) == ["ann@example.com"]

    pause(loopline, "p", "tenant.pause", 3 * HOUR)
    loopline.publish(signal("r1", "email.received", at(4 * HOUR), GYM, sender="ann@example.com",
                            subject="Re: We miss you, ann", body="Maybe, what time are classes?"))

    assert loopline.model.requests == []
    [held] = [event for event in loopline.events() if isinstance(event, Task.DecisionPaused)]
    assert "tenant gym is paused since" in held.reason

    pause(loopline, "r", "tenant.resume", 5 * HOUR)

    assert [request.point for request in loopline.model.requests] == ["evaluate_reply"]
    assert sent_to(loopline) == ["ann@example.com", "ann@example.com"]


def test_the_owners_reply_while_paused_is_refused_with_what_to_do(loopline: InMemoryLoopline) -> None:
    create(loopline, "ann", "ann@example.com")
    loopline.tick(T0 + 2 * HOUR)
    pause(loopline, "p", "tenant.pause", 3 * HOUR)

    [outcome] = loopline.publish(command("o1", "task.reply", at(4 * HOUR), GYM, task_id="ann", body="See you!"))

    assert not outcome.accepted
    assert "tenant gym is paused since" in outcome.detail and "send it again once it resumes" in outcome.detail
    assert sent_to(loopline) == ["ann@example.com"]


def test_a_reminder_due_while_paused_goes_out_at_the_resume() -> None:
    loopline = InMemoryLoopline()
    loopline.publish(command("c", "task.create", "2026-03-13T10:00:00Z", "acme", task_id="nda", title="NDA"),
                     command("a", "action.record", "2026-03-13T10:00:00Z", "acme", task_id="nda",
                             action="send_contract", to="legal@acme.com", resource_id="doc-1"),
                     command("p", "tenant.pause", "2026-03-14T10:00:00Z", "acme", reason="audit"))
    loopline.tick(parse_time("2026-03-21T10:00:00Z"))
    assert loopline.emails() == []

    loopline.publish(command("r", "tenant.resume", "2026-03-22T10:00:00Z", "acme", reason="audit done"))
    loopline.tick(parse_time("2026-03-22T10:00:00Z"))

    sent = [(message["kind"], message["to"]) for _, message in loopline.emails()]
    assert sent == [("send_reminder", "legal@acme.com")]
    loopline.close()


def test_the_system_pause_holds_every_tenant_and_a_tenants_own_pause_outlasts_it(loopline: InMemoryLoopline) -> None:
    pause(loopline, "sp", "system.pause", timedelta(0))
    create(loopline, "ann", "ann@example.com", tenant=GYM)
    create(loopline, "bea", "bea@example.com", tenant=SPA)
    loopline.tick(T0 + 2 * HOUR)
    pause(loopline, "tp", "tenant.pause", 2 * HOUR, tenant=SPA)
    assert sent_to(loopline) == []

    [said] = pause(loopline, "sr", "system.resume", 3 * HOUR)
    loopline.tick(T0 + 3 * HOUR)
    assert said == "resumed Loopline: 2 held step(s) go on, under the same limits"
    assert sent_to(loopline) == ["ann@example.com"]

    pause(loopline, "tr", "tenant.resume", 4 * HOUR, tenant=SPA)
    loopline.tick(T0 + 4 * HOUR)
    assert sent_to(loopline) == ["ann@example.com", "bea@example.com"]
    assert [type(e).__name__ for e in loopline.events() if isinstance(e, SystemSwitch.Event)] == [
        "Created", "Paused", "WorkHeld", "WorkHeld", "Resumed"]


def test_pausing_twice_or_resuming_a_running_tenant_changes_nothing(loopline: InMemoryLoopline) -> None:
    assert pause(loopline, "r0", "tenant.resume", timedelta(0)) == ["tenant gym is not paused; nothing changed"]
    assert pause(loopline, "s0", "system.resume", timedelta(0)) == ["Loopline is not paused; nothing changed"]
    assert not any(isinstance(event, SystemSwitch.Event) for event in loopline.events())
    pause(loopline, "p1", "tenant.pause", timedelta(0))
    assert pause(loopline, "p2", "tenant.pause", HOUR) == ["tenant gym is already paused; nothing changed"]


def test_a_send_racing_a_pause_on_another_worker_is_redone_and_then_held(loopline: InMemoryLoopline) -> None:
    create(loopline, "ann", "ann@example.com")
    sender = UnitOfWork(loopline.app)
    task = sender.get(loopline.task(GYM, "ann").id, Task)
    assert task is not None and "sent touch 1" in str(step_task(sender, task, T0 + 2 * HOUR))

    pauser = UnitOfWork(loopline.app)
    assert pause_tenant_now(pauser, GYM, reason="stop", by="owner", now=T0 + 2 * HOUR)
    pauser.commit()

    with pytest.raises(IntegrityError):
        sender.commit()


def test_a_request_held_by_a_pause_that_ended_meanwhile_is_asked_at_once(loopline: InMemoryLoopline) -> None:
    create(loopline, "ann", "ann@example.com")
    uow = UnitOfWork(loopline.app)
    task = uow.get(loopline.task(GYM, "ann").id, Task)
    assert task is not None
    task.request_decision(request_ref="ann/reply", point="evaluate_reply", purpose="reply", touch=1, tone=None,
                          reason="Ann replied", now=T0 + 2 * HOUR)
    uow.commit()
    # The agent read the request while the tenant was paused; the resume was recorded before its answer.
    item = Pending(task_id=task.id, task_ref="ann", tenant=GYM, request_ref="ann/reply", attempt=1,
                   point="evaluate_reply", purpose="reply", touch=1, loop_ref=None, requested_at=T0 + 2 * HOUR,
                   reply_subject=None, request=None)
    uow = UnitOfWork(loopline.app)
    said = apply(uow, DecisionReturned(item, Held("tenant gym is paused")))
    uow.commit()

    assert said == "'Win back ann': the pause ended before the model was asked; asking it now"
    assert [type(e).__name__ for e in loopline.events()][-2:] == ["DecisionPaused", "DecisionResumed"]
    loopline.drain()
    assert [request.point for request in loopline.model.requests] == ["evaluate_reply"]
