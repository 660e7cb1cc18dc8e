"""Commands as frozen, typed objects: what a handler takes once the edge has validated a message.

The edge (`adapters/messages.py`) validates a message's `data` and builds its command here; the
embedded log stores that `data` as JSON and the router rebuilds the same command from it with
`from_data`, so both paths hand handlers the same object.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields, is_dataclass
from datetime import datetime
from enum import Enum
from functools import cache
from types import NoneType, UnionType
from typing import Any, TypeVar, Union, get_args, get_origin, get_type_hints

from loopline.domain.expectations import DeadlineAction
from loopline.domain.status import TaskStatus
from loopline.domain.timeutil import parse_time


@dataclass(frozen=True)
class Draft:
    subject: str
    body: str


@dataclass(frozen=True)
class CreateTask:
    task_id: str
    title: str
    description: str | None = None
    task_type: str | None = None
    expires_in_days: int | None = None
    priority: str | None = None
    contact: str | None = None
    confidence: float | None = None
    context: Mapping[str, Any] | None = None
    draft: Draft | None = None
    """The first message, written by the agent that created the task; Loopline sends it as touch 1."""
    to_name: str | None = None
    """The contact's name, for greetings."""


@dataclass(frozen=True)
class RecordAction:
    task_id: str
    action: str
    summary: str | None = None
    loop_id: str | None = None
    deadline: datetime | None = None
    if_unresolved: DeadlineAction | None = None
    expect: bool | None = None
    details: Mapping[str, Any] = field(default_factory=dict)
    """The action's own fields (`to`, `thread_id`, `repo`, …), checked against its contract at the edge."""


@dataclass(frozen=True)
class RegisterLoop:
    loop_id: str
    task_id: str
    channel: str
    watch: Mapping[str, Any]
    deadline: datetime
    if_unresolved: DeadlineAction
    description: str | None = None


@dataclass(frozen=True)
class ResolveLoop:
    loop_id: str
    reason: str | None = None


@dataclass(frozen=True)
class UpdateTask:
    task_id: str
    status: TaskStatus | None = None
    notes: str | None = None


@dataclass(frozen=True)
class CompleteTask:
    task_id: str
    summary: str


@dataclass(frozen=True)
class CancelTask:
    task_id: str
    reason: str


@dataclass(frozen=True)
class ReviewTask:
    task_id: str
    reason: str | None = None
    rejection_type: str | None = None


@dataclass(frozen=True)
class GiveGuidance:
    task_id: str
    text: str


@dataclass(frozen=True)
class ScheduleRun:
    at: datetime
    reason: str


@dataclass(frozen=True)
class WakeCondition:
    channel: str
    watch: Mapping[str, Any]
    deadline: datetime | None = None
    if_unresolved: DeadlineAction | None = None


@dataclass(frozen=True)
class WakeTask:
    task_id: str
    wake_id: str | None = None
    at: datetime | None = None
    when: WakeCondition | None = None
    reason: str | None = None


@dataclass(frozen=True)
class RecordWorkflowOutput:
    task_id: str
    workflow: str
    output: Mapping[str, Any] | list[Any] | str


@dataclass(frozen=True)
class ConfigureTenant:
    name: str | None = None
    timezone: str | None = None
    owner_email: str | None = None
    execution_mode: str | None = None
    member_weekly_limit: int | None = None
    daily_send_limit: int | None = None
    profile: Mapping[str, Any] | None = None

    def given(self) -> dict[str, Any]:
        """The settings this command sets: every field it was given (the rest stay as they are)."""
        return {spec.name: getattr(self, spec.name) for spec in fields(self) if getattr(self, spec.name) is not None}


C = TypeVar("C")


def from_data(command_type: type[C], data: Mapping[str, Any]) -> C:
    """Builds a command from its validated JSON `data`: times parsed, names checked against their enum,
    nested conditions built; a command with a `details` field collects there every key it does not name."""
    hints = _hints(command_type)
    named = {name for name in hints if name != "details"}
    values = {name: _convert(hints[name], data[name]) for name in named if name in data}
    if "details" in hints:
        values["details"] = {key: value for key, value in data.items() if key not in named}
    return command_type(**values)


@cache
def _hints(command_type: type) -> dict[str, Any]:
    hints = get_type_hints(command_type)
    return {spec.name: hints[spec.name] for spec in fields(command_type)}


def _convert(hint: Any, value: Any) -> Any:
    if value is None:
        return None
    if get_origin(hint) in (Union, UnionType):
        options = [option for option in get_args(hint) if option is not NoneType]
        return _convert(options[0], value) if len(options) == 1 else value
    if hint is datetime:
        return parse_time(value)
    if isinstance(hint, type) and issubclass(hint, Enum):
        return hint(value)
    if isinstance(hint, type) and is_dataclass(hint):
        return from_data(hint, value)
    return value
