"""Self-scheduling (time, condition, both: first wins) and stalled-task detection."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from loopline.adapters.messages import InvalidMessage, parse_message
from loopline.domain import ids
from loopline.projections.proactive_runs import stale_runs
from loopline.runtime.system import System
from tests.conftest import command, publish, signal
from tests.integration.helpers import (
    CREATE_TASK,
    RAHUL,
    SEND_EMAIL,
    TENANT,
    loop_row,
    outbox,
    run_row,
    task_row,
    tick,
    trail,
)

RAHUL_WRITES = signal("gmail-9", "email.received", "2026-03-14T08:00:00Z", sender=RAHUL)


def wake(ref: str, sent: str, **data) -> dict:
    message = command(ref, "task.wake", sent, task_id="task_abc")
    message["data"].update(data)  # `at` here is the wake-up time, not the message's
    return message


def wakes(system: System) -> list[dict]:
    """The task's self-scheduled wake-ups (not the proactive run's escalation wake-ups of an idle task)."""
    return [
        row for row in trail(system, "task_abc")
        if row["event"] == "Task.WokenUp" and row["payload"]["cause"] != "escalation"
    ]


def test_a_time_wakeup_wakes_the_waiting_task_at_its_time_once(system: System, home: Path) -> None:
    publish(system, CREATE_TASK, SEND_EMAIL, wake("w1", "2026-03-13T11:00:00Z", at="2026-03-15T09:00:00Z", reason="check in"))
    assert task_row(system, "task_abc")["status"] == "waiting"

    tick(system, "2026-03-15T08:59:00Z")
    assert wakes(system) == []

    tick(system, "2026-03-15T09:00:00Z")
    tick(system, "2026-03-15T10:00:00Z")
    (woken,) = wakes(system)
    assert woken["payload"]["cause"] == "time" and woken["reason"].startswith("wake-up time 2026-03-15T09:00:00Z")
    assert task_row(system, "task_abc")["status"] == "executing"
    [told] = [line for line in outbox(home) if line["kind"] == "task_wakeup"]  # the agent runtime is told, once
    assert (told["to"], told["tenant"], told["task_id"], told["cause"]) == ("agent", TENANT, "task_abc", "time")


def test_in_three_days_unless_the_contact_replies_first_the_reply_wins(system: System) -> None:
    publish(system, CREATE_TASK, wake(
        "w1", "2026-03-13T11:00:00Z", wake_id="rahul", at="2026-03-16T10:00:00Z",
        when={"channel": "email", "watch": {"sender": RAHUL}}, reason="follow up on the proposal",
    ))
    publish(system, RAHUL_WRITES)
    tick(system, "2026-03-16T10:00:00Z")
    tick(system, "2026-03-17T10:00:00Z")

    (woken,) = wakes(system)
    assert woken["payload"]["cause"] == "signal" and "gmail-9" in woken["reason"]
    assert loop_row(system, "rahul/condition")["resolved_by"] == "signal_match"


def test_in_three_days_unless_the_contact_replies_first_the_time_wins(system: System) -> None:
    publish(system, CREATE_TASK, wake(
        "w1", "2026-03-13T11:00:00Z", wake_id="rahul", at="2026-03-16T10:00:00Z",
        when={"channel": "email", "watch": {"sender": RAHUL}},
    ))
    tick(system, "2026-03-16T10:00:00Z")
    publish(system, signal("gmail-late", "email.received", "2026-03-16T12:00:00Z", sender=RAHUL))
    tick(system, "2026-03-17T10:00:00Z")

    (woken,) = wakes(system)
    assert woken["payload"]["cause"] == "time"
    condition = loop_row(system, "rahul/condition")
    assert (condition["resolved_by"], condition["resolved_at"]) == ("expired", "2026-03-16T10:00:00Z")
    assert task_row(system, "task_abc")["inbox"] == 0  # the late reply no longer matched anything
    assert task_row(system, "task_abc")["notifications"] == 0  # the condition's deadline only woke the task


def test_a_condition_only_wakeup_wakes_on_the_signal(system: System) -> None:
    publish(system, CREATE_TASK, wake("w1", "2026-03-13T11:00:00Z", when={"channel": "email", "watch": {"sender": RAHUL}}))
    publish(system, RAHUL_WRITES)
    (woken,) = wakes(system)
    assert woken["payload"]["cause"] == "signal"


def test_a_wakeup_without_a_time_or_a_condition_is_rejected_with_the_reason() -> None:
    with pytest.raises(InvalidMessage, match="data: give `at` .*, `when` .* or both"):
        parse_message(json.dumps(wake("w1", "2026-03-13T11:00:00Z")))


def test_a_task_idle_for_its_types_stall_period_is_flagged_once_for_the_proactive_run(system: System) -> None:
    publish(system, CREATE_TASK, SEND_EMAIL)  # meeting_scheduling: stalled after 3 days idle with nothing pending
    publish(system, signal(  # the reply closes the task's only loop: from here on it waits for nothing
        "gmail-1", "email.received", "2026-03-14T09:00:00Z", sender=RAHUL, thread_id="gmail_thread_xyz"
    ))
    tick(system, "2026-03-16T12:00:00Z")
    assert task_row(system, "task_abc")["stalled_since"] is None  # only 2 days idle

    tick(system, "2026-03-17T09:00:00Z")
    assert task_row(system, "task_abc")["stalled_since"] == "2026-03-17T09:00:00Z"
    assert run_row(system)["pending_escalations"] == 1  # flagged for the tenant's proactive run

    tick(system, "2026-03-25T09:00:00Z")  # the run wakes the task with it; later checks (03-20, 03-23) do not flag it again
    flagged = [row for row in trail(system, "task_abc") if row["event"] == "Task.StallFlagged"]
    assert len(flagged) == 1 and flagged[0]["at"] == "2026-03-17T09:00:00Z"
    [told] = [row for row in trail(system, "task_abc") if row["event"] == "Task.UserNotified"]
    assert (told["reason"], told["at"]) == ("stalled", "2026-03-17T09:00:00Z")  # told by the check that flagged it
    assert "nothing has happened for 3 days" in told["summary"]
    woken = [row for row in trail(system, "task_abc") if row["event"] == "Task.WokenUp"]
    assert [(row["payload"]["cause"], row["reason"]) for row in woken] == [("escalation", "stalled: no activity for 3 days")]
    assert task_row(system, "task_abc")["stalled_since"] == "2026-03-17T09:00:00Z"  # the nudge is not activity

    publish(system, command("n1", "task.update", "2026-03-18T10:00:00Z", task_id="task_abc", notes="back on it"))
    assert task_row(system, "task_abc")["stalled_since"] is None


def test_a_task_waiting_on_a_loop_or_a_wakeup_is_not_stalled(system: System) -> None:
    publish(system, CREATE_TASK, SEND_EMAIL, wake("w1", "2026-03-13T10:00:00Z", at="2026-03-30T09:00:00Z"))
    publish(system, signal("gmail-1", "email.received", "2026-03-14T09:00:00Z", sender=RAHUL, thread_id="gmail_thread_xyz"))
    tick(system, "2026-03-25T09:00:00Z")
    assert [row for row in trail(system, "task_abc") if row["event"] == "Task.StallFlagged"] == []


def test_the_supervisor_finds_a_run_only_once_it_is_more_than_48_hours_past_its_wake_up(system: System) -> None:
    publish(system, CREATE_TASK)
    wake_up = datetime.fromisoformat(run_row(system)["next_run_at"].replace("Z", "+00:00"))
    stale = stale_runs(system.projections.engine)
    assert stale(wake_up + timedelta(hours=48)) == []
    assert stale(wake_up + timedelta(hours=49)) == [ids.run_id(TENANT)]
