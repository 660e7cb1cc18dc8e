"""Follow-up drafting by a deterministic offline template (the adapter of the `Drafter` port)."""

from __future__ import annotations

from loopline.processors.ports import Draft


class TemplateDrafter:
    def draft_followup(self, *, task_title: str, contact: str, original_subject: str | None, days_waiting: int) -> Draft:
        subject = f"Re: {original_subject}" if original_subject else f"Following up: {task_title}"
        body = (
            f"Hi {contact.split('@')[0].capitalize()},\n\n"
            f"Just following up on my note from {days_waiting} day{'s' if days_waiting != 1 else ''} ago "
            f"about \"{task_title}\". Would you have a moment to reply?\n\nThanks!"
        )
        return Draft(subject=subject, body=body, decided_by="offline template followup_v1")
