"""`task.add_subtask`: a step of a task's plan (seed 002 §14), created by the agent or the owner, with its
requirement, the siblings it waits for, its start and its mini-budget."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from loopline.processors.handlers.command_fields import Id, Strict, Timestamp
from loopline.processors.handlers.commands_types import TaskCreate

MINI_BUDGET_DAYS = 7
"""Days a subtask lives from its start when its budget names none (its type's when shorter)."""


class SubtaskBudget(Strict):
    messages: int = Field(default=1, ge=0, le=20, description="emails the subtask sends at most (its type's when lower)")
    turns: int = Field(default=2, ge=0, le=20, description="replies it evaluates at most (its type's when lower)")
    days: int = Field(default=MINI_BUDGET_DAYS, ge=1, le=366,
                      description="days it lives from its start (`starts_at`, else its creation)")


class TaskAddSubtask(TaskCreate):
    """`task.create`'s fields for the subtask itself, and its place in the parent's plan."""

    task_id: Id = Field(description="the subtask's id; a second `task.add_subtask` with it changes nothing")
    parent_id: Id = Field(description="the task whose plan this is a step of (approved, open, and itself no subtask)")
    requirement: Literal["required", "optional", "best_effort"] = Field(
        default="required",
        description="`required`: the parent cannot complete without it and its failure escalates the parent; "
        "`optional`: its failure is noted and the parent goes on; `best_effort`: ignored if it fails",
    )
    depends_on: list[Id] = Field(
        default_factory=list, max_length=8,
        description="ids of sibling subtasks that must finish (completed or cancelled) before this one starts",
    )
    starts_at: Timestamp | None = Field(
        default=None, description="a deferred subtask: it waits (`waiting`) until then; absent: it starts at once",
    )
    budget: SubtaskBudget = Field(default_factory=SubtaskBudget,
                                  description="its own mini-budget; the parent's budget also caps all its subtasks' "
                                  "emails together")
    by: Literal["agent", "owner"] = Field(
        default="agent", description="who adds it: the agent adds at most 2 before one of the parent's subtasks ends",
    )

    def subtask(self, **changed: Any) -> TaskCreate:
        """The `task.create` of the subtask itself."""
        fields = {name: getattr(self, name) for name in TaskCreate.model_fields} | changed
        return TaskCreate.model_construct(**fields)
