"""The owner's controls on one task (seed 003 §4): the command model of `task.pause`, `task.resume` and
`task.run_now`."""

from __future__ import annotations

from pydantic import Field

from loopline.processors.handlers.command_fields import Id, ShortText, Strict


class TaskControlCommand(Strict):
    """`task.pause` holds the task's own work until `task.resume`; `task.run_now` takes its next step at once."""

    task_id: Id = Field(description="the task; it must be open")
    reason: ShortText | None = Field(default=None, description="why, in the trail (absent: `by hand`)")
    by: ShortText | None = Field(default=None, description="who did it, in the trail (absent: `owner`)")
