"""People's words for what a loop waits for: one phrase for the owner, another for the contact.

The owner may read task titles and the ids of their own world (a pull request number, a Slack
user); a contact reads neither a task title nor a loop id, and is greeted by a name only when a
message gave one (an address or channel name is never turned into a name).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timezone
from typing import Any

from loopline.domain.expectations import EXPECTATIONS


CONTACT_ASKS: dict[str | None, tuple[str, str]] = {
    **{action: (row.reminds_of, row.asks) for action, row in EXPECTATIONS.items()},
    None: ("my earlier message", "Would you have a moment to reply?"),
}
"""What a contact is reminded of and asked, by the action that opened the loop (None: a loop
registered by hand). Never the task's title: that is the owner's word for the work."""


def awaited(action: str, details: Mapping[str, Any]) -> str:
    """What an action's loop waits for, as the owner reads it ("a reply from rahul@x.com to my email")."""
    return EXPECTATIONS[action].awaited(details)


def awaited_from_watch(channel: str, watch: Mapping[str, Any]) -> str:
    """What a loop registered without a description waits for, from its channel and watch."""
    fields = ", ".join(f"{key} {value}" for key, value in sorted(watch.items()) if not isinstance(value, Mapping))
    article = "an" if channel[:1] in ("a", "e", "i", "o", "u") else "a"
    return f"{article} {channel} signal" + (f" with {fields}" if fields else "")


def greeting(name: str | None) -> str:
    """A name when a message gave one, else a neutral greeting."""
    return f"Hi {name}," if name else "Hello,"


def days_ago(days: int) -> str:
    if days <= 0:
        return "earlier today"
    return "yesterday" if days == 1 else f"{days} days ago"


def when(moment: datetime) -> str:
    """A time as a person writes it, in UTC like every time Loopline shows ("16 Mar 2026 10:00 UTC")."""
    moment = moment.astimezone(timezone.utc)
    return f"{moment.day} {moment:%b %Y %H:%M} UTC"


def count(n: int, one: str, many: str | None = None) -> str:
    """`1 reminder`, `2 reminders`, `3 replies` (pass `many` when adding an s is wrong)."""
    return f"{n} {one if n == 1 else (many or one + 's')}"


NEXT_STEP: dict[str, str] = {
    "draft_followup_email": "send a follow-up email",
    "send_reminder": "send a reminder",
    "notify_user": "tell the owner",
    "cancel_task": "cancel the task",
    "escalate_to_loop": "escalate to the owner",
    "wake_task": "wake the task",
    "next_touch": "the next step of the cadence",
}
"""What each deadline action does, in words (`processors/handlers/deadline_actions.py` takes them)."""

CLOSED_BECAUSE: dict[str, str] = {
    "signal_match": "answered",
    "expired": "the deadline passed with no answer",
    "manual": "resolved by hand",
    "cancelled": "closed: the task was cancelled",
    "task_completed": "closed: the task was completed",
    "superseded": "closed: a newer message waits for the answer",
    "suppressed": "closed: the contact is suppressed, nothing is sent to them",
}
"""Why a loop closed, in words, by its `resolved_by`."""


def one_line(text: str, most: int = 200) -> str:
    """The text on one line, cut at `most` characters with an ellipsis."""
    flat = " ".join(text.split())
    return flat if len(flat) <= most else flat[: most - 1] + "…"
