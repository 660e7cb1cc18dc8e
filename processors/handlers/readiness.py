"""What happens when a task becomes `ready`: at creation when the gate lets it through, and at `task.approve`.

This is the one place the pipeline starts working a ready task: an acting task (one with an
outreach plan) gets a `task_step` timer due at once, so the next tick sends its first touch
(`processors/handlers/outreach.py`); by its type's category (seed 002 §31), a research task asks for
its report (`research.py`), a staff to-do task for its to-do (`staff_todos.py`) and an automation task
for its action (`automations.py`). A follow-through task waits for its agent, as before issue 11.
"""

from __future__ import annotations

from datetime import datetime

from loopline.domain.task import Task
from loopline.domain.timers import TimerKind
from loopline.processors.application import UnitOfWork
from loopline.processors.handlers.automations import is_automation, run_automation
from loopline.processors.handlers.loops_and_timers import set_timer
from loopline.processors.handlers.research import is_research, request_report
from loopline.processors.handlers.staff_todos import assign_todo, is_staff_todo


def on_ready(uow: UnitOfWork, task: Task, now: datetime) -> None:
    """Called once for every task that has just become `ready` (or, created, `executing` at once: one Loopline does
    not work), in the same unit of work."""
    if task.is_acting:
        set_timer(uow, kind=TimerKind.TASK_STEP, target_id=task.id, due=now, now=now)
    elif is_research(task):
        request_report(uow, task, now)
    elif is_staff_todo(task):
        assign_todo(uow, task, now)
    elif is_automation(task):
        run_automation(uow, task, now)
