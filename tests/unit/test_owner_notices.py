"""The owner's tenant-level notices all pass the tenant's hold: sent when the owner is around, held in quiet hours or
while away, never the same words twice within 24 h."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from loopline.domain import ids
from loopline.domain.notification_hold import NotificationHold
from loopline.domain.proactive_run import ProactiveRun
from loopline.domain.timeutil import format_time
from loopline.processors.application import UnitOfWork
from loopline.processors.handlers.owner_notices import notification_hold, notify_owner, release_held
from tests.conftest import signal
from tests.unit.in_memory import InMemoryLoopline

NOON = datetime(2026, 5, 4, 12, 0, tzinfo=timezone.utc)  # the default tenant's zone is UTC


def test_a_notice_goes_out_once_is_held_at_night_and_comes_back_in_the_digest() -> None:
    loopline = InMemoryLoopline()
    uow = UnitOfWork(loopline.app)
    notification_hold(uow, "gym", NOON).seen(NOON)
    assert notify_owner(uow, "gym", "3 loops expired overnight", now=NOON) == "sent"
    assert notify_owner(uow, "gym", "3 loops expired overnight", now=NOON + timedelta(hours=2)) == "skipped"
    night = NOON + timedelta(hours=11)  # 23:00, inside the default quiet hours 22:00-07:00
    assert notify_owner(uow, "gym", "Maya replied", now=night) == "held"
    assert release_held(uow, "gym", now=night + timedelta(hours=1)) == []  # still quiet: held, never dropped
    morning = NOON + timedelta(hours=20)  # 08:00 the next day
    notification_hold(uow, "gym", morning).seen(morning)
    assert release_held(uow, "gym", now=morning) == ["Maya replied"]
    uow.commit()


def test_a_notice_the_night_held_for_an_owner_around_goes_out_when_quiet_hours_end() -> None:
    loopline = InMemoryLoopline()
    evening = NOON + timedelta(hours=8)  # 20:00
    loopline.publish(signal("seen", "user.seen", format_time(evening), tenant="gym"))
    loopline.tick(evening + timedelta(minutes=30))
    uow = UnitOfWork(loopline.app)
    assert notify_owner(uow, "gym", "Maya replied", now=NOON + timedelta(hours=11)) == "held"  # 23:00
    uow.commit()
    loopline.tick(evening + timedelta(hours=8, minutes=30))  # 04:30: the run's own pace, still quiet
    morning = NOON + timedelta(hours=19)  # 07:00, the end of the default quiet hours
    run = UnitOfWork(loopline.app).get(ids.run_id("gym"), ProactiveRun)
    assert run is not None and run.next_run_at == morning  # not its pace (12:30)
    loopline.tick(morning)
    assert [e.items for e in loopline.events() if isinstance(e, NotificationHold.DigestSent)] == [["Maya replied"]]
