"""The actions Loopline can take for a task beyond writing an email, each with its safety profile (seed 002 §15).

One table (`ACTIONS`) declares every kind: who it reaches, whether it can be undone, what being wrong costs, what it
counts against, how delivery carries it and the params it takes. Whether an action waits for the owner follows from
its profile and the tenant's execution mode (`needs_approval`); the executor (`processors/handlers/actions.py`) and
the command's checks read nothing else.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from loopline.domain.errors import DomainError
from loopline.domain.mailbox import NotAMailbox, mailbox
from loopline.domain.timeutil import format_time, parse_time

Affects = Literal["contact", "staff", "system"]
"""Who an action reaches: the task's contact (a member, a lead), the business's own people, or another system."""
Cost = Literal["low", "medium", "high"]
"""What a wrong action costs: high for what a contact reads and cannot unread."""


class InvalidAction(DomainError):
    """An action request names no known action, or misses or misspells one of its params."""


@dataclass(frozen=True)
class Param:
    name: str
    does: str
    kind: Literal["text", "time", "mailbox", "phone", "minutes", "object"] = "text"
    required: bool = True


@dataclass(frozen=True)
class ActionProfile:
    """One kind of action: its safety profile (§15.2) and how the one executor carries it out (§15.3)."""

    name: str
    does: str
    affects: Affects
    reversible: bool
    cost_of_error: Cost
    counts_messages: bool
    """It is a message to the contact: the task's message budget and every send check count it."""
    channel: str | None
    """The delivery channel that carries it (`processors/followers/delivery.py`); None: Loopline keeps it itself."""
    params: tuple[Param, ...]

    @property
    def reaches_contact(self) -> bool:
        return self.affects == "contact"

    @property
    def requires_approval(self) -> bool:
        """§15.2: what a contact receives and cannot be taken back, or what costs much when wrong, waits for the owner
        even where the tenant lets the agent act (`limited_auto`)."""
        return self.cost_of_error == "high" or (self.reaches_contact and not self.reversible)


def needs_approval(profile: ActionProfile, execution_mode: str) -> bool:
    """In `manual` mode the owner approves every action that leaves Loopline; in `limited_auto` those whose profile
    requires it. A staff to-do only reaches the business's own people and never waits."""
    if execution_mode == "manual":
        return profile.channel is not None
    return profile.requires_approval


def _p(name: str, does: str, kind: Any = "text", required: bool = True) -> Param:
    return Param(name, does, kind, required)


ACTIONS: dict[str, ActionProfile] = {
    profile.name: profile
    for profile in (
        ActionProfile(
            "send_email", "an email to the contact, through the send checks", "contact", reversible=False,
            cost_of_error="high", counts_messages=True, channel="smtp",
            params=(_p("subject", "the subject line"), _p("body", "the email's text"),
                    _p("to", "the address (absent: the task's contact)", "mailbox", required=False)),
        ),
        ActionProfile(
            "send_sms", "a text message to the contact's phone, through the send checks", "contact",
            reversible=False, cost_of_error="high", counts_messages=True, channel="sms",
            params=(_p("to", "the phone number, +<country><number>", "phone"), _p("body", "the message's text")),
        ),
        ActionProfile(
            "calendar_invite", "a calendar invitation (.ics) emailed to the contact", "contact", reversible=False,
            cost_of_error="medium", counts_messages=True, channel="smtp",
            params=(_p("title", "what the event is"), _p("starts_at", "when it starts (ISO 8601)", "time"),
                    _p("duration_minutes", "how long it lasts, in minutes (absent: 60)", "minutes", required=False),
                    _p("location", "where it is", required=False),
                    _p("to", "the address (absent: the task's contact)", "mailbox", required=False)),
        ),
        ActionProfile(
            "staff_todo", "a to-do for someone at the business, reminded until it is done", "staff", reversible=True,
            cost_of_error="low", counts_messages=False, channel=None,
            params=(_p("title", "what to do"), _p("assigned_to", "who does it (the owner, a coach, the front desk)"),
                    _p("due_at", "when it is due (ISO 8601): the reminders start then", "time")),
        ),
        ActionProfile(
            "call_webhook", "a signed POST to the deployment's webhook (LOOPLINE_WEBHOOK_URL)", "system",
            reversible=False, cost_of_error="medium", counts_messages=False, channel="webhook",
            params=(_p("event", "the name the receiver dispatches on"),
                    _p("payload", "the JSON object it receives", "object", required=False)),
        ),
    )
}
"""Every action kind, by name (seed 002 §15.1's kinds that Loopline carries out itself)."""


def reaches_contact(action: str) -> bool:
    """Whether an action Loopline sends is read by the task's contact: every kind of the registry that affects them,
    and the emails outreach sends itself (touches, follow-ups, reminders)."""
    return action not in ACTIONS or ACTIONS[action].reaches_contact


def action_profile(name: str) -> ActionProfile:
    try:
        return ACTIONS[name]
    except KeyError:
        raise InvalidAction(f"action {name!r} is not one of {', '.join(ACTIONS)}") from None


def check_params(profile: ActionProfile, params: dict[str, Any]) -> dict[str, Any]:
    """The params as the executor uses them (times as ISO strings, mailboxes normalised); raises InvalidAction naming
    the param that is missing, unknown or malformed, and what to send instead."""
    known = {param.name: param for param in profile.params}
    unknown = sorted(set(params) - set(known))
    if unknown:
        raise InvalidAction(f"params.{unknown[0]}: {profile.name} takes no {unknown[0]!r}; it takes "
                            + ", ".join(known))
    checked: dict[str, Any] = {}
    for param in profile.params:
        value = params.get(param.name)
        if value is None or value == "":
            if param.required:
                raise InvalidAction(f"params.{param.name}: {profile.name} needs {param.name} ({param.does})")
            continue
        checked[param.name] = _checked(profile.name, param, value)
    return checked


def _checked(action: str, param: Param, value: Any) -> Any:
    where = f"params.{param.name}"
    if param.kind == "object":
        if not isinstance(value, dict):
            raise InvalidAction(f"{where}: {action} takes a JSON object ({param.does})")
        return value
    if param.kind == "minutes":
        if isinstance(value, bool) or not isinstance(value, int) or not 0 < value <= 24 * 60:
            raise InvalidAction(f"{where}: a whole number of minutes from 1 to 1440 ({param.does})")
        return value
    if not isinstance(value, str):
        raise InvalidAction(f"{where}: {action} takes text here ({param.does})")
    if param.kind == "time":
        try:
            return format_time(parse_time(value))
        except ValueError:
            raise InvalidAction(f"{where}: {value!r} is no ISO 8601 time; send e.g. 2026-03-05T18:00:00Z") from None
    if param.kind == "mailbox":
        try:
            return mailbox(value)
        except NotAMailbox as error:
            raise InvalidAction(f"{where}: {error}") from None
    if param.kind == "phone":
        digits = value.replace(" ", "").replace("-", "")
        if not (digits.startswith("+") and digits[1:].isdigit() and 8 <= len(digits) <= 16):
            raise InvalidAction(f"{where}: {value!r} is no phone number; send +<country code><number>, e.g. "
                                "+14155550123")
        return digits
    return value


def due_time(params: dict[str, Any], name: str) -> datetime:
    """A time param `check_params` kept as ISO text, as a datetime."""
    return parse_time(params[name])
