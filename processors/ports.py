"""The small ports processors depend on; adapters/ holds the real ones and tests hold fakes."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol


@dataclass(frozen=True)
class Draft:
    subject: str
    body: str
    decided_by: str
    """Which rule or model wrote it (BRIEF invariant 8)."""


class Drafter(Protocol):
    def draft_followup(self, *, task_title: str, contact: str, original_subject: str | None, days_waiting: int) -> Draft: ...


class OutboundChannel(Protocol):
    """Delivers one outbound message at most once per idempotency key."""

    name: str

    def deliver(self, *, key: str, message: dict[str, Any]) -> bool:
        """Returns False when the key was already delivered."""
        ...

