"""A task's conversation: every message sent and received, who wrote it and when.

Derived from the task's events, so prompts and the task memory folder read the same turns and a
rebuild gives the same conversation. Authors: `agent` (a message sent to the contact), `contact`
(an email that reached the task), `owner` (guidance, and what the owner wrote to the contact) and `system`
(escalations, decisions, and a contact's email another of their tasks answers).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from loopline.domain.actions import ACTIONS

Author = Literal["agent", "contact", "owner", "system"]
SENT_TO_CONTACT = ("send_reminder", *(name for name, profile in ACTIONS.items() if profile.reaches_contact))
"""Actions whose details carry the subject and body a contact reads: outreach's reminders and every action of the
registry that reaches the contact (an email, a text message, an invitation)."""


@dataclass(frozen=True)
class Turn:
    author: Author
    at: datetime
    text: str


def _message(subject: Any, body: Any) -> str:
    parts = [f"Subject: {subject}" if subject else "", str(body).strip() if body else ""]
    return "\n\n".join(part for part in parts if part)


def _sent(event: Any) -> Turn | None:
    if event.action not in SENT_TO_CONTACT:
        return None
    text = _message(event.details.get("subject"), event.details.get("body"))
    if not text:
        return None
    if event.action == "send_sms":  # the model should know the contact read it on their phone, not in the thread
        text = f"(by text message) {text}"
    if event.performed_by == "owner":  # the owner's words to the contact, not guidance to the agent
        return Turn("owner", event.timestamp, f"Wrote to {event.details.get('to') or 'the contact'}:\n\n{text}")
    return Turn("agent", event.timestamp, text)


def _received(event: Any) -> Turn | None:
    if event.signal_type != "email.received":
        return None
    text = str(event.data.get("body") or event.data.get("subject") or "").strip()
    return Turn("contact", event.timestamp, text) if text else None


def _noted(event: Any) -> Turn | None:
    text = str(event.data.get("body") or event.data.get("subject") or "").strip()
    return Turn("system", event.timestamp, f"The contact wrote this, and another of their tasks answers it (do not "
                f"answer it here):\n{text}") if text else None


def _guidance(event: Any) -> Turn:
    return Turn("owner", event.timestamp, event.text)


def _escalated(event: Any) -> Turn:
    return Turn("system", event.timestamp, f"Handed to the owner: {event.reason}")


def _decided(event: Any) -> Turn:
    return Turn("system", event.timestamp, f"Decided {event.decision} (confidence {event.confidence:.2f}): {event.reasoning}")


TURNS: dict[str, Callable[[Any], Turn | None]] = {
    "Task.ActionRecorded": _sent,
    "Task.SignalReceived": _received,
    "Task.ReplyNoted": _noted,
    "Task.GuidanceGiven": _guidance,
    "Task.Escalated": _escalated,
    "Task.DecisionRecorded": _decided,
}
"""Event class (by qualified name, so a new event joins without an import cycle) -> its turn, if any."""


def turn_of(event: Any) -> Turn | None:
    """The turn one event adds to the conversation, or None."""
    make = TURNS.get(type(event).__qualname__)
    return make(event) if make else None


def conversation_of(events: Iterable[Any]) -> tuple[Turn, ...]:
    """The turns of a task's events, in the order they happened."""
    return tuple(turn for turn in map(turn_of, events) if turn is not None)
