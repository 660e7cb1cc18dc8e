"""Task controls (seed 003 §4) on the in-memory store: a paused task does no work of its own (its step is held, as a
tenant's pause holds it), resume hands the held step back, run-now takes its next step at the next tick."""

from __future__ import annotations

from loopline.domain import ids
from loopline.domain.task_control import TaskControl
from loopline.processors.application import UnitOfWork
from tests.unit.test_owner_answers import Gym, gym


def _control(world: Gym) -> TaskControl:
    control = UnitOfWork(world.app).get(ids.task_control_id("gym", "ann"), TaskControl)
    assert control is not None
    return control


def test_a_paused_task_sends_nothing_and_its_resume_hands_the_held_step_back() -> None:
    world = gym()
    paused = world.command("task.pause", 0, task_id="ann", reason="waiting on the owner's call")
    assert paused.accepted and paused.detail.startswith("paused task ann")
    world.tick(0.01)  # touch 1 was due: held on the task's pause
    assert world.sent() == [] and world.model.requests == []
    assert [work["timer"] for work in _control(world).held] == ["task_step"]
    assert world.command("task.pause", 0.02, task_id="ann").detail == "task ann is already paused; nothing changed"

    resumed = world.command("task.resume", 0.03, task_id="ann")
    assert resumed.detail == "resumed task ann: 1 held step(s) go on, under the same limits"
    world.tick(0.04)
    [touch] = world.sent()
    assert touch.details["touch"] == 1 and _control(world).held == []


def test_a_paused_task_asks_no_model_and_the_other_tasks_go_on() -> None:
    world = gym()
    assert world.command("task.create", 0, task_id="bob", title="Bring Bob back", task_type="churn_risk",
                         contact="bob@example.com", to_name="Bob", confidence=0.9).accepted
    assert world.command("task.pause", 0, task_id="ann").accepted
    world.tick(0.01)
    assert world.sent("ann") == [] and len(world.sent("bob")) == 1


def test_run_now_files_the_step_and_is_refused_while_the_task_is_paused() -> None:
    world = gym()
    assert world.command("task.pause", 0, task_id="ann").accepted
    refused = world.command("task.run_now", 0.01, task_id="ann")
    assert not refused.accepted and refused.detail.startswith("task_id: task ann is paused")
    assert world.command("task.resume", 0.02, task_id="ann").accepted

    ran = world.command("task.run_now", 0.02, task_id="ann", reason="the owner wants it out today")
    assert ran.detail == "task ann: its next step runs at the next tick, ahead of its schedule"
    world.tick(0.02)
    assert len(world.sent()) == 1
    [asked] = [e for e in world.app.events.get(ids.task_control_id("gym", "ann")) if isinstance(e, TaskControl.RunRequested)]
    assert (asked.reason, asked.by) == ("the owner wants it out today", "owner")


def test_a_closed_task_cannot_be_paused() -> None:
    world = gym()
    assert world.command("task.cancel", 0, task_id="ann", reason="moved away").accepted
    refused = world.command("task.pause", 0.01, task_id="ann")
    assert not refused.accepted and refused.detail.startswith("task_id: task ann is cancelled")


def test_run_now_brings_the_cadences_next_touch_forward() -> None:
    world = gym()
    world.tick(0.01)  # touch 1; touch 2 waits for the cadence, until day 3
    assert world.command("task.run_now", 1.1, task_id="ann").accepted
    world.tick(1.1)
    assert [touch.details["touch"] for touch in world.sent()] == [1, 2]


def test_run_now_keeps_the_send_limits() -> None:
    world = gym()
    world.tick(0.01)
    assert world.command("task.run_now", 0.02, task_id="ann").accepted
    world.tick(0.03)  # touch 2 is due now, but one message a day to a contact holds it to tomorrow
    assert len(world.sent()) == 1 and world.task().deferred["rule"] == "member_daily_limit"


def test_a_reply_to_a_paused_task_is_read_by_the_model_only_after_the_resume() -> None:
    world = gym()
    world.tick(0.01)
    asked = len(world.model.requests)
    assert world.command("task.pause", 0.5, task_id="ann").accepted
    world.reply(1, "Maybe next month?")
    assert len(world.model.requests) == asked and ["decision" in work for work in _control(world).held] == [True]

    assert world.command("task.resume", 1.1, task_id="ann").accepted
    assert len(world.model.requests) == asked + 1
