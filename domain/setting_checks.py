"""The checks a tenant setting's value must pass (`domain/tenant.py` names each setting's check): a time zone,
quiet hours, an SMS gateway URL, and the webhook secrets the HTTP edge checks signatures with."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from loopline.domain.errors import DomainError
from loopline.domain.notice_budget import quiet_span


class InvalidSettings(DomainError):
    pass


def check_timezone(name: Any) -> None:
    try:
        ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, TypeError):
        raise InvalidSettings(f"timezone {name!r} is not an IANA time zone (e.g. Europe/Berlin, America/New_York)") from None


def check_quiet_hours(value: Any) -> None:
    if not isinstance(value, str) or quiet_span(value) is None:
        raise InvalidSettings(f"owner_quiet_hours {value!r} is not HH:MM-HH:MM in the tenant's time zone (e.g. 21:00-07:00)")


def check_sms_url(value: Any) -> None:
    if not isinstance(value, str) or not value.startswith(("http://", "https://")) or any(c.isspace() for c in value):
        raise InvalidSettings(f"sms_url {value!r} is not an http(s) URL (e.g. https://sms.example.com/messages)")


MAX_SECRET_CHARS = 200
WEBHOOK_SOURCE = re.compile(r"[A-Za-z0-9_-]{1,64}")
"""A generic webhook's source name: it is a segment of the URL the webhook is sent to."""
WEBHOOK_SOURCES_OF_THEIR_OWN = ("github", "slack")
"""Sources with a route and a setting of their own: `webhook_secrets` may not name them."""


def check_secret(value: Any, name: str = "a webhook secret") -> None:
    if not isinstance(value, str) or not 1 <= len(value) <= MAX_SECRET_CHARS or any(c.isspace() for c in value):
        raise InvalidSettings(f"{name} must be 1 to {MAX_SECRET_CHARS} characters without spaces")


def check_webhook_secrets(value: Any) -> None:
    if not isinstance(value, Mapping):
        raise InvalidSettings("webhook_secrets must be an object mapping a source name to its secret")
    for source, secret in value.items():
        if not isinstance(source, str) or not WEBHOOK_SOURCE.fullmatch(source):
            raise InvalidSettings(f"webhook_secrets source {source!r} must be 1 to 64 letters, digits, - or _")
        if source in WEBHOOK_SOURCES_OF_THEIR_OWN:
            raise InvalidSettings(f"webhook_secrets may not name {source!r}: set {source}'s own secret setting")
        check_secret(secret, f"webhook_secrets.{source}")
