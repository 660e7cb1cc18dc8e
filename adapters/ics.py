"""A calendar invitation as iCalendar text (RFC 5545, METHOD:REQUEST), for a `calendar_invite` action's email."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

from loopline.domain.timeutil import parse_time


def _text(value: str) -> str:
    """A TEXT value escaped as RFC 5545 §3.3.11 says (a line break would end the property)."""
    return (value.replace("\\", "\\\\").replace(";", "\\;").replace(",", "\\,")
            .replace("\r\n", "\\n").replace("\n", "\\n").replace("\r", "\\n"))


def _utc(moment: datetime) -> str:
    return moment.astimezone(timezone.utc).strftime("%Y%m%dT%H%M%SZ")


def invitation(*, uid: str, details: dict[str, Any], organizer: str, sent_at: datetime) -> str:
    """The event the action's `details` describe, with `uid` (from the delivery key) so a resend updates, not adds."""
    starts = parse_time(details["starts_at"])
    lines = [
        "BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//Loopline//Actions//EN", "METHOD:REQUEST", "BEGIN:VEVENT",
        f"UID:{uid}", f"DTSTAMP:{_utc(sent_at)}", f"DTSTART:{_utc(starts)}",
        f"DTEND:{_utc(starts + timedelta(minutes=details['duration_minutes']))}",
        f"SUMMARY:{_text(details['title'])}",
        *([f"LOCATION:{_text(details['location'])}"] if details.get("location") else []),
        f"ORGANIZER:mailto:{organizer}", f"ATTENDEE;RSVP=TRUE:mailto:{details['to']}",
        "END:VEVENT", "END:VCALENDAR",
    ]
    return "\r\n".join(lines) + "\r\n"
