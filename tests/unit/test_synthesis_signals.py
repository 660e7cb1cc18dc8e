"""The synthesis context's signal sections on the in-memory store: the signals received since the last synthesis run
(read from the recorded log, not noted on the signal path) and the calendar events ahead seen in calendar.event
signals."""

from __future__ import annotations

from datetime import timedelta

from loopline.domain.proactive_run import ProactiveRun
from loopline.domain.timeutil import format_time
from tests.conftest import signal
from tests.unit.test_synthesis_runs import RUN_AT, T, ScriptedBrain, run_events, tenant_with_a_task, use

SECOND_RUN = RUN_AT + timedelta(hours=6)


def calendar(ref: str, event_id: str, starts_at: str, *, tenant: str = T) -> dict[str, object]:
    return signal(ref, "calendar.event", format_time(RUN_AT + timedelta(hours=1)), tenant, event_type="event_updated",
                  event_id=event_id, starts_at=starts_at)


def test_a_meeting_tomorrow_is_upcoming_in_the_next_run_and_its_signal_is_new_while_older_ones_are_not():
    brain = ScriptedBrain([[use("schedule_next_run", in_hours=6, reason="later today")]] * 2)
    loopline = tenant_with_a_task(brain)
    loopline.publish(signal("before", "webhook.received", format_time(RUN_AT - timedelta(minutes=5)), T, source="shop", trigger_name="order"))
    loopline.tick(RUN_AT)
    assert "signals/before" in brain.asked[0].prompt.messages[0]["content"]
    tomorrow = SECOND_RUN + timedelta(days=1)
    loopline.publish(calendar("cal-tomorrow", "board-meeting", format_time(tomorrow)))
    loopline.publish(calendar("cal-old", "last-week-sync", format_time(RUN_AT - timedelta(days=7))))
    loopline.publish(calendar("cal-other", "not-ours", format_time(tomorrow), tenant="someone-else"))
    loopline.tick(SECOND_RUN)
    changed = brain.asked[1].prompt.messages[0]["content"].split("Everything you know now:")[0]
    assert f"upcoming_events/board-meeting: event board-meeting starts {tomorrow.day} " in changed
    assert "signals/cal-tomorrow: calendar.event" in changed and "signals/cal-old: calendar.event" in changed
    assert "signals/before:" not in changed and "cal-other" not in changed
    second = run_events(loopline, ProactiveRun.ContextSnapshotted)[1].snapshot
    assert list(second["upcoming_events"]) == ["board-meeting"]
    assert sorted(second["signals"]) == ["cal-old", "cal-tomorrow"]


def test_an_event_seen_before_stays_upcoming_until_it_starts():
    brain = ScriptedBrain([[use("schedule_next_run", in_hours=6, reason="later")]] * 3)
    loopline = tenant_with_a_task(brain)
    starts = SECOND_RUN + timedelta(hours=3)
    loopline.publish(calendar("cal-soon", "standup", format_time(starts)))
    loopline.tick(RUN_AT)
    loopline.publish(signal("push", "webhook.received", format_time(RUN_AT + timedelta(hours=2)), T, source="shop", trigger_name="order"))
    loopline.tick(SECOND_RUN)
    loopline.publish(signal("push-2", "webhook.received", format_time(SECOND_RUN + timedelta(hours=2)), T, source="shop", trigger_name="order"))
    loopline.tick(SECOND_RUN + timedelta(hours=6))
    snapshots = [event.snapshot for event in run_events(loopline, ProactiveRun.ContextSnapshotted)]
    assert [list(snapshot.get("upcoming_events", {})) for snapshot in snapshots] == [["standup"], ["standup"], []]
