"""An escalation question's SLA ladder (seed 001 §6): what is done as a question to the owner stays unanswered
(log, publish, ask, re-send as urgent, pause, re-escalate), and how the owner's reply is read against its options."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from string import ascii_uppercase

from loopline.domain.errors import DomainError

MAX_OPTIONS = 6
"""Options a question may offer: each is answered by one letter, A to F."""


class InvalidQuestion(DomainError):
    """A question without text, with a blank option, or with more options than letters to answer them by."""


@dataclass(frozen=True)
class Rung:
    """One step of the ladder: taken once the question has waited `after` since it was asked."""

    after: timedelta
    action: str
    urgency: str


LADDER = (
    Rung(timedelta(minutes=5), "log", "normal"),
    Rung(timedelta(minutes=15), "publish", "normal"),
    Rung(timedelta(minutes=30), "ask", "normal"),
    Rung(timedelta(hours=2), "resend_urgent", "urgent"),
    Rung(timedelta(hours=8), "pause", "urgent"),
    Rung(timedelta(hours=24), "re_escalate", "critical"),
)
"""Seed 001 §6's table, and its error handling's last line: a question ignored for 24 h re-escalates, more urgent."""


def rungs_due(asked_at: datetime, now: datetime, *, taken: int) -> tuple[Rung, ...]:
    """The rungs reached by `now` that were not yet taken (`taken`: how many were), in order; a timer that fires
    late takes every rung it missed, so none is skipped."""
    waited = now - asked_at
    return tuple(rung for rung in LADDER[taken:] if rung.after <= waited)


def next_due(asked_at: datetime, *, taken: int) -> datetime | None:
    """When the next rung is reached, for its timer; None once the ladder is climbed."""
    return asked_at + LADDER[taken].after if taken < len(LADDER) else None


def check_question(question: str, options: tuple[str, ...]) -> None:
    if not question.strip():
        raise InvalidQuestion("question: give the text the owner answers")
    if len(options) > MAX_OPTIONS:
        last = ascii_uppercase[MAX_OPTIONS - 1]
        raise InvalidQuestion(f"options: give at most {MAX_OPTIONS}, one per letter A to {last}")
    if any(not option.strip() for option in options):
        raise InvalidQuestion("options: every option needs text; leave out the blank ones")


def lettered(options: tuple[str, ...] | list[str]) -> list[str]:
    """The options as the owner reads them: `A) Auth0`, `B) Firebase`, …"""
    return [f"{letter}) {text}" for letter, text in zip(ascii_uppercase, options)]


def render_question(*, asker: str, task_title: str, stuck_on: str, question: str, options: tuple[str, ...],
                    blocked: int, urgency: str) -> str:
    """The question as the owner reads it (seed 001 §6's format), its options lettered."""
    head = "URGENT: " if urgency != "normal" else ""
    lines = [f"{head}{asker} needs help", f"Task: {task_title}", f"Stuck on: {stuck_on}", "", "Question:", question]
    if options:
        lines += ["", "Options:", *lettered(options)]
    if blocked:
        lines += ["", f"Blocked: {blocked} downstream task{'s' if blocked != 1 else ''} waiting"]
    if options:
        letters = ", ".join(ascii_uppercase[:len(options)])
        lines += ["", f"Reply {letters} with optional reasoning."]
    return "\n".join(lines)


@dataclass(frozen=True)
class Answer:
    """The owner's reply read against the options: the option picked (None: free text) and the reasoning given."""

    option: str | None
    text: str
    for_review: bool
    """A reply to a question with options that picked none: accepted as free text, and logged for review."""


def read_answer(reply: str, options: tuple[str, ...]) -> Answer | None:
    """The reply as an answer: a leading option letter (`B`, `b) because ...`) picks that option; anything else is
    free text. None for an empty reply, which asks a clarifying follow-up instead of deciding."""
    text = reply.strip()
    if not text:
        return None
    letters = ascii_uppercase[:len(options)]
    first, rest = text[0].upper(), text[1:]
    if first in letters and (not rest or not rest[0].isalnum()):
        return Answer(option=options[letters.index(first)], text=rest.lstrip(" )].:-,\t\n"), for_review=False)
    return Answer(option=None, text=text, for_review=bool(options))
