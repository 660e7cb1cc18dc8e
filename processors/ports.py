"""The small ports processors depend on; adapters/ holds the real ones and tests hold fakes."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol


class Clock(Protocol):
    """The wall clock, read only at the edges (a CLI default, a worker's periodic tick); business
    time comes from the messages and `--now`."""

    def now(self) -> datetime: ...


@dataclass(frozen=True)
class Draft:
    subject: str
    body: str
    decided_by: str
    """Which rule or model wrote it (BRIEF invariant 8)."""


class Drafter(Protocol):
    """The language-model port: what Loopline writes itself. The offline template is its only
    adapter until the model arrives; a draft is recorded in the event it leads to, never redrafted."""

    def draft_followup(self, *, task_title: str, contact: str, original_subject: str | None, days_waiting: int) -> Draft: ...


class OutboundChannel(Protocol):
    """Delivers one outbound message at most once per idempotency key."""

    name: str

    def deliver(self, *, key: str, message: dict[str, Any]) -> bool:
        """Returns False when the key was already delivered."""
        ...

