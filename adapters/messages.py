"""The JSON message contract (README "Messages"), validated with pydantic at the edge and turned into `Message`s.

Command types come from `processors/commands.py` COMMANDS (each row names the typed command its
`data` becomes, and `COMMAND_SCHEMAS` below its schema); `action.record` is validated per action
from the contracts in `domain/expectations.py`. Signals are strict on the fields they are matched
on and keep any other payload field, as real webhooks carry more. Types are strict (no coercion),
ids and times have one shape each, and the bytes are read within `adapters/limits.py` by
`adapters/strict_json.py`: `parse_message` raises nothing but InvalidMessage, whatever the input.
"""

from __future__ import annotations

import re
from datetime import datetime, timezone
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    create_model,
    model_validator,
)

from loopline.adapters import limits
from loopline.adapters.strict_json import UnreadableInput, read_document, shown
from loopline.domain.expectations import (
    EXPECTATIONS,
    ConflictingFields,
    DeadlineAction,
    Expectation,
    UnknownAction,
    expectation_for,
)
from loopline.domain.status import TaskStatus
from loopline.domain.tenant import CONTACT_INFO_FIELDS, PROFILE_FIELDS, InvalidSettings, check_timezone
from loopline.domain.timeutil import format_time
from loopline.processors import commands_types as typed
from loopline.processors.commands import COMMANDS, command_from_data
from loopline.processors.messages import Message

_ID = re.compile(limits.ID_PATTERN)
_RFC3339 = re.compile(r"\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d{1,6})?([Zz]|[+-]\d{2}:\d{2})")


def _id(value: Any) -> str:
    if not isinstance(value, str) or len(value) > limits.MAX_ID_CHARS or not _ID.fullmatch(value):
        raise ValueError(f"an id is 1 to {limits.MAX_ID_CHARS} characters of {limits.ID_ALPHABET}")
    return value


def parse_timestamp(value: Any) -> datetime:
    """An RFC 3339 string with a time zone, in the accepted years once in UTC; never an epoch number."""
    if not isinstance(value, str) or not _RFC3339.fullmatch(value):
        raise ValueError("must be an RFC 3339 time with a time zone, such as 2026-03-13T10:00:00Z")
    try:
        local = datetime.fromisoformat(value.upper().replace("Z", "+00:00"))
    except ValueError:
        raise ValueError(f"{value} is not a date and time that exists") from None
    try:
        moment: datetime | None = local.astimezone(timezone.utc)
    except OverflowError:  # 0001-01-01T00:30:00+01:00 is before the first datetime in UTC
        moment = None
    if moment is None or not limits.EARLIEST_YEAR <= moment.year <= limits.LATEST_YEAR:
        raise ValueError(f"must fall in the years {limits.EARLIEST_YEAR} to {limits.LATEST_YEAR} (UTC)")
    return moment


def _not_blank(value: str) -> str:
    if not value.strip():
        raise ValueError("must not be empty or only whitespace")
    return value


def _watch(value: Any) -> dict[str, Any]:
    """A watch names each field's expected value as a string; `match_fields` maps payload fields to strings."""
    if not isinstance(value, dict) or not value:
        raise ValueError("must be an object of the fields to watch")
    for key, item in value.items():
        if key == "match_fields":
            if not isinstance(item, dict) or not all(_is_text(k) and _is_text(v) for k, v in item.items()):
                raise ValueError("match_fields: must be an object of payload fields to non-empty strings")
        elif not _is_text(item):
            raise ValueError(f"{shown(key)}: must be a non-empty string")
    return value


def _is_text(value: Any) -> bool:
    return isinstance(value, str) and bool(value.strip())


Id = Annotated[str, BeforeValidator(_id)]
Timestamp = Annotated[datetime, BeforeValidator(parse_timestamp)]
Text = Annotated[str, AfterValidator(_not_blank)]
ShortText = Annotated[str, Field(max_length=limits.MAX_SHORT_TEXT_CHARS), AfterValidator(_not_blank)]
Watch = Annotated[dict[str, Any], BeforeValidator(_watch)]
MatchFields = dict[Text, Text]


class Strict(BaseModel):
    """No coercion: a string is never read as a number, nor a boolean as a number; named values
    (enums) are still given as their JSON strings."""

    model_config = ConfigDict(extra="forbid", strict=True)


class Signal(BaseModel):
    """A signal's documented fields are typed strictly; any other field is kept and stored with it."""

    model_config = ConfigDict(extra="allow", strict=True)


class Envelope(Strict):
    kind: Literal["command", "signal"] = Field(description="`command` (changes tasks and loops) or `signal` (something that happened)")
    id: Id = Field(description="the message's id, unique per tenant; a repeated id is acknowledged and ignored")
    type: Text = Field(description="the command or signal type, from the tables below")
    tenant: Id = Field(description="whose message it is; tenants never see each other's tasks, loops or signals")
    at: Timestamp = Field(description="when it happened: the business time every resulting event carries")
    data: dict[str, Any] = Field(default_factory=dict, description="the type's fields, below")


class TaskDraft(Strict):
    subject: Text = Field(description="the email's subject")
    body: Text = Field(description="the email's text")


class TaskCreate(Strict):
    task_id: Id = Field(description="the task's id, chosen by the agent; a second `task.create` with it changes nothing")
    title: Text = Field(description="what the task is, as the owner reads it")
    description: str | None = Field(default=None, description="more detail, kept on the task")
    task_type: str | None = Field(
        default=None,
        description="a type of the task type table: sets budgets, cadence, expiry and review; absent: `ad_hoc`, "
        "worked by the agent (Loopline follows through); an unknown type is handled as `ad_hoc` and waits for review",
    )
    expires_in_days: int | None = Field(
        default=None, ge=1, le=limits.MAX_EXPIRES_IN_DAYS,
        description="days until the task expires; absent: its type's (14, none for `inbox_management`)",
    )
    priority: Literal["low", "med", "medium", "high", "critical"] | None = Field(default=None, description="kept on the task")
    contact: ShortText | None = Field(
        default=None,
        description="who the task is with (an address or a name), shown with the task; an email address with a "
        "`task_type` that sends makes Loopline work the task itself, one open task per contact and type",
    )
    confidence: float | None = Field(
        default=None, ge=0, le=1,
        description="the agent's confidence, 0 to 1; decides review with the type's threshold (see [Creation and review]"
        "(#creation-and-review)); absent counts as 0 for a task Loopline works",
    )
    context: dict[str, Any] | None = Field(
        default=None, description="anything the agent wants back in `context.json`; `conversation_id` is named when the task completes"
    )
    draft: TaskDraft | None = Field(
        default=None, description="the first message to the contact, sent as touch 1 of a task Loopline works; "
        "otherwise kept in `context.json`",
    )
    to_name: ShortText | None = Field(default=None, description="the contact's name, used in greetings")


class ActionRecordCommon(Strict):
    """The fields every action takes; each action's own fields come from its contract row."""

    task_id: Id = Field(description="the task that acted")
    action: Text = Field(description="the action taken: one of [Actions and their fields](#actions-and-their-fields), or a custom one with `expect: false`")
    summary: str | None = Field(default=None, description="what was done, in the task's trail (absent: the action's name)")
    message_id: Text | None = Field(default=None, description="the sent message's id, kept with the action")
    loop_id: Id | None = Field(default=None, description="the implied loop's id; absent: `TASK/ACTION/N`")
    deadline: Timestamp | None = Field(default=None, description="when the loop expires; absent: the action's default deadline")
    if_unresolved: DeadlineAction | None = Field(
        default=None, strict=False, description="what happens at the deadline; absent: the action's default"
    )
    expect: bool | None = Field(default=None, description="`false`: record the action without registering a loop")


class ActionRecord(ActionRecordCommon):
    """The first pass: the common fields, then the action's own schema (`ACTION_SCHEMAS`) or, for a
    custom action with `"expect": false`, its fields as given."""

    model_config = ConfigDict(extra="allow")


_FIELD_TYPES: dict[Any, Any] = {str: Text, list[str]: list[Text], dict[str, Any]: MatchFields}
"""What each type a contract row names is at the edge: text is never blank, objects map to text."""


def _action_schema(row: Expectation) -> type[BaseModel]:
    fields: dict[str, Any] = {}
    for spec in row.fields:
        kind = _FIELD_TYPES.get(spec.type, spec.type)
        if spec.required:
            fields[spec.name] = (kind, Field(description=spec.doc))
        else:
            fields[spec.name] = (kind | None, Field(default=None, description=spec.doc))
    return create_model(f"ActionRecord_{row.action}", __base__=ActionRecordCommon, **fields)


ACTION_SCHEMAS: dict[str, type[BaseModel]] = {action: _action_schema(row) for action, row in EXPECTATIONS.items()}


class LoopRegister(Strict):
    loop_id: Id = Field(description="the loop's id, chosen by the agent")
    task_id: Id = Field(description="the task the loop belongs to")
    channel: Text = Field(description="where the answer comes from: a channel of [Channels and their watch fields](#channels-and-their-watch-fields)")
    watch: Watch = Field(description="the fields a signal must match, by its channel's rule")
    deadline: Timestamp = Field(description="when the loop expires unresolved")
    if_unresolved: DeadlineAction = Field(strict=False, description="what happens at the deadline")
    description: str | None = Field(default=None, description="what the loop waits for, as the owner reads it")


class LoopResolve(Strict):
    loop_id: Id = Field(description="the loop to close by hand; its task wakes if the loop was a wake-up condition")
    reason: str | None = Field(default=None, description="why, in the trail (absent: `resolved by hand`)")


class TaskUpdate(Strict):
    task_id: Id = Field(description="the task")
    status: TaskStatus | None = Field(
        default=None, strict=False, description="the agent's own move along [Task statuses](#task-statuses); absent: unchanged"
    )
    notes: str | None = Field(default=None, description="progress notes, the latest shown in `progress.md`")


class TaskComplete(Strict):
    task_id: Id = Field(description="the task; its open loops close")
    summary: Text = Field(description="what was achieved, told to the owner")


class TaskCancel(Strict):
    task_id: Id = Field(description="the task; its open loops close")
    reason: Text = Field(description="why, in the trail")


class TaskReview(Strict):
    task_id: Id = Field(description="a task in `pending_review`")
    reason: str | None = Field(default=None, description="the owner's reason (absent: `approved by owner` / `rejected by owner`)")
    rejection_type: str | None = Field(default=None, description="on `task.reject`: a category of the rejection, kept with it")


class TaskGuidance(Strict):
    task_id: Id = Field(description="an `escalated` task; it resumes `executing`")
    text: Text = Field(description="the owner's guidance, in the trail")


class RunSchedule(Strict):
    at: Timestamp = Field(description="when the tenant's proactive run should next run")
    reason: Text = Field(description="why, in the run's history")


class WakeCondition(Strict):
    channel: Text = Field(description="the channel to watch")
    watch: Watch = Field(description="the fields a signal must match, as in `loop.register`")
    deadline: Timestamp | None = Field(
        default=None, description="without `at`: when the condition's loop expires (absent: the task's expiry, or 30 days)"
    )
    if_unresolved: DeadlineAction | None = Field(
        default=None, strict=False, description="without `at`: what happens at that deadline (absent: `notify_user`)"
    )


class TaskWake(Strict):
    task_id: Id = Field(description="the task to wake; it must be open")
    wake_id: Id | None = Field(default=None, description="the wake-up's id; absent: `TASK/wake/N`")
    at: Timestamp | None = Field(default=None, description="wake at this time (and, with `when`, the condition's deadline)")
    when: WakeCondition | None = Field(default=None, description="wake when a signal matches; give `at`, `when` or both")
    reason: str | None = Field(default=None, description="why, in the trail (absent: `self-scheduled wake-up`)")

    @model_validator(mode="after")
    def _time_or_condition(self) -> TaskWake:
        if self.at is None and self.when is None:
            raise ValueError("give `at` (a time), `when` (a condition: channel and watch) or both")
        if self.at is not None and self.when is not None and (self.when.deadline or self.when.if_unresolved):
            raise ValueError("with both `at` and `when`, `at` is the condition's deadline: drop when.deadline/when.if_unresolved")
        return self


class WorkflowOutput(Strict):
    task_id: Id = Field(description="the task that owns the workflow")
    workflow: str = Field(
        min_length=1, max_length=100, pattern=r"^[A-Za-z0-9_.-]+$", description="the workflow's name, used in the file name"
    )
    output: dict[str, Any] | list[Any] | str = Field(description="the output, stored in the task's `workflows/` folder")


def _timezone(value: str) -> str:
    try:
        check_timezone(value)
    except InvalidSettings as error:
        raise ValueError(str(error)) from None
    return value


MAX_SEND_LIMIT = 100_000


class ContactInfo(Strict):
    phone: ShortText | None = Field(default=None, description="the phone number given to contacts who need one")
    address: ShortText | None = Field(default=None, description="the street address")
    website: ShortText | None = Field(default=None, description="the website")

    @model_validator(mode="before")
    @classmethod
    def _known_keys(cls, data: Any) -> Any:
        if isinstance(data, dict):
            unknown = sorted(set(data) - set(CONTACT_INFO_FIELDS))
            if unknown:
                raise ValueError(f"unknown contact_info field(s) {', '.join(map(shown, unknown))}; "
                                 f"known: {', '.join(CONTACT_INFO_FIELDS)}")
        return data


class TenantProfileFields(Strict):
    """Seed 002 §23.1's profile in snake_case: how messages sound and sign off."""

    display_name: ShortText | None = Field(default=None, description="the name contacts know (not the legal name)")
    gym_type: ShortText | None = Field(default=None, description="what kind of business: `crossfit_box`, `yoga_studio`, …")
    owner_first_name: ShortText | None = Field(default=None, description="the owner's first name, for sign-offs")
    vibe: ShortText | None = Field(
        default=None, description="`casual_friendly`, `motivational`, `professional` or `community_first`: the tone"
    )
    class_types: list[ShortText] | None = Field(default=None, description="classes the messages may mention")
    special_programs: list[ShortText] | None = Field(default=None, description="programs the messages may mention")
    current_promo: ShortText | None = Field(default=None, description="the one promotion the messages may offer")
    typical_greeting: ShortText | None = Field(default=None, description="how messages open: `Hey!`, `Hi there,`")
    never_mention: list[ShortText] | None = Field(default=None, description="topics messages never mention")
    always_include: list[ShortText] | None = Field(default=None, description="what every message includes")
    sign_off: ShortText | None = Field(default=None, description="how messages are signed: `Coach Mike`")
    contact_info: ContactInfo | None = Field(default=None, description="how contacts reach the business")

    @model_validator(mode="before")
    @classmethod
    def _known_keys(cls, data: Any) -> Any:
        if isinstance(data, dict):
            unknown = sorted(set(data) - set(PROFILE_FIELDS))
            if unknown:
                raise ValueError(f"unknown profile field(s) {', '.join(map(shown, unknown))}; known: {', '.join(PROFILE_FIELDS)}")
        return data


class TenantConfigure(Strict):
    name: ShortText | None = Field(default=None, description="the tenant's name, as the owner reads it")
    timezone: Annotated[str, AfterValidator(_timezone)] | None = Field(
        default=None, description="an IANA time zone (`Europe/Berlin`); the daily send limit counts local days; absent: `UTC`"
    )
    owner_email: ShortText | None = Field(default=None, description="where the owner is told about reviews and escalations")
    execution_mode: Literal["manual", "limited_auto", "auto"] | None = Field(
        default=None, description="`manual`: every task Loopline works waits for review; `limited_auto`: escalation "
        "triggers, then the type's threshold; `auto`: escalation triggers only; absent: `manual`"
    )
    member_weekly_limit: int | None = Field(
        default=None, ge=0, le=MAX_SEND_LIMIT, description="messages one contact may get in any 7 days; absent: 3"
    )
    daily_send_limit: int | None = Field(
        default=None, ge=0, le=MAX_SEND_LIMIT, description="messages the tenant may send in one local day; absent: 15"
    )
    profile: TenantProfileFields | None = Field(default=None, description="merged key by key with what was set before")


class EmailReceived(Signal):
    sender: Text = Field(description="who sent it; matched ignoring case")
    thread_id: str | None = Field(default=None, description="its thread; matched when the watch names one")
    subject: str | None = Field(default=None, description="kept with the signal")
    body: str | None = Field(default=None, description="kept with the signal")


class SlackMessage(Signal):
    slack_user_id: Text = Field(description="who wrote it")
    channel_id: Text = Field(description="where")
    ts: Text = Field(description="its Slack timestamp; resolves a watch only when later than its `after_ts`")
    text: str | None = Field(default=None, description="kept with the signal")


class GithubEvent(Signal):
    event_type: Literal["pull_request_review", "pull_request_merged", "issue_closed"] = Field(description="what happened")
    repo: Text = Field(description="the repository; matched when the watch names one")
    resource_id: Text = Field(description="the pull request or issue")


class CalendarEvent(Signal):
    event_type: Literal["invite_accepted", "event_started", "event_updated"] = Field(description="what happened")
    event_id: Text = Field(description="the calendar event")
    attendee_email: str | None = Field(default=None, description="who; matched when the watch names one")


class LinearEvent(Signal):
    event_type: Literal["issue_status_changed"] = Field(description="what happened")
    issue_id: Text = Field(description="the issue")
    status: str | None = Field(default=None, description="the new status; must equal the watch's `target_status` when it names one")


class WebhookReceived(Signal):
    source: Text = Field(description="who sent the webhook")
    trigger_name: Text = Field(description="what it reports")
    payload: dict[str, Any] = Field(default_factory=dict, description="its body; must carry every `match_fields` entry of the watch")


class UserSeen(Signal):
    """The owner was active: the tenant's proactive run starts if it has not."""


class OutcomeObserved(Signal):
    contact: ShortText = Field(description="who the outcome is about")
    outcome: Text = Field(description="what came of it, kept as a record")
    value: float | None = Field(default=None, description="a number for it, kept as a record")


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
    typed.ConfigureTenant: TenantConfigure,
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


SHOWN_ERRORS = 5
"""A reason names this many problems at most, so one line's reason stays readable."""


def _explain(error: ValidationError, prefix: str = "") -> str:
    def where(loc: tuple) -> str:
        path = ".".join(str(part) for part in loc)
        return f"{prefix}{path}" if path else (prefix.rstrip(".") or "message")

    items = error.errors()
    said = "; ".join(f"{where(item['loc'])}: {item['msg'].removeprefix('Value error, ')}" for item in items[:SHOWN_ERRORS])
    return said + (f"; and {len(items) - SHOWN_ERRORS} more" if len(items) > SHOWN_ERRORS else "")


DEADLINES: dict[str, tuple[str, ...]] = {
    "action.record": ("deadline",),
    "loop.register": ("deadline",),
    "task.wake": ("at", "when.deadline"),
    "run.schedule": ("at",),
}
"""The times of each command type that must not come before the message's own `at`."""


def parse_message(raw: str | bytes) -> Message:
    """The message the bytes hold, or InvalidMessage saying what was wrong: nothing else escapes,
    whatever the bytes, so one bad line or record never stops the rest."""
    try:
        return _parse(raw)
    except InvalidMessage:
        raise
    except Exception as error:  # the edge is total: an unforeseen failure rejects this message, not the batch
        raise InvalidMessage(f"could not be read: {type(error).__name__}: {shown(str(error))}") from None


def _parse(raw: str | bytes) -> Message:
    try:
        document = read_document(raw)
    except UnreadableInput as error:
        raise InvalidMessage(str(error)) from None
    try:
        envelope = Envelope.model_validate(document)
    except ValidationError as error:
        raise InvalidMessage(_explain(error)) from None
    schema = SCHEMAS.get((envelope.kind, envelope.type))
    if schema is None:
        known = ", ".join(t for k, t in SCHEMAS if k == envelope.kind)
        raise InvalidMessage(f"type: unknown {envelope.kind} type {shown(envelope.type)!r}; known: {known}")
    try:
        validated = schema.model_validate(envelope.data)
        if isinstance(validated, ActionRecord):
            validated = _validate_action(validated, envelope.data)
    except ValidationError as error:
        raise InvalidMessage(_explain(error, prefix="data.")) from None
    _check_not_before(envelope.at, envelope.type, validated)
    data = validated.model_dump(mode="json", exclude_none=True)
    return Message(
        kind=envelope.kind, ref=envelope.id, type=envelope.type, tenant=envelope.tenant, at=envelope.at, data=data,
        command=command_from_data(envelope.type, data) if envelope.kind == "command" else None,
    )


def _check_not_before(at: datetime, message_type: str, validated: BaseModel) -> None:
    for path in DEADLINES.get(message_type, ()):
        value: Any = validated
        for part in path.split("."):
            value = getattr(value, part, None)
        if isinstance(value, datetime) and value < at:
            raise InvalidMessage(
                f"data.{path}: {format_time(value)} is before the message's at {format_time(at)}; "
                "a deadline cannot be in the message's past"
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
