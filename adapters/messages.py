"""The JSON message contract (BRIEF §4), validated with pydantic at the edge and turned into `Message`s.

Command types come from `processors/commands.py` COMMANDS (each row names the typed command its
`data` becomes, and `COMMAND_SCHEMAS` below its schema); `action.record` is validated per action
from the contracts in `domain/expectations.py`. Signals are strict on the fields they are matched
on and keep any other payload field, as real webhooks carry more.
"""

from __future__ import annotations

import json
from datetime import timezone
from typing import Any, Literal

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, ValidationError, create_model, model_validator

from loopline.domain.expectations import (
    EXPECTATIONS,
    ConflictingFields,
    DeadlineAction,
    Expectation,
    UnknownAction,
    expectation_for,
)
from loopline.domain.status import TaskStatus
from loopline.processors import commands_types as typed
from loopline.processors.commands import COMMANDS, command_from_data
from loopline.processors.messages import Message

NonEmpty = Field(min_length=1)


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Signal(BaseModel):
    """A signal's documented fields are typed strictly; any other field is kept and stored with it."""

    model_config = ConfigDict(extra="allow")


class Envelope(Strict):
    kind: Literal["command", "signal"]
    id: str = NonEmpty
    type: str = NonEmpty
    tenant: str = NonEmpty
    at: AwareDatetime
    data: dict[str, Any] = Field(default_factory=dict)


class TaskCreate(Strict):
    task_id: str = NonEmpty
    title: str = NonEmpty
    description: str | None = None
    task_type: str | None = None
    expires_in_days: int | None = Field(default=None, ge=1)
    priority: Literal["low", "med", "medium", "high", "critical"] | None = None
    contact: str | None = None
    confidence: float | None = Field(default=None, ge=0, le=1)
    context: dict[str, Any] | None = None


class ActionRecordCommon(Strict):
    """The fields every action takes; each action's own fields come from its contract row."""

    task_id: str = NonEmpty
    action: str = NonEmpty
    summary: str | None = None
    message_id: str | None = Field(default=None, min_length=1)
    loop_id: str | None = Field(default=None, min_length=1)
    deadline: AwareDatetime | None = None
    if_unresolved: DeadlineAction | None = None
    expect: bool | None = None


class ActionRecord(ActionRecordCommon):
    """The first pass: the common fields, then the action's own schema (`ACTION_SCHEMAS`) or, for a
    custom action with `"expect": false`, its fields as given."""

    model_config = ConfigDict(extra="allow")


def _action_schema(row: Expectation) -> type[BaseModel]:
    fields: dict[str, Any] = {}
    for spec in row.fields:
        text = {"min_length": 1} if spec.type is str else {}
        if spec.required:
            fields[spec.name] = (spec.type, Field(description=spec.doc, **text))
        else:
            fields[spec.name] = (spec.type | None, Field(default=None, description=spec.doc, **text))
    return create_model(f"ActionRecord_{row.action}", __base__=ActionRecordCommon, **fields)


ACTION_SCHEMAS: dict[str, type[BaseModel]] = {action: _action_schema(row) for action, row in EXPECTATIONS.items()}


class LoopRegister(Strict):
    loop_id: str = NonEmpty
    task_id: str = NonEmpty
    channel: str = NonEmpty
    watch: dict[str, Any]
    deadline: AwareDatetime
    if_unresolved: DeadlineAction
    description: str | None = None


class LoopResolve(Strict):
    loop_id: str = NonEmpty
    reason: str | None = None


class TaskUpdate(Strict):
    task_id: str = NonEmpty
    status: TaskStatus | None = None
    notes: str | None = None


class TaskComplete(Strict):
    task_id: str = NonEmpty
    summary: str = NonEmpty


class TaskCancel(Strict):
    task_id: str = NonEmpty
    reason: str = NonEmpty


class TaskReview(Strict):
    task_id: str = NonEmpty
    reason: str | None = None
    rejection_type: str | None = None


class TaskGuidance(Strict):
    task_id: str = NonEmpty
    text: str = NonEmpty


class RunSchedule(Strict):
    at: AwareDatetime
    reason: str = NonEmpty


class WakeCondition(Strict):
    channel: str = NonEmpty
    watch: dict[str, Any]
    deadline: AwareDatetime | None = None
    if_unresolved: DeadlineAction | None = None


class TaskWake(Strict):
    task_id: str = NonEmpty
    wake_id: str | None = Field(default=None, min_length=1)
    at: AwareDatetime | None = None
    when: WakeCondition | None = None
    reason: str | None = None

    @model_validator(mode="after")
    def _time_or_condition(self) -> TaskWake:
        if self.at is None and self.when is None:
            raise ValueError("give `at` (a time), `when` (a condition: channel and watch) or both")
        if self.at is not None and self.when is not None and (self.when.deadline or self.when.if_unresolved):
            raise ValueError("with both `at` and `when`, `at` is the condition's deadline: drop when.deadline/when.if_unresolved")
        return self


class WorkflowOutput(Strict):
    task_id: str = NonEmpty
    workflow: str = Field(min_length=1, max_length=100, pattern=r"^[A-Za-z0-9_.-]+$")
    output: dict[str, Any] | list[Any] | str


class EmailReceived(Signal):
    sender: str = NonEmpty
    thread_id: str | None = None
    subject: str | None = None
    body: str | None = None


class SlackMessage(Signal):
    slack_user_id: str = NonEmpty
    channel_id: str = NonEmpty
    ts: str = NonEmpty
    text: str | None = None


class GithubEvent(Signal):
    event_type: Literal["pull_request_review", "pull_request_merged", "issue_closed"]
    repo: str = NonEmpty
    resource_id: str = NonEmpty


class CalendarEvent(Signal):
    event_type: Literal["invite_accepted", "event_started", "event_updated"]
    event_id: str = NonEmpty
    attendee_email: str | None = None


class LinearEvent(Signal):
    event_type: Literal["issue_status_changed"]
    issue_id: str = NonEmpty
    status: str | None = None


class WebhookReceived(Signal):
    source: str = NonEmpty
    trigger_name: str = NonEmpty
    payload: dict[str, Any] = Field(default_factory=dict)


class UserSeen(Signal):
    pass


class OutcomeObserved(Signal):
    contact: str = NonEmpty
    outcome: str = NonEmpty
    value: float | None = None


COMMAND_SCHEMAS: dict[type, type[BaseModel]] = {
    typed.CreateTask: TaskCreate,
    typed.RecordAction: ActionRecord,
    typed.RegisterLoop: LoopRegister,
    typed.ResolveLoop: LoopResolve,
    typed.UpdateTask: TaskUpdate,
    typed.CompleteTask: TaskComplete,
    typed.CancelTask: TaskCancel,
    typed.ReviewTask: TaskReview,
    typed.GiveGuidance: TaskGuidance,
    typed.ScheduleRun: RunSchedule,
    typed.WakeTask: TaskWake,
    typed.RecordWorkflowOutput: WorkflowOutput,
}
"""The schema of each typed command; which message types carry it is COMMANDS' business."""

SCHEMAS: dict[tuple[str, str], type[BaseModel]] = {
    **{("command", route.type): COMMAND_SCHEMAS[route.command] for route in COMMANDS.values()},
    ("signal", "email.received"): EmailReceived,
    ("signal", "slack.message"): SlackMessage,
    ("signal", "github.event"): GithubEvent,
    ("signal", "calendar.event"): CalendarEvent,
    ("signal", "linear.event"): LinearEvent,
    ("signal", "webhook.received"): WebhookReceived,
    ("signal", "user.seen"): UserSeen,
    ("signal", "outcome.observed"): OutcomeObserved,
}


class InvalidMessage(ValueError):
    """The input is not a valid message; the text says what was wrong."""


def _explain(error: ValidationError, prefix: str = "") -> str:
    def where(loc: tuple) -> str:
        path = ".".join(str(part) for part in loc)
        return f"{prefix}{path}" if path else (prefix.rstrip(".") or "message")

    return "; ".join(f"{where(item['loc'])}: {item['msg']}" for item in error.errors())


def parse_message(raw: str | bytes) -> Message:
    try:
        document = json.loads(raw)
    except json.JSONDecodeError as error:
        raise InvalidMessage(f"not valid JSON: {error}") from None
    try:
        envelope = Envelope.model_validate(document)
    except ValidationError as error:
        raise InvalidMessage(_explain(error)) from None
    schema = SCHEMAS.get((envelope.kind, envelope.type))
    if schema is None:
        known = ", ".join(t for k, t in SCHEMAS if k == envelope.kind)
        raise InvalidMessage(f"type: unknown {envelope.kind} type {envelope.type!r}; known: {known}")
    try:
        validated = schema.model_validate(envelope.data)
        if isinstance(validated, ActionRecord):
            validated = _validate_action(validated, envelope.data)
    except ValidationError as error:
        raise InvalidMessage(_explain(error, prefix="data.")) from None
    data = validated.model_dump(mode="json", exclude_none=True)
    return Message(
        kind=envelope.kind, ref=envelope.id, type=envelope.type, tenant=envelope.tenant,
        at=envelope.at.astimezone(timezone.utc), data=data,
        command=command_from_data(envelope.type, data) if envelope.kind == "command" else None,
    )


def _validate_action(common: ActionRecord, data: dict[str, Any]) -> BaseModel:
    """An action with a contract is validated by it; a custom action must say it expects nothing."""
    ignored = [name for name in ("loop_id", "deadline", "if_unresolved") if getattr(common, name) is not None]
    if common.expect is False and ignored:
        raise InvalidMessage(
            f"data.expect: with \"expect\": false no loop is registered, so {', '.join(ignored)} would be ignored; "
            "drop them, or register the loop with loop.register"
        )
    if common.action not in ACTION_SCHEMAS and common.expect is False:
        return common
    try:
        expectation_for(common.action)
    except UnknownAction as error:
        raise InvalidMessage(f"data.action: {error}") from None
    validated = ACTION_SCHEMAS[common.action].model_validate(data)
    try:
        EXPECTATIONS[common.action].watch(validated.model_dump(exclude_none=True))
    except ConflictingFields as error:
        raise InvalidMessage(f"data: {error}") from None
    return validated
