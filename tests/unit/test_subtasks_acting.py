"""Subtasks Loopline works itself (seed 002 §14.3, §17.2): the parent's budget caps the emails of the whole family,
and a parent with the owner holds its subtasks' steps until the owner answers."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest

from loopline.domain.task import Task
from loopline.domain.timeutil import format_time, parse_time
from tests.conftest import ANY_HOUR, command
from tests.unit.in_memory import InMemoryLoopline

GYM = "gym"
T0 = parse_time("2026-03-02T09:00:00Z")


@pytest.fixture
def loopline() -> Iterator[InMemoryLoopline]:
    running = InMemoryLoopline()
    running.publish(command("cfg", "tenant.configure", format_time(T0), GYM, execution_mode="limited_auto", **ANY_HOUR))
    yield running
    running.close()


def acting(name: str) -> dict[str, Any]:
    return {"task_type": "lead_followup", "contact": f"{name}@example.com", "to_name": name.title(), "confidence": 0.95,
            "draft": {"subject": f"Hi {name}", "body": "Your free class is waiting."}}


def publish(loopline: InMemoryLoopline, ref: str, type_: str, **data: Any) -> Any:
    [outcome] = loopline.publish(command(ref, type_, format_time(T0), GYM, **data))
    assert outcome.accepted, outcome.detail
    return outcome


def plan(loopline: InMemoryLoopline, *children: str) -> None:
    publish(loopline, "parent", "task.create", task_id="goal", title="fill the class", **acting("ann"))
    for name in children:
        publish(loopline, f"add-{name}", "task.add_subtask", parent_id="goal", task_id=name, title=f"invite {name}",
                by="owner", **acting(name))


def recipients(loopline: InMemoryLoopline) -> list[str]:
    return sorted(message["details"]["to"] for _, message in loopline.emails())


def test_a_parents_budget_caps_the_emails_of_it_and_all_its_subtasks(loopline: InMemoryLoopline) -> None:
    plan(loopline, "bob", "cara", "dan")  # lead_followup's budget: 5 emails for the parent and its subtasks together
    publish(loopline, "add-eve", "task.add_subtask", parent_id="goal", task_id="eve", title="invite eve", by="owner",
            **acting("eve"))
    publish(loopline, "add-fay", "task.add_subtask", parent_id="goal", task_id="fay", title="invite fay", by="owner",
            **acting("fay"))

    loopline.tick(T0 + timedelta(minutes=30))

    assert len(recipients(loopline)) == 5
    [held] = [e for e in loopline.events() if isinstance(e, Task.SendDeferred)]
    assert held.rule == "parent_message_budget" and "5 of 5 sent" in held.reason
    parent = loopline.task(GYM, "goal")
    assert parent.messages_used + sum(entry["messages"] for entry in parent.subtasks.values()) == 5


def test_a_parent_with_the_owner_holds_its_subtasks_until_the_owners_guidance(loopline: InMemoryLoopline) -> None:
    plan(loopline, "bob")
    publish(loopline, "stuck", "task.update", task_id="goal", status="escalated", notes="is the class still on?")

    loopline.tick(T0 + timedelta(minutes=30))
    assert "bob@example.com" not in recipients(loopline)
    assert [e.subtask_ref for e in loopline.events() if isinstance(e, Task.SubtaskPaused)] == ["bob"]

    loopline.publish(command("go", "task.guidance", format_time(T0 + timedelta(hours=1)), GYM, task_id="goal",
                             text="Yes, it runs on Friday"))
    loopline.tick(T0 + timedelta(hours=1, minutes=30))

    assert "bob@example.com" in recipients(loopline)
