"""Email to contacts, and owner notices to the tenant's `owner_email`, over SMTP (LOOPLINE_SMTP_URL), with the
standard library's smtplib and email.

The Message-ID is derived from the idempotency key, so a message sent again after a crash
carries the same Message-ID and the receiving side can drop the repeat. The owner's notices about one
task are one thread: each refers to the same root id, derived from the task.
"""

from __future__ import annotations

import smtplib
from dataclasses import dataclass
from email.message import EmailMessage
from email.utils import format_datetime
from typing import Any
from urllib.parse import parse_qs, quote, unquote, urlsplit

from loopline.adapters.config import InvalidSetting
from loopline.adapters.ics import invitation
from loopline.domain.notices import render
from loopline.domain.timeutil import parse_time
from loopline.processors.followers.delivery import is_contact_email, is_owner_email
from loopline.processors.handlers.sending import one_line
from loopline.processors.ports import DeliveryFailed

SEND_TIMEOUT = 10.0


@dataclass(frozen=True)
class SmtpServer:
    host: str
    port: int
    user: str | None
    password: str | None
    starttls: bool

    @classmethod
    def from_url(cls, url: str) -> SmtpServer:
        """Reads `smtp://[user:pass@]host:port[?starttls=true]`."""
        parts = urlsplit(url)
        if parts.scheme != "smtp" or not parts.hostname:
            raise InvalidSetting(f"LOOPLINE_SMTP_URL={url!r} is not smtp://[user:pass@]host:port[?starttls=true]")
        try:
            port = parts.port or 25
        except ValueError:
            raise InvalidSetting(f"LOOPLINE_SMTP_URL={url!r} has an invalid port") from None
        starttls = parse_qs(parts.query).get("starttls", ["false"])[-1].lower()
        if starttls not in ("true", "false"):
            raise InvalidSetting(f"LOOPLINE_SMTP_URL={url!r}: starttls must be true or false")
        return cls(
            host=parts.hostname, port=port, user=unquote(parts.username) if parts.username else None,
            password=unquote(parts.password) if parts.password else None, starttls=starttls == "true",
        )


def message_id(key: str, sender: str) -> str:
    """`<loopline.<aggregate id>.<version>@<sender's domain>>`: the same key always gives the same id."""
    domain = sender.rpartition("@")[2] or "localhost"
    return f"<loopline.{key.replace(':', '.')}@{domain}>"


def owner_thread_id(key: str, sender: str) -> str:
    """The root every notice about one task refers to (the task is the key's aggregate): one thread per task."""
    domain = sender.rpartition("@")[2] or "localhost"
    return f"<loopline.task.{key.partition(':')[0]}@{domain}>"


def compose_notice(*, key: str, message: dict[str, Any], sender: str) -> EmailMessage:
    """An owner notice as email: the task's title as subject and thread, the contact's words, the draft, the commands."""
    email = EmailMessage()
    email["From"] = sender
    email["To"] = message["owner_email"]
    email["Subject"] = one_line(f"Loopline: {message['title']}")
    email["Message-ID"] = message_id(key, sender)
    email["Date"] = format_datetime(parse_time(message["at"]))
    email["In-Reply-To"] = owner_thread_id(key, sender)
    email["References"] = owner_thread_id(key, sender)
    email["X-Loopline-Delivery"] = key
    email["X-Loopline-Notice"] = message["kind"]
    email.set_content(render(title=message["title"], message=message["text"], quote=message.get("quote"),
                             draft=message.get("draft"), actions=message.get("actions") or []))
    return email


def compose(*, key: str, message: dict[str, Any], sender: str) -> EmailMessage:
    """The email for one message to a contact: threaded under the message the loop waited on, or under the
    task's messages before it (their delivery keys), and with one-click unsubscribe headers (RFC 8058) like every message Loopline sends to a contact."""
    details = message.get("details") or {}
    email = EmailMessage()
    email["From"] = sender
    email["To"] = message["to"]
    email["Subject"] = one_line(details.get("subject") or message.get("text") or "") or "(no subject)"
    email["Message-ID"] = message_id(key, sender)
    email["Date"] = format_datetime(parse_time(message["at"]))
    references = [message_id(key, sender) for key in (details.get("thread") or {}).get("references", [])]
    if details.get("in_reply_to"):
        original = details["in_reply_to"].strip()
        references = [original if original.startswith("<") else f"<{original}>"]
    if references:
        email["In-Reply-To"] = references[-1]
        email["References"] = " ".join(references)
    unsubscribe = quote(f"unsubscribe {message.get('tenant', '')} {message['to']}")
    email["List-Unsubscribe"] = f"<mailto:{sender}?subject={unsubscribe}>"
    email["List-Unsubscribe-Post"] = "List-Unsubscribe=One-Click"
    email["X-Loopline-Delivery"] = key
    email.set_content(details.get("body") or message.get("text") or "")
    if message.get("kind") == "calendar_invite":  # the body says it in words, the attachment in the calendar's
        uid = message_id(key, sender).strip("<>")
        email.add_attachment(invitation(uid=uid, details=details, organizer=sender, sent_at=parse_time(message["at"])),
                             subtype="calendar", filename="invite.ics", params={"method": "REQUEST"})
    return email


class SmtpChannel:
    name = "smtp"
    drops_repeats = False

    def __init__(self, server: SmtpServer, sender: str) -> None:
        self.server = server
        self.sender = sender

    def accepts(self, message: dict[str, Any]) -> bool:
        return is_contact_email(message) or is_owner_email(message)

    def send(self, *, key: str, message: dict[str, Any]) -> None:
        if is_owner_email(message):
            email = compose_notice(key=key, message=message, sender=self.sender)
        else:
            email = compose(key=key, message=message, sender=self.sender)
        where = f"{self.server.host}:{self.server.port}"
        try:
            with smtplib.SMTP(self.server.host, self.server.port, timeout=SEND_TIMEOUT) as smtp:
                if self.server.starttls:
                    smtp.starttls()
                if self.server.user:
                    smtp.login(self.server.user, self.server.password or "")
                smtp.send_message(email)
        except (smtplib.SMTPException, OSError) as error:
            raise DeliveryFailed(f"SMTP {where} refused or unreachable: {error}") from error
