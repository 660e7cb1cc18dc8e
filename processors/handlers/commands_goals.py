"""The owner's word on a task's outcome (seed 002 §27.4, §28.5, §37.6): the command models of `task.override_outcome`,
`task.reopen` and `task.rate`, beside `commands_types.py`."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from loopline.processors.handlers.command_fields import Id, ShortText, Strict, Text

OWNER = "owner"


class TaskOverrideOutcome(Strict):
    task_id: Id = Field(description="a closed task (`completed`, `cancelled` or `expired`)")
    outcome: ShortText = Field(description="an outcome code of the task's type (see [Task types](#task-types)) or "
                               "`owner_handled`; it replaces the outcome the task closed with, and is evaluated again")
    reason: Text = Field(description="why the owner disagrees, in the trail")
    by: ShortText = Field(default=OWNER, description="who overrides it, in the trail")


class TaskReopen(Strict):
    task_id: Id = Field(description="a closed task the owner says is not done; it goes back to work (`executing`, "
                        "`waiting` on its contact when Loopline works it) with its outcome cleared, the messages and "
                        "turns it used still counted, and its time budget from now")
    reason: Text = Field(description="why it is not done, in the trail")
    by: ShortText = Field(default=OWNER, description="who reopens it, in the trail")


class TaskRate(Strict):
    task_id: Id = Field(description="a closed or `escalated` task")
    rating: Literal["up", "down"] = Field(description="`up`: the outcome is accurate; `down`: it is not")
    why: Literal["never_came_back", "would_have_come_back_anyway", "wrong_member", "other"] | None = Field(
        default=None, description="with `down`: what is wrong with the outcome")
    note: ShortText | None = Field(default=None, description="the owner's note, in the trail")
    by: ShortText = Field(default=OWNER, description="who rates it, in the trail")
