"""The JSON message contract (BRIEF §4), validated with pydantic at the edge and turned into `Message`s."""

from __future__ import annotations

import json
from datetime import timezone
from typing import Any, Literal

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, ValidationError, model_validator

from loopline.processors.messages import Message

NonEmpty = Field(min_length=1)


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


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


class ActionRecord(BaseModel):
    model_config = ConfigDict(extra="allow")  # channel fields (to, thread_id, repo, …) vary by action
    task_id: str = NonEmpty
    action: str = NonEmpty
    summary: str | None = None
    message_id: str | None = None
    loop_id: str | None = None
    deadline: AwareDatetime | None = None
    if_unresolved: str | None = None
    expect: bool | None = None


class LoopRegister(Strict):
    loop_id: str = NonEmpty
    task_id: str = NonEmpty
    channel: str = NonEmpty
    watch: dict[str, Any]
    deadline: AwareDatetime
    if_unresolved: str = NonEmpty
    description: str | None = None


class LoopResolve(Strict):
    loop_id: str = NonEmpty
    reason: str | None = None


class TaskUpdate(Strict):
    task_id: str = NonEmpty
    status: str | None = None
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
    if_unresolved: str | None = None


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


class EmailReceived(Strict):
    sender: str = NonEmpty
    thread_id: str | None = None
    subject: str | None = None
    body: str | None = None


class SlackMessage(Strict):
    slack_user_id: str = NonEmpty
    channel_id: str = NonEmpty
    ts: str = NonEmpty
    text: str | None = None


class GithubEvent(Strict):
    event_type: Literal["pull_request_review", "pull_request_merged", "issue_closed"]
    repo: str = NonEmpty
    resource_id: str = NonEmpty


class CalendarEvent(Strict):
    event_type: Literal["invite_accepted", "event_started", "event_updated"]
    event_id: str = NonEmpty
    attendee_email: str | None = None


class LinearEvent(Strict):
    event_type: Literal["issue_status_changed"]
    issue_id: str = NonEmpty
    status: str | None = None


class WebhookReceived(Strict):
    source: str = NonEmpty
    trigger_name: str = NonEmpty
    payload: dict[str, Any] = Field(default_factory=dict)


class UserSeen(Strict):
    pass


class OutcomeObserved(Strict):
    contact: str = NonEmpty
    outcome: str = NonEmpty
    value: float | None = None


SCHEMAS: dict[tuple[str, str], type[BaseModel]] = {
    ("command", "task.create"): TaskCreate,
    ("command", "action.record"): ActionRecord,
    ("command", "loop.register"): LoopRegister,
    ("command", "loop.resolve"): LoopResolve,
    ("command", "task.update"): TaskUpdate,
    ("command", "task.complete"): TaskComplete,
    ("command", "task.cancel"): TaskCancel,
    ("command", "task.approve"): TaskReview,
    ("command", "task.reject"): TaskReview,
    ("command", "task.guidance"): TaskGuidance,
    ("command", "run.schedule"): RunSchedule,
    ("command", "task.wake"): TaskWake,
    ("command", "workflow.output"): WorkflowOutput,
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
        data = schema.model_validate(envelope.data).model_dump(mode="json", exclude_none=True)
    except ValidationError as error:
        raise InvalidMessage(_explain(error, prefix="data.")) from None
    return Message(
        kind=envelope.kind, ref=envelope.id, type=envelope.type, tenant=envelope.tenant,
        at=envelope.at.astimezone(timezone.utc), data=data,
    )
