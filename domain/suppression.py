"""A contact who asked to hear no more (seed 002 §22, §33.3): suppressed for the tenant, on the contact's send ledger.

The suppression lives on `ContactSends`, the ledger every send to the contact loads and changes in its own unit
of work, so a send racing a suppression meets a version conflict and is redone against it. It is lifted only
by `contact.resubscribe`. Three soft bounces count as one hard bounce.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from loopline.domain.base import TenantEvent
from loopline.domain.errors import DomainError
from loopline.domain.safety_limits import SOFT_BOUNCES_AS_HARD

if TYPE_CHECKING:
    from loopline.domain.send_ledger import ContactSends

REASONS = {
    "member_request": "asked to hear no more",
    "unsubscribe_link": "unsubscribed",
    "hard_bounce": "bounced (the address takes no mail)",
    "complaint": "marked our email as spam",
}
"""Why a contact is suppressed (the seed's `reason`), with how the owner reads it."""


class NotSuppressed(DomainError):
    """`contact.resubscribe` for a contact who is not suppressed."""


class ContactSuppression:
    """A direct base of `ContactSends`: its suppression; eventsourcing redefines the events as `ContactSends.<Name>`."""

    class Suppressed(TenantEvent):
        contact: str
        reason: str
        source: str
        """Where it came from: `inbound_reply`, `unsubscribe`, `bounce`, `complaint`."""
        words: str

        def apply(self, ledger: ContactSends) -> None:
            ledger.suppression = {"reason": self.reason, "source": self.source, "words": self.words,
                                  "since": self.timestamp.isoformat()}

    class Unsuppressed(TenantEvent):
        """The contact opted back in: Loopline may email them again."""

        contact: str
        reason: str

        def apply(self, ledger: ContactSends) -> None:
            ledger.suppression = None
            ledger.soft_bounces = 0

    class SoftBounced(TenantEvent):
        """One email to the contact bounced softly; `SOFT_BOUNCES_AS_HARD` of them suppress the contact."""

        detail: str

        def apply(self, ledger: ContactSends) -> None:
            ledger.soft_bounces += 1

    def suppress(self, *, reason: str, source: str, words: str, now: datetime) -> bool:
        """Suppresses the contact; False (and nothing recorded) when already suppressed, so the first reason stays."""
        if self.suppression is not None:
            return False
        assert reason in REASONS, f"unknown suppression reason {reason!r}"
        self.trigger_event(self.Suppressed, timestamp=now, contact=self.contact, reason=reason, source=source,
                           words=words)
        return True

    def unsuppress(self, *, reason: str, now: datetime) -> None:
        if self.suppression is None:
            raise NotSuppressed(f"contact: {self.contact} is not suppressed for tenant {self.tenant}; nothing to lift")
        self.trigger_event(self.Unsuppressed, timestamp=now, contact=self.contact, reason=reason)

    def soft_bounce(self, *, detail: str, now: datetime) -> bool:
        """Counts a soft bounce; True when it makes `SOFT_BOUNCES_AS_HARD`, to be treated as a hard bounce."""
        self.trigger_event(self.SoftBounced, timestamp=now, detail=detail)
        return self.soft_bounces == SOFT_BOUNCES_AS_HARD


def suppressed_because(suppression: dict[str, Any]) -> str:
    """The suppression as a reason reads it: "asked to hear no more (“stop emailing me”) on 2026-03-02"."""
    words = f" (“{suppression['words']}”)" if suppression.get("words") else ""
    return f"{REASONS[suppression['reason']]}{words} on {suppression['since'][:10]}"
