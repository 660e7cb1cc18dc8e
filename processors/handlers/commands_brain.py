"""What the tenant tells the proactive brain (seed 000 Part 3): its goals and memory highlights, which the
synthesis run's context carries (`tenant.goal`, `tenant.memory`)."""

from __future__ import annotations

from pydantic import Field

from loopline.processors.application import UnitOfWork
from loopline.processors.messages import Message
from loopline.processors.handlers.command_fields import Id, Strict, Text
from loopline.processors.handlers.loops_and_timers import proactive_run


class TenantGoal(Strict):
    key: Id = Field(description="the goal's name; a second `tenant.goal` with it replaces the goal")
    goal: Text = Field(description="what the tenant wants to reach, in its words, for the synthesis run's context")
    active: bool = Field(default=True, description="false: the goal is reached or dropped and leaves the context")


class TenantMemory(Strict):
    key: Id = Field(description="the highlight's name; a second `tenant.memory` with it replaces the note")
    note: Text = Field(description="something worth remembering, for the synthesis run's context")


def set_goal(uow: UnitOfWork, msg: Message, cmd: TenantGoal) -> str:
    proactive_run(uow, msg.tenant, msg.at).set_goal(key=cmd.key, goal=cmd.goal, active=cmd.active, now=msg.at)
    return f"goal {cmd.key} {'set' if cmd.active else 'dropped'}"


def note_memory(uow: UnitOfWork, msg: Message, cmd: TenantMemory) -> str:
    proactive_run(uow, msg.tenant, msg.at).note_memory(key=cmd.key, note=cmd.note, now=msg.at)
    return f"memory {cmd.key} noted"
