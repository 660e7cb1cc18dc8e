"""What the notification hold sent (a notice, the return digest) reaches the owner once, by every channel that takes
it, even when delivery dies before recording how far it read."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from loopline.domain.timeutil import format_time
from loopline.processors.application import UnitOfWork
from loopline.processors.followers.delivery import Delivery, is_owner_email
from loopline.processors.handlers.owner_notices import notification_hold, notify_owner, release_held
from tests.conftest import command
from tests.unit.fakes import FakeChannel, FakeClock, FakeLedger
from tests.unit.in_memory import InMemoryLoopline

NOON = datetime(2026, 5, 4, 12, 0, tzinfo=timezone.utc)


def _sent_and_digested(loopline: InMemoryLoopline) -> None:
    loopline.publish(command("cfg", "tenant.configure", format_time(NOON), "gym", owner_email="sam@gym.example"))
    uow = UnitOfWork(loopline.app)
    notification_hold(uow, "gym", NOON).seen(NOON)
    notify_owner(uow, "gym", "3 loops expired overnight", now=NOON)
    night = NOON + timedelta(hours=11)
    notify_owner(uow, "gym", "Maya replied", now=night)
    notify_owner(uow, "gym", "Omar booked a trial", now=night)
    morning = NOON + timedelta(hours=20)
    notification_hold(uow, "gym", morning).seen(morning)
    release_held(uow, "gym", now=morning)
    uow.commit()


def test_a_sent_notice_and_the_return_digest_are_emailed_to_the_owner_once(monkeypatch: pytest.MonkeyPatch) -> None:
    loopline = InMemoryLoopline()
    _sent_and_digested(loopline)
    ledger, first, again = FakeLedger(), FakeChannel("smtp", accepts=is_owner_email), FakeChannel("smtp")
    with monkeypatch.context() as crash:  # the process dies after sending, before recording its position
        crash.setattr(loopline.app.process_recorder, "insert_tracking", lambda tracking: None)
        Delivery(loopline.app, ledger, [first], clock=FakeClock()).run_once()
    Delivery(loopline.app, ledger, [again], clock=FakeClock()).run_once()

    assert [(m["kind"], m["owner_email"], m["text"]) for _, m in first.sent] == [
        ("brain_notice", "sam@gym.example", "3 loops expired overnight"),
        ("return_digest", "sam@gym.example", "- Omar booked a trial\n- Maya replied"),
    ]
    assert again.sent == []


def test_without_an_owner_email_the_notices_still_reach_the_outbox() -> None:
    loopline = InMemoryLoopline()
    uow = UnitOfWork(loopline.app)
    notification_hold(uow, "gym", NOON).seen(NOON)
    notify_owner(uow, "gym", "3 loops expired overnight", now=NOON)
    uow.commit()
    loopline.drain()

    assert [(m["to"], m["kind"], m["title"]) for _, m in loopline.owner.sent] == [("user", "brain_notice", "notice")]
    assert loopline.smtp.sent == []
