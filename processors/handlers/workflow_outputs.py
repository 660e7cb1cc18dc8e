"""`workflow.output`: an output of a workflow a task owns, kept in the task's `workflows/` memory; naming a routine
of that task, it is also that routine's run, reported by the external agent that ran it."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

from pydantic import Field

from loopline.domain.errors import DomainError
from loopline.processors.application import UnitOfWork
from loopline.processors.handlers.command_fields import Id, Strict
from loopline.processors.handlers.loops_and_timers import load_task
from loopline.processors.handlers.routines import load_routine, record_reported_run
from loopline.processors.messages import Message


class WorkflowOutput(Strict):
    task_id: Id = Field(description="the task that owns the workflow")
    workflow: str = Field(
        min_length=1, max_length=100, pattern=r"^[A-Za-z0-9_.-]+$", description="the workflow's name, used in the file name"
    )
    output: dict[str, Any] | list[Any] | str = Field(description="the output, stored in the task's `workflows/` folder")
    routine_id: Id | None = Field(default=None, description="a routine the task owns: the output is also its "
                                  "successful run, as `routine.report` records it (compared for `on_change`)")


class NotTheRoutinesTask(DomainError):
    """A workflow output names a routine its task does not own."""


def record_workflow_output(uow: UnitOfWork, msg: Message, cmd: WorkflowOutput) -> str:
    task = load_task(uow, msg.tenant, cmd.task_id)
    if cmd.routine_id is None:
        name = task.record_workflow_output(workflow=cmd.workflow, output=cmd.output, now=msg.at)
        return f"stored {cmd.workflow} output {name} for {task.ref}"
    routine = load_routine(uow, msg.tenant, cmd.routine_id)
    if routine.owner_task_ref != task.ref:
        owner = f"task {routine.owner_task_ref}" if routine.owner_task_ref else "the tenant (adopt it with routine.adopt)"
        raise NotTheRoutinesTask(f"routine_id: routine {routine.ref} is owned by {owner}, not task {task.ref}")
    # The routine compares its runs as text: a structured output is compared in one canonical spelling.
    output = cmd.output if isinstance(cmd.output, str) else json.dumps(cmd.output, sort_keys=True)
    return record_reported_run(uow, msg, routine, duration=timedelta(0), outcome="success", output=output,
                               error=None, workflow=cmd.workflow)
