"""How many touches a cadence plans is one fact (`domain/outreach.planned_touches`): the tick's words, the
prompt `loopline prompt` previews and the plan `tasks show` prints agree on it for every task type that
sends, and the tick sends exactly that many before the cadence ends."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from loopline.runtime.system import System
from loopline.domain import ids
from loopline.domain.outreach import planned_touches
from loopline.domain.task import Task
from loopline.domain.task_types import TASK_TYPES, TaskType
from loopline.domain.timeutil import parse_time
from loopline.processors.model.prompts import next_request
from loopline.projections import task_queries
from tests.conftest import build_system, command, publish
from tests.integration.helpers import task_row

GYM = "cadence_gym"
T0 = "2026-03-02T09:00:00Z"
SENDING = sorted(name for name, kind in TASK_TYPES.items() if kind.can_send)


@pytest.fixture
def gym(home: Path) -> Iterator[System]:
    system = build_system(home)
    report = publish(system, command("cfg", "tenant.configure", T0, GYM, execution_mode="limited_auto"))
    assert report.rejected == []
    yield system
    system.close()


def acting_task(system: System, kind: TaskType) -> Task:
    """A task of `kind` created and approved, ready for its first touch."""
    created = publish(system, command(
        "create", "task.create", T0, GYM, task_id="t1", title=f"A {kind.label} task", task_type=kind.name,
        contact="sam@example.com", to_name="Sam", confidence=1.0,
    ))
    assert created.rejected == []
    if system.app.repository.get(ids.task_id(GYM, "t1")).status == "pending_review":
        assert publish(system, command("approve", "task.approve", T0, GYM, task_id="t1")).rejected == []
    task = system.app.repository.get(ids.task_id(GYM, "t1"))
    assert isinstance(task, Task)
    return task


@pytest.mark.parametrize("name", SENDING)
def test_tick_prompt_and_tasks_show_agree_on_the_cadences_touch_count(gym: System, name: str) -> None:
    kind = TASK_TYPES[name]
    touches = planned_touches(kind.budget.messages, kind.cadence.intervals)
    task = acting_task(gym, kind)
    now = T0

    previewed = next_request(gym.app, task, parse_time(now)).prompt.messages[0]["content"]
    assert f"Write touch 1 of {touches} to Sam" in previewed

    sent: list[str] = []
    while len(sent) <= touches:
        actions = gym.tick(parse_time(now)).actions
        sent += [a for a in actions if re.search(r"sent touch \d+ of \d+", a)]
        shown = task_queries.outreach(task_row(gym, "t1", GYM), parse_time(now))
        assert shown is not None and shown["touches"] == touches
        next_action = shown["next_action"]
        if next_action is None or not next_action["what"].startswith("touch"):
            break
        assert next_action["what"].endswith(f" of {touches}")
        now = next_action["at"]
    assert [re.search(r"sent (touch \d+ of \d+)", line).group(1) for line in sent] == [  # type: ignore[union-attr]
        f"touch {n} of {touches}" for n in range(1, touches + 1)
    ]
