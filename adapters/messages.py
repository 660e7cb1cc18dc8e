"""The JSON message contract (README "Messages"), validated with pydantic at the edge and turned into `Message`s.

Command types come from `processors/handlers/command_routes.py` COMMANDS (each row names the command model its
`data` is validated into, `processors/handlers/commands_types.py`); `action.record` is validated per action
from the contracts in `domain/expectations.py`. Signals are strict on the fields they are matched
on and keep any other payload field, as real webhooks carry more. Types are strict (no coercion),
ids and times have one shape each, and the bytes are read within `processors/limits.py` by
`adapters/strict_json.py`: `parse_message` raises nothing but InvalidMessage, whatever the input.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model

from loopline.adapters.strict_json import UnreadableInput, read_document
from loopline.processors.limits import shown
from loopline.domain.channels import CHANNELS, ChannelRule, SignalField
from loopline.domain.expectations import EXPECTATIONS, ConflictingFields, UnknownAction, expectation_for
from loopline.domain.timeutil import format_time
from loopline.processors.handlers.command_fields import Contact, Id, Mailbox, Strict, Text, Timestamp
from loopline.processors.handlers.command_routes import COMMANDS
from loopline.processors.handlers.commands_types import ACTION_SCHEMAS, ActionRecord, ActionRecordCommon
from loopline.processors.messages import Message


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


def _signal_field(spec: SignalField) -> tuple[Any, Any]:
    """A channel's signal field at the edge: an address is its normalised mailbox, a matched field non-blank text
    (or one of its named values), an optional one any string, an object defaults to empty."""
    if spec.type is dict:
        return dict[str, Any], Field(default_factory=dict, description=spec.doc)
    if spec.mailbox:
        return (Mailbox if spec.required else Mailbox | None), Field(default=... if spec.required else None, description=spec.doc)
    if spec.required:
        return (Literal[spec.values] if spec.values else Text), Field(description=spec.doc)
    return str | None, Field(default=None, description=spec.doc)


def _signal_schema(rule: ChannelRule) -> type[Signal]:
    """The schema of a channel's signal, from the fields its module in `domain/channels/` declares."""
    fields = {spec.name: _signal_field(spec) for spec in rule.signal_fields}
    return create_model(f"Signal_{rule.channel}", __base__=Signal, **fields)  # type: ignore[call-overload, no-any-return]


class UserSeen(Signal):
    """The owner was active: the tenant's proactive run starts if it has not."""


class OutcomeObserved(Signal):
    """A fact about a contact (seed 002 §9): it closes, or revises the outcome of, their tasks whose type counts it."""

    contact: Contact = Field(description="who the outcome is about (an address is kept as its mailbox); it reaches "
                             "their tasks")
    outcome: Text = Field(description="the signal's kind: `checkin`, `payment_succeeded`, `reactivation`, "
                          "`trial_booked`, `class_booked`, `refund`, `cancellation`, …; each task type maps the kinds "
                          "it counts to an outcome of its own")
    value: float | None = Field(default=None, description="an amount (a payment's): the value the outcome is credited "
                                "with instead of the type's multiplier")
    account: str | None = Field(default=None, description="the member account behind it when it is not the "
                                "contact's own (a family member's checkin): it then counts for none of the contact's tasks, unless a task's "
                                "context names it as theirs")


class ContactUnsubscribed(Signal):
    """What the `List-Unsubscribe` target of an email Loopline sent produces: the contact is suppressed."""

    contact: Mailbox = Field(description="who unsubscribed, kept as its mailbox; suppressed, and their open tasks close "
                             "as `opted_out`")


class EmailBounced(Signal):
    contact: Mailbox = Field(description="whose address bounced, kept as its mailbox")
    bounce_type: Literal["hard", "soft"] = Field(description="`hard` suppresses the contact (their open tasks close "
                                                 "as `undeliverable`); three `soft` count as one hard")
    detail: str | None = Field(default=None, description="the bounce's diagnostic, kept with the suppression")


class EmailComplained(Signal):
    contact: Mailbox = Field(description="who marked an email as spam, kept as its mailbox; suppressed, and their open "
                             "tasks close as `opted_out`")


SCHEMAS: dict[tuple[str, str], type[BaseModel]] = {
    **{("command", route.type): route.command for route in COMMANDS.values()},
    **{("signal", rule.signal_type): _signal_schema(rule) for rule in CHANNELS.values()},
    ("signal", "user.seen"): UserSeen,
    ("signal", "outcome.observed"): OutcomeObserved,
    ("signal", "contact.unsubscribed"): ContactUnsubscribed,
    ("signal", "email.bounced"): EmailBounced,
    ("signal", "email.complained"): EmailComplained,
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
        if schema is ActionRecordCommon:
            validated = _validate_action(ActionRecord.model_validate(envelope.data), envelope.data)
        else:
            validated = schema.model_validate(envelope.data)
    except ValidationError as error:
        raise InvalidMessage(_explain(error, prefix="data.")) from None
    if envelope.kind == "command":
        _check_not_before(envelope.at, validated)
    data = validated.model_dump(mode="json", exclude_none=True)
    return Message(
        kind=envelope.kind, ref=envelope.id, type=envelope.type, tenant=envelope.tenant, at=envelope.at, data=data,
        command=validated if envelope.kind == "command" else None,
    )


def _check_not_before(at: datetime, validated: BaseModel, prefix: str = "data.") -> None:
    """Every time a command gives (a deadline, a wake-up, a run) is when something should happen: never before
    the message's own `at`."""
    for name in type(validated).model_fields:
        value = getattr(validated, name)
        if isinstance(value, BaseModel):
            _check_not_before(at, value, f"{prefix}{name}.")
        elif isinstance(value, datetime) and value < at:
            raise InvalidMessage(
                f"{prefix}{name}: {format_time(value)} is before the message's at {format_time(at)}; "
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
