"""Reminders by a deterministic offline template (the adapter of the `Drafter` port).

What a contact reads names no task title or id, and greets them by name only when a message gave
one; an address or channel name is never turned into a name ("Hi Rahul.sharma", "Hi Legal").
"""

from __future__ import annotations

from loopline.domain.wording import days_ago, greeting
from loopline.processors.ports import Draft


class TemplateDrafter:
    def draft_reminder(
        self, *, contact_name: str | None, about: str, ask: str, original_subject: str | None, days_waiting: int
    ) -> Draft:
        subject = f"Reminder: {original_subject}" if original_subject else f"A reminder about {about}"
        body = f"{greeting(contact_name)}\n\nA quick reminder about {about}, which I sent {days_ago(days_waiting)}. {ask}\n\nThanks!"
        return Draft(subject=subject, body=body, decided_by="offline template reminder_v1")
