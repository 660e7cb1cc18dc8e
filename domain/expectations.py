"""What each agent action implies should happen next (seed 000, "Automatic open loop detection").

One row per action is its whole contract: the channel its answer arrives on, the fields it takes
and which of them become the loop's watch, its default deadline and its deadline action, and the
words for what its loop waits for (`domain/wording.py` reads them). The edge validates
`action.record` from these rows and the README's action table is derived from them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import timedelta
from enum import StrEnum
from typing import Any

from loopline.domain.errors import DomainError


class DeadlineAction(StrEnum):
    """What a loop may name as `if_unresolved`; `processors/handlers/deadline_actions.py` has one handler each."""

    DRAFT_FOLLOWUP_EMAIL = "draft_followup_email"
    SEND_REMINDER = "send_reminder"
    NOTIFY_USER = "notify_user"
    CANCEL_TASK = "cancel_task"
    ESCALATE_TO_LOOP = "escalate_to_loop"


DEADLINE_ACTIONS: tuple[str, ...] = tuple(DeadlineAction)
WAKE_TASK = "wake_task"
"""The deadline action of a wake-up's condition loop ("in 3 days unless they reply first"): only
`task.wake` registers it, so it is not one of the actions a loop may name."""
NEXT_TOUCH = "next_touch"
"""The deadline action of an acting task's reply loop: the next step of its cadence (`processors/handlers/outreach.py`).
Only Loopline registers it, so, like `wake_task`, it is not one of the actions a loop may name."""
LOOPLINE_ONLY_ACTIONS: dict[str, str] = {WAKE_TASK: "wakeup", NEXT_TOUCH: "outreach"}
"""Deadline actions only Loopline's own loops take, with the origin of the loops that may."""


class UnknownAction(DomainError):
    """An action with no contract that still asks for an expectation."""


class ConflictingFields(DomainError):
    """Two fields of an action that set the same watch field with different values."""


@dataclass(frozen=True)
class ActionField:
    """One field an action takes: its type, whether it is required, the watch field it becomes (a dotted
    path such as `match_fields.resource_id`, or None when it is only recorded with the action), and
    whether it is an address (kept as its normalised mailbox, `domain/mailbox.py`)."""

    name: str
    type: Any = str
    required: bool = False
    watch: str | None = None
    doc: str = ""
    mailbox: bool = False


@dataclass(frozen=True)
class Expectation:
    action: str
    expects: str
    channel: str
    default_deadline: timedelta
    if_unresolved: DeadlineAction
    fields: tuple[ActionField, ...]
    awaited: Callable[[Mapping[str, Any]], str]
    """What the loop waits for, as the owner reads it, from the fields recorded with the action."""
    reminds_of: str
    """What a reminder to the contact calls the thing sent; never the task's title (the owner's word for the work)."""
    asks: str
    """What a reminder asks the contact."""
    watch_defaults: Mapping[str, Any] = field(default_factory=dict)
    """Watch fields the action implies whatever its fields say (a calendar invite awaits `invite_accepted`)."""

    def watch(self, details: Mapping[str, Any]) -> dict[str, Any]:
        """The watch this action implies, from the fields recorded with it."""
        watch: dict[str, Any] = {key: dict(value) if isinstance(value, Mapping) else value
                                 for key, value in self.watch_defaults.items()}
        set_by: dict[str, str] = {}
        for spec in self.fields:
            value = details.get(spec.name)
            if spec.watch is None or value is None:
                continue
            *parents, leaf = spec.watch.split(".")
            target = watch
            for parent in parents:
                target = target.setdefault(parent, {})
            if isinstance(value, Mapping):
                target = target.setdefault(leaf, {})
                for key, item in value.items():
                    _put(target, key, item, f"{spec.watch}.{key}", spec.name, set_by)
            else:
                _put(target, leaf, value, spec.watch, spec.name, set_by)
        return watch


def _put(target: dict[str, Any], key: str, value: Any, path: str, source: str, set_by: dict[str, str]) -> None:
    if path in set_by and target[key] != value:
        raise ConflictingFields(f"{set_by[path]} and {source} both set the watch's {path}, to different values")
    target[key] = value
    set_by[path] = source


def _quoted(subject: Any) -> str:
    return f" “{subject}”" if subject else ""


def _to(details: Mapping[str, Any]) -> str:
    return f" to {details['to']}" if details.get("to") else ""


def _webhook_fields(thing: str, trigger: str) -> tuple[ActionField, ...]:
    return (
        ActionField("resource_id", watch="match_fields.resource_id",
                    doc=f"the {thing}'s id; only a webhook whose payload carries this `resource_id` resolves the loop"),
        ActionField("match_fields", type=dict[str, Any], watch="match_fields",
                    doc="payload fields the completing webhook must carry with these values"),
        ActionField("source", watch="source", doc="the webhook's source (default `loopline`)"),
        ActionField("trigger_name", watch="trigger_name", doc=f"the webhook's trigger (default `{trigger}`)"),
        ActionField("to", doc="who it went to; a reminder goes to them"),
        ActionField("to_name", doc="their name, to greet them by in a reminder (else a neutral greeting)"),
    )


_CONTRACTS = (
    Expectation(
        "send_email", "Reply from recipient", "email", timedelta(days=3), DeadlineAction.DRAFT_FOLLOWUP_EMAIL,
        fields=(
            ActionField("to", required=True, watch="sender", mailbox=True,
                        doc="the recipient, kept as its mailbox; a reply from them resolves the loop"),
            ActionField("thread_id", watch="thread_id", doc="only a reply in this thread resolves the loop"),
            ActionField("subject", doc="the email's subject; a follow-up answers it with `Re:`"),
            ActionField("message_id", doc="the sent email's Message-ID; a follow-up is threaded under it"),
            ActionField("body", doc="the text sent"),
            ActionField("to_name", doc="the recipient's name, to greet them by in a follow-up (else a neutral greeting)"),
        ),
        awaited=lambda d: f"a reply from {d.get('to') or 'the recipient'} to my email{_quoted(d.get('subject'))}",
        reminds_of="my email", asks="Would you have a moment to reply?",
    ),
    Expectation(
        "create_calendar_invite", "Acceptance from invitees", "calendar", timedelta(hours=24),
        DeadlineAction.NOTIFY_USER,
        fields=(
            ActionField("event_id", required=True, watch="event_id", doc="the event; its `invite_accepted` resolves the loop"),
            ActionField("attendee_email", watch="attendee_email", doc="only this invitee's acceptance resolves the loop"),
            ActionField("attendees", type=list[str], doc="everyone invited"),
        ),
        awaited=lambda d: (
            f"an acceptance of my calendar invite{_quoted(d.get('event_id'))} from {d.get('attendee_email') or 'the invitees'}"
        ),
        reminds_of="my calendar invitation", asks="Could you let me know whether you can make it?",
        watch_defaults={"event_type": "invite_accepted"},
    ),
    Expectation(
        "send_contract", "Signed return or acknowledgment", "webhook", timedelta(days=7), DeadlineAction.SEND_REMINDER,
        fields=_webhook_fields("document", "document_signed"),
        awaited=lambda d: f"the signed document (or an acknowledgment) I sent{_to(d)}",
        reminds_of="the document to sign", asks="Could you sign and return it, or let me know it arrived?",
        watch_defaults={"source": "loopline", "trigger_name": "document_signed"},
    ),
    Expectation(
        "open_pull_request", "Review from team", "github", timedelta(days=2), DeadlineAction.SEND_REMINDER,
        fields=(
            ActionField("resource_id", required=True, watch="resource_id", doc="the pull request; its review resolves the loop"),
            ActionField("repo", watch="repo", doc="only a review in this repository resolves the loop"),
        ),
        awaited=lambda d: (
            f"a review of my pull request {d.get('resource_id')}" + (f" in {d['repo']}" if d.get("repo") else "")
        ),
        reminds_of="my pull request", asks="Could you take a look and review it?",
        watch_defaults={"event_type": "pull_request_review"},
    ),
    Expectation(
        "send_slack_dm", "Response from recipient", "slack", timedelta(hours=4), DeadlineAction.NOTIFY_USER,
        fields=(
            ActionField("slack_user_id", required=True, watch="slack_user_id", doc="the recipient"),
            ActionField("channel_id", required=True, watch="channel_id", doc="the DM channel"),
            ActionField("ts", watch="after_ts", doc="the sent message's ts; only a later message resolves the loop"),
            ActionField("after_ts", watch="after_ts", doc="the same as `ts`"),
            ActionField("text", doc="the text sent"),
        ),
        awaited=lambda d: f"a reply from Slack user {d.get('slack_user_id')} to my direct message",
        reminds_of="my message", asks="Would you have a moment to reply?",
    ),
    Expectation(
        "create_todo", "Completion or acknowledgment", "webhook", timedelta(days=2), DeadlineAction.SEND_REMINDER,
        fields=_webhook_fields("todo", "todo_completed"),
        awaited=lambda d: "completion (or an acknowledgment) of the to-do I created" + (
            f" for {d['to']}" if d.get("to") else ""),
        reminds_of="the to-do", asks="Could you let me know once it is done?",
        watch_defaults={"source": "loopline", "trigger_name": "todo_completed"},
    ),
)

EXPECTATIONS: dict[str, Expectation] = {row.action: row for row in _CONTRACTS}


def expectation_for(action: str) -> Expectation:
    try:
        return EXPECTATIONS[action]
    except KeyError:
        raise UnknownAction(
            f"unknown action {action!r}; known actions: {', '.join(EXPECTATIONS)}. A custom action passes "
            '"expect": false (recorded, no loop) or registers its loop with loop.register'
        ) from None
