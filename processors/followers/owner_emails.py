"""The owner's email budget at delivery (`domain/notice_budget.py` says the rules): just before an owner notice is
emailed, it goes singly, waits for the owner's quiet hours to end, or waits for the digest; due digest emails of a
tenant go out as one email listing them most urgent first.

Decided at delivery, not when the notice is recorded: the notice itself stays as the step wrote it (outbox,
webhook, `tasks show`), and only the push to the owner's inbox is paced by the clock it is sent at.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from loopline.domain.notice_budget import PRIORITY, category_of, verdict
from loopline.domain.send_ledger import local_day
from loopline.domain.tenant import TenantSettings
from loopline.domain.timeutil import parse_time
from loopline.processors.ports import Attempt, DeliveryLedger

DIGEST = "digest"
"""The kind of the one email that carries a tenant's held notices."""


class OwnerEmails:
    def __init__(self, ledger: DeliveryLedger, settings_of: Callable[[str], TenantSettings],
                 scorecard_of: Callable[[str, str], str] | None = None) -> None:
        self.ledger = ledger
        self.settings_of = settings_of
        self.scorecard_of = scorecard_of
        """The tenant's scorecard of a local day (`2026-03-05`), in words, which digests carry (none without the read
        model)."""

    def held(self, attempt: Attempt, now: datetime) -> bool:
        """True when the owner's email must wait (the ledger then holds it); else it is counted and may go now."""
        message = attempt.message
        if message.get("digest_of") is not None:
            return False
        settings = self.settings_of(message["tenant"])
        category, day = category_of(message["kind"]), local_day(now, settings.timezone).isoformat()
        counted = self.ledger.owner_emails(message["tenant"], day, category)
        if attempt.key in counted:  # a retry of one already counted
            return False
        found = verdict(message["kind"], at=now, zone=settings.timezone, quiet_hours=settings.owner_quiet_hours,
                        emailed_today=len(counted))
        if found.until is None:
            self.ledger.count_owner_email(attempt.key, tenant=message["tenant"], day=day, category=category,
                                          now=now.timestamp())
            return False
        later = {**message, "waited": True, **({"for_digest": True} if found.digest else {})}
        self.ledger.hold(attempt, until=found.until.timestamp(), reason=found.reason, message=later, now=now.timestamp())
        return True

    def fold(self, attempts: list[Attempt], stands: Callable[[Attempt], bool]) -> list[Attempt]:
        """The due attempts in the order to send them: the owner emails that waited (quiet hours) after the rest and
        most urgent first, so the day's budget goes to them; each tenant's due digest notices that still `stand`
        replaced by one digest email keyed by the first (a notice made moot meanwhile stays, to be withdrawn). Other
        attempts keep their order, so a send taken over after a crash goes as it would have."""
        digests: dict[str, list[Attempt]] = {}
        kept, waited = [], []
        for attempt in attempts:
            if attempt.message.get("for_digest") and stands(attempt):
                digests.setdefault(attempt.message["tenant"], []).append(attempt)
            else:
                (waited if attempt.message.get("waited") else kept).append(attempt)
        waited.sort(key=lambda attempt: PRIORITY.index(category_of(attempt.message["kind"])))
        return kept + waited + [self._digest(notices) for notices in digests.values()]

    def _digest(self, notices: list[Attempt]) -> Attempt:
        if self.scorecard_of is None:
            return _digest(notices, None)
        tenant = notices[0].message["tenant"]  # the day of the latest notice: business time, as the notices' own
        day = local_day(parse_time(_latest(notices)), self.settings_of(tenant).timezone).isoformat()
        return _digest(notices, self.scorecard_of(tenant, day))


def _digest(notices: list[Attempt], scorecard: str | None) -> Attempt:
    ordered = sorted(notices, key=lambda a: (PRIORITY.index(category_of(a.message["kind"])), parse_time(a.message["at"])))
    first = ordered[0]
    lines = [f"- {n.message['title']} ({n.message['kind']}, {n.message['at']}): {n.message['text']}" for n in ordered]
    text = (f"{len(ordered)} notice(s) over today's email budget, most urgent first (each is in the outbox and "
            "`loopline tasks show` with its commands):\n" + "\n".join(lines)) + (f"\n\n{scorecard}" if scorecard else "")
    message = {**first.message, "kind": DIGEST, "title": f"{len(ordered)} notice(s)", "text": text, "quote": None,
               "draft": None, "actions": [], "at": _latest(ordered), "for_digest": False,
               "digest_of": [{"key": n.key, "attempts": n.attempts} for n in ordered[1:]]}
    return Attempt(key=first.key, channel=first.channel, message=message, attempts=first.attempts)


def _latest(notices: list[Attempt]) -> str:
    return max(notices, key=lambda n: parse_time(n.message["at"])).message["at"]


def folded(attempt: Attempt) -> list[Attempt]:
    """The notices a digest email carried besides its own key's, to mark delivered with it."""
    return [Attempt(key=row["key"], channel=attempt.channel, message={}, attempts=row["attempts"])
            for row in attempt.message.get("digest_of") or []]

