"""Which of a contact's acting tasks answers their reply (issue 18 item 1): the task whose message the reply
answers, named by its `in_reply_to` (or `thread_id`) Message-ID, else the task most recently active.
The contact's other tasks keep the reply in their context and do not answer it."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any, Protocol
from uuid import UUID

SENT_MESSAGE_ID = re.compile(r"<?loopline\.([0-9a-fA-F-]{36})\.\d+@", re.ASCII)
"""A Message-ID Loopline gave an email it sent (`adapters/smtp.py message_id`): the task's id and version."""
GUIDED = "/guidance/"
"""Joins a reply's signal ref and the task version in the ref of the decision guidance asks for on that reply."""


ANSWERED_BY = ("Task.TouchSent", "Task.NextTouchScheduled", "Task.OutOfOfficeReceived")
"""Events after which a reply is dealt with: a message went to the contact, an evaluation chose to wait, or the
reply was an automatic one (it wants no answer: the task waits for the contact's return)."""


class ActingTask(Protocol):
    id: UUID
    ref: str
    last_activity_at: datetime


def named_task_id(data: Mapping[str, Any]) -> UUID | None:
    """The task id in the Message-ID the reply says it answers (`in_reply_to`, or a `thread_id` that is one)."""
    for header in ("in_reply_to", "thread_id"):
        found = SENT_MESSAGE_ID.search(str(data.get(header) or ""))
        if found:
            return UUID(found.group(1))
    return None


def answering_task(tasks: Sequence[ActingTask], data: Mapping[str, Any]) -> ActingTask | None:
    """The task among `tasks` (the contact's open acting tasks) that answers the reply `data`, or None."""
    named = named_task_id(data)
    for task in tasks:
        if task.id == named:
            return task
    return max(tasks, key=lambda task: (task.last_activity_at, task.ref), default=None)


def unanswered_replies(events: Iterable[Any]) -> list[Any]:
    """The contact's emails (`Task.SignalReceived`) in a task's `events` that nothing has answered yet, oldest first."""
    waiting: list[Any] = []
    for event in events:
        kind = type(event).__qualname__
        if kind == "Task.SignalReceived" and event.signal_type == "email.received":
            waiting.append(event)
        elif kind in ANSWERED_BY:
            waiting = []
    return waiting


def unanswered_reply(events: Iterable[Any]) -> str | None:
    """The signal ref of the contact's latest email in a task's `events` that nothing has answered yet, or None."""
    waiting = unanswered_replies(events)
    return waiting[-1].signal_ref if waiting else None


def guided_request_ref(signal_ref: str, version: int) -> str:
    """The ref of the decision guidance asks for on the reply `signal_ref` (unique per guidance given)."""
    return f"{signal_ref}{GUIDED}{version}"


def answered_signal(request_ref: str) -> str:
    """The signal ref of the reply an `evaluate_reply` decision answers (its own ref, or a guided request's)."""
    return request_ref.partition(GUIDED)[0]
