"""Hand-written fakes for the ports in processors/ports.py, for unit tests that touch no server."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from loopline.processors.ports import Draft


@dataclass
class RecordingDrafter:
    """Drafts a fixed text and remembers every request, so a test sees what the model would have been asked."""

    requests: list[dict[str, Any]] = field(default_factory=list)

    def draft_followup(self, *, task_title: str, contact: str, original_subject: str | None, days_waiting: int) -> Draft:
        self.requests.append({"task_title": task_title, "contact": contact, "original_subject": original_subject,
                              "days_waiting": days_waiting})
        return Draft(subject=f"Re: {original_subject}", body="fake draft", decided_by="fake drafter")


@dataclass
class RecordingChannel:
    """An outbound channel that keeps what it was given, once per idempotency key."""

    name: str = "fake"
    delivered: dict[str, dict[str, Any]] = field(default_factory=dict)

    def deliver(self, *, key: str, message: dict[str, Any]) -> bool:
        if key in self.delivered:
            return False
        self.delivered[key] = message
        return True
