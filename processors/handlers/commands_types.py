"""Commands, each declared once: a pydantic model is what the edge validates a message's `data` with and what
its handler takes. Frozen and typed (times, named values, nested objects); the embedded log stores the
validated `data` as JSON and `processors/handlers/command_routes.py` `command_from_data` validates it again into the same
command, so both paths hand handlers equal objects.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import is_dataclass
from typing import Annotated, Any, Literal, get_origin, get_type_hints

from pydantic import AfterValidator, ConfigDict, Field, ValidationInfo, create_model, field_validator, model_validator

from loopline.processors import limits
from loopline.domain.channels import CHANNELS
from loopline.domain.errors import DomainError
from loopline.domain.expectations import EXPECTATIONS, DeadlineAction, Expectation
from loopline.domain.gate import is_email
from loopline.domain.status import TaskStatus
from loopline.domain.task_types import TASK_TYPES, UnknownTaskType, check_task_type
from loopline.domain.tenant import TenantProfile, TenantSettings, setting_names
from loopline.processors.handlers.command_fields import (
    STORED,
    Contact,
    Id,
    Mailbox,
    MatchFields,
    ShortText,
    Strict,
    Text,
    Timestamp,
    Watch,
    unknown_keys,
    watched_mailbox,
)


class TaskDraft(Strict):
    subject: Text = Field(description="the email's subject")
    body: Text = Field(description="the email's text")


class TaskOrigin(Strict):
    kind: Literal["run", "signal", "task"] = Field(
        description="`run`: one analysis run of the agent; `signal`: one signal it reacts to; `task`: another task's "
        "work (an agent-spawned task)"
    )
    id: Id = Field(description="the run's, the signal's or the task's id")


class TaskCreate(Strict):
    task_id: Id = Field(description="the task's id, chosen by the agent; a second `task.create` with it changes nothing")
    title: Text = Field(description="what the task is, as the owner reads it")
    description: str | None = Field(default=None, description="more detail, kept on the task")
    task_type: str | None = Field(
        default=None,
        description="a type of the task type table: sets budgets, cadence, expiry and review; absent: `ad_hoc`, "
        "worked by the agent (Loopline follows through); an unknown type is refused, naming the closest known one",
    )
    expires_in_days: int | None = Field(
        default=None, ge=1, le=limits.MAX_EXPIRES_IN_DAYS,
        description="days until the task expires; absent: its type's (14, none for `inbox_management`)",
    )
    priority: Literal["low", "med", "medium", "high", "critical"] | None = Field(default=None, description="kept on the task")
    contact: Contact | None = Field(
        default=None,
        description="who the task is with (an address or a name), shown with the task; an address is kept as its "
        "mailbox (display name, comments, quotes, a trailing dot and case dropped; `<>` or a line break refused); "
        "with a `task_type` that sends, it must be an email address, and Loopline works the task itself, one open "
        "task per contact and type",
    )
    urgency: float | None = Field(
        default=None, ge=0, le=1,
        description="a model's urgency score, 0 to 1, which the tenant's `urgency_at_least` priority rules read; "
        "recorded with the priority it set",
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
    origin: TaskOrigin | None = Field(
        default=None, description="what led the agent to create a task Loopline works, for the creation limits (see "
        "[Safety](#safety)); a spawned one (`task`) always waits for review",
    )

    # Data read back from the log passed these checks when it was appended (`STORED`): the handler decides then.
    @field_validator("task_type")
    @classmethod
    def _known_type(cls, name: str | None, info: ValidationInfo) -> str | None:
        if name is not None and info.context != STORED:
            try:
                check_task_type(name)
            except UnknownTaskType as error:
                raise ValueError(str(error)) from None
        return name

    @field_validator("contact")
    @classmethod
    def _an_address_to_send_to(cls, contact: str | None, info: ValidationInfo) -> str | None:
        kind = TASK_TYPES.get(info.data.get("task_type") or "")
        if contact is not None and kind is not None and kind.can_send and not is_email(contact) and info.context != STORED:
            raise ValueError(f"{limits.shown(contact)!r} is not an email address, and task_type {kind.name} sends email to its contact: "
                             "give the contact's address (name@example.com), or leave task_type out to follow the task "
                             "through")
        return contact


class ActionRecordCommon(Strict):
    """The fields every action takes; each action's own fields come from its contract row (`ACTION_SCHEMAS`)."""

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

    @property
    def details(self) -> dict[str, Any]:
        """What is recorded with the action, as JSON: its own fields (`to`, `thread_id`, `repo`, …) and the
        sent message's id; not the task, the action, its summary or the loop it implies."""
        return {key: value for key, value in self.model_dump(mode="json", exclude_none=True).items()
                if key not in _NOT_DETAILS}


_NOT_DETAILS = frozenset({"task_id", "action", "summary", "loop_id", "deadline", "if_unresolved", "expect"})


class ActionRecord(ActionRecordCommon):
    """The first pass: the common fields, then the action's own schema (`ACTION_SCHEMAS`) or, for a
    custom action with `"expect": false`, its fields as given."""

    model_config = ConfigDict(extra="allow")


_FIELD_TYPES: dict[Any, Any] = {str: Text, list[str]: list[Text], dict[str, Any]: MatchFields}
"""What each type a contract row names is at the edge: text is never blank, objects map to text."""


def _action_schema(row: Expectation) -> type[ActionRecordCommon]:
    fields: dict[str, Any] = {}
    for spec in row.fields:
        kind = Mailbox if spec.mailbox else _FIELD_TYPES.get(spec.type, spec.type)
        if spec.required:
            fields[spec.name] = (kind, Field(description=spec.doc))
        else:
            fields[spec.name] = (kind | None, Field(default=None, description=spec.doc))
    return create_model(f"ActionRecord_{row.action}", __base__=ActionRecordCommon, **fields)


ACTION_SCHEMAS: dict[str, type[ActionRecordCommon]] = {action: _action_schema(row) for action, row in EXPECTATIONS.items()}


def action_schema(action: Any) -> type[ActionRecordCommon]:
    """The schema an `action.record` of `action` is validated by: its contract's, else a custom action's."""
    return ACTION_SCHEMAS.get(action, ActionRecord)


class LoopRegister(Strict):
    loop_id: Id = Field(description="the loop's id, chosen by the agent")
    task_id: Id = Field(description="the task the loop belongs to")
    channel: Text = Field(description="where the answer comes from: a channel of [Channels and their watch fields](#channels-and-their-watch-fields)")
    watch: Watch = Field(description="the fields a signal must match, by its channel's rule")
    deadline: Timestamp = Field(description="when the loop expires unresolved")
    if_unresolved: DeadlineAction = Field(strict=False, description="what happens at the deadline")
    description: str | None = Field(default=None, description="what the loop waits for, as the owner reads it")

    @field_validator("watch")
    @classmethod
    def _mailboxes(cls, watch: dict[str, Any], info: ValidationInfo) -> dict[str, Any]:
        return _watched_mailboxes(watch, info)


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


class TaskApprove(TaskReview):
    task_id: Id = Field(description="a task in `pending_review`, or an `escalated` one with a draft held back")
    draft: TaskDraft | None = Field(
        default=None, description="the message as the owner edited it, sent instead of the agent's: a "
        "`pending_review` task's first touch (at the next tick), or an escalated task's held-back draft (at once, "
        "`Re:` the thread's first subject); absent: the agent's as it is",
    )


class TaskReply(Strict):
    task_id: Id = Field(description="a task Loopline works, open and not in `pending_review`")
    body: Text = Field(description="the owner's own words, sent to the contact in the task's thread through the "
                       "same send limits, and kept in the conversation as the owner's")
    subject: Text | None = Field(default=None, description="the subject of a first message; once one was sent, every "
                                 "message is `Re:` the thread's first subject, so the contact reads one conversation")


class TaskTakeover(Strict):
    task_id: Id = Field(description="a task the agent has started (`executing`, `waiting`, `dormant` or `escalated`)")
    reason: str | None = Field(default=None, description="what the owner did, in the trail (absent: `the owner took "
                               "over`)")


class ContactResubscribe(Strict):
    contact: Mailbox = Field(description="a suppressed contact's address, kept as its mailbox; Loopline may email them "
                             "again, from tasks created after this")
    reason: Text = Field(description="how they opted back in, in the trail")


class TaskGuidance(Strict):
    task_id: Id = Field(description="an `escalated` task; it resumes `executing`")
    text: Text = Field(description="the owner's guidance, in the trail; on a contact's reply nothing has answered yet, "
                       "the model writes the answer with it (`loopline prompt` shows it), sent as any reply is")


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

    @field_validator("watch")
    @classmethod
    def _mailboxes(cls, watch: dict[str, Any], info: ValidationInfo) -> dict[str, Any]:
        return _watched_mailboxes(watch, info)


def _watched_mailboxes(watch: dict[str, Any], info: ValidationInfo) -> dict[str, Any]:
    """A hand-written watch keeps each address its channel matches as its mailbox, as the signal it waits for
    does (`email`'s sender): `Bob <BOB@x.com>` waits for bob@x.com, and `<>` is refused, the field named."""
    rule = CHANNELS.get(info.data.get("channel", ""))
    if rule is None or info.context == STORED:
        return watch
    addresses = {spec.name for spec in rule.signal_fields if spec.mailbox}
    return {key: watched_mailbox(key, value) if key in addresses else value for key, value in watch.items()}


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


def _checked(check: Callable[[Any], None]) -> Callable[[Any], Any]:
    """A domain check as a validator: its domain error becomes the edge's error, in the same words."""

    def validate(value: Any) -> Any:
        try:
            check(value)
        except DomainError as error:
            raise ValueError(str(error)) from None
        return value

    return validate


def _setting_field(kind: Any, spec: dataclasses.Field[Any]) -> tuple[Any, Any]:
    """A setting at the edge: optional (absent leaves it as it was), text never blank and bounded, lists of such
    text, numbers within the setting's bounds, a nested group its own model."""
    meta = spec.metadata
    if is_dataclass(kind):
        kind = _settings_model(kind, f"{spec.name} field")
    elif meta["check"] is not None and get_origin(kind) is tuple:  # the priority rules: objects the check reads
        kind = Annotated[list[dict[str, Any]], AfterValidator(_checked(meta["check"]))]
    elif meta["check"] is not None and get_origin(kind) is Mapping:  # the webhook secrets: a name to a secret
        kind = Annotated[dict[str, str], AfterValidator(_checked(meta["check"]))]
    elif meta["check"] is not None:
        kind = Annotated[str, AfterValidator(_checked(meta["check"]))]
    elif get_origin(kind) is tuple:
        kind = list[ShortText]
    elif kind in (str, str | None):
        kind = ShortText
    bounds = {"ge": 0, "le": meta["most"]} if meta["most"] is not None else {}
    return kind | None, Field(default=None, description=meta["doc"], **bounds)


_MODEL_NAMES = {TenantProfile: "TenantProfileFields", TenantSettings: "TenantSettingsFields"}
"""The edge's name of a group's model where it differs from the domain class's: an error names the model
("… or instance of TenantProfileFields"), and a model named like its domain class would read as that class."""


def _settings_model(group: type, unknown: str | None = None) -> type[Strict]:
    """The edge's model of a settings group of `domain/tenant.py`; a nested group names a key it does not know."""
    kinds = get_type_hints(group)
    validators = {}
    if unknown is not None:
        known = setting_names(group)

        def known_keys(cls: type, data: Any) -> Any:
            return unknown_keys(data, known, unknown)

        validators["_known_keys"] = model_validator(mode="before")(known_keys)
    return create_model(  # type: ignore[call-overload, no-any-return]
        _MODEL_NAMES.get(group, group.__name__), __base__=Strict, __validators__=validators,
        **{spec.name: _setting_field(kinds[spec.name], spec) for spec in dataclasses.fields(group)},
    )


class TenantConfigure(_settings_model(TenantSettings)):  # type: ignore[misc]
    """`tenant.configure`: any of the tenant's settings (`domain/tenant.py` declares them), each left as it was
    when absent."""

    def given(self) -> dict[str, Any]:
        """The settings this command sets: every field it was given (the rest stay as they are)."""
        return self.model_dump(mode="json", exclude_none=True)


class TenantPause(Strict):
    """`tenant.pause` and `tenant.resume`: the tenant's own kill switch (seed 002 §7.6)."""

    reason: ShortText = Field(description="why, shown in `status`, `tenants show` and `audit`")
    by: ShortText | None = Field(default=None, description="who did it, in the trail (absent: `owner`)")


class SystemPause(Strict):
    """`system.pause` and `system.resume`: the emergency stop for every tenant (§7.14); the envelope's tenant is only
    who asked."""

    reason: ShortText = Field(description="why, shown in `status` and `audit`")
    by: ShortText | None = Field(default=None, description="who did it, in the trail (absent: `operator`)")
