"""The commands of actions beyond email (seed 002 §15): request one on a task, the owner's approval or rejection of
one held for it, and a staff to-do marked done."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, model_validator

from loopline.domain.actions import ACTIONS, InvalidAction, action_profile, check_params
from loopline.processors.handlers.command_fields import Id, Strict, Text


class ActionRequest(Strict):
    task_id: Id = Field(description="an open task; an action that reaches its contact needs one (`contact`)")
    action: str = Field(description=f"one of {', '.join(f'`{name}`' for name in ACTIONS)} (see [Actions beyond "
                        "email](#actions-beyond-email))")
    params: dict[str, Any] = Field(default_factory=dict, description="the action's params, checked by its kind")
    key: Id | None = Field(default=None, description="the idempotency key: a second request with it on the task "
                           "changes nothing; absent: the message's `id`")
    requested_by: Literal["agent", "owner"] = Field(default="agent", description="who asks for it, kept with it; "
                                                    "the owner's request is their approval (it is never held)")

    @model_validator(mode="after")
    def _params_fit_the_action(self) -> ActionRequest:
        try:
            check_params(action_profile(self.action), self.params)
        except InvalidAction as error:
            raise ValueError(str(error)) from None
        return self


class ActionDecision(Strict):
    task_id: Id = Field(description="a task with an action held for the owner's approval")
    key: Id | None = Field(default=None, description="the held action's key; absent: the one action held")
    reason: Text | None = Field(default=None, description="why, kept on the task (absent: `approved by owner` / "
                                "`rejected by owner`)")


class ActionDone(Strict):
    task_id: Id = Field(description="a task with an open staff to-do")
    key: Id | None = Field(default=None, description="the to-do's key; absent: the task's one open to-do")
    note: Text | None = Field(default=None, description="how it went, kept with it")
