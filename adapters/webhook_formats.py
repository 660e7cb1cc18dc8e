"""Real producers' webhooks — GitHub, the Slack Events API and a generic signed webhook: their signature checks
and their conversion into Loopline signal messages (the JSON `loopline publish` takes, validated after by
`adapters/messages.py` `parse_message` like any other line).

A check raises BadSignature and a body that cannot be read raises UnreadableWebhook; a conversion answers
with one signal, nothing but an answer (GitHub's ping, Slack's URL verification), or why it was ignored.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any

from loopline.adapters.strict_json import UnreadableInput, read_document
from loopline.domain.timeutil import format_time
from loopline.processors.limits import MAX_ID_CHARS

SLACK_REPLAY_WINDOW = timedelta(minutes=5)
"""Slack's own rule: a request whose timestamp is further from now than this may be a replay."""
UNIX_SECONDS = re.compile(r"[0-9]{1,10}")
"""Seconds since 1970 as Slack sends them: ten digits reach the year 2286, and more would overflow a date."""


class BadSignature(ValueError):
    """The request is not signed with the tenant's secret; the text says what was wrong, never the secret."""


class UnreadableWebhook(ValueError):
    """The body is not what the producer sends; the text says what was expected."""


@dataclass(frozen=True)
class Conversion:
    """What one webhook comes to: a signal message to publish, an answer the producer expects, or neither and
    why it was ignored."""

    message: dict[str, Any] | None = None
    answer: dict[str, Any] | None = None
    ignored: str | None = None


def _hex_hmac(secret: str, payload: bytes) -> str:
    return hmac.new(secret.encode(), payload, hashlib.sha256).hexdigest()


def _check_prefixed(header: str | None, name: str, prefix: str, expected: str) -> None:
    if not header:
        raise BadSignature(f"no {name} header: the request must be signed")
    if not header.startswith(prefix):
        raise BadSignature(f"{name} must read {prefix}<hex digest>")
    if not hmac.compare_digest(header[len(prefix):].encode(), expected.encode()):
        raise BadSignature(f"{name} does not match the body signed with the tenant's secret")


def check_github_signature(secret: str, body: bytes, header: str | None) -> None:
    """`X-Hub-Signature-256: sha256=<hex>`: the HMAC-SHA256 of the raw body."""
    _check_prefixed(header, "X-Hub-Signature-256", "sha256=", _hex_hmac(secret, body))


def check_generic_signature(secret: str, body: bytes, header: str | None) -> None:
    """`X-Loopline-Signature: sha256=<hex>`: the HMAC-SHA256 of the raw body, as GitHub signs."""
    _check_prefixed(header, "X-Loopline-Signature", "sha256=", _hex_hmac(secret, body))


def check_slack_signature(secret: str, body: bytes, timestamp: str | None, header: str | None, now: datetime) -> None:
    """Slack's v0 signature: `v0=<hex>` of `v0:{X-Slack-Request-Timestamp}:{body}`, refused outside the replay
    window."""
    sent = _unix_time(timestamp)
    if sent is None:
        raise BadSignature("X-Slack-Request-Timestamp must be the request's time in whole seconds since 1970 "
                           "(at most 10 digits)")
    if abs(now - sent) > SLACK_REPLAY_WINDOW:
        raise BadSignature(f"X-Slack-Request-Timestamp {timestamp} is more than 5 minutes from now: a possible replay")
    _check_prefixed(header, "X-Slack-Signature", "v0=", _hex_hmac(secret, b"v0:" + timestamp.encode() + b":" + body))


def _unix_time(seconds: str | int | None) -> datetime | None:
    """Seconds since 1970 as a time, or None for anything else (a date past what Python holds included)."""
    if isinstance(seconds, bool) or not isinstance(seconds, str | int) or not UNIX_SECONDS.fullmatch(str(seconds)):
        return None
    try:
        return datetime.fromtimestamp(int(seconds), timezone.utc)
    except (OverflowError, ValueError, OSError):
        return None


def read_object(body: bytes, producer: str) -> dict[str, Any]:
    """The body as a JSON object, or UnreadableWebhook saying what the producer should send."""
    try:
        document = read_document(body)
    except UnreadableInput as error:
        raise UnreadableWebhook(f"the body is not JSON ({error}); send {producer} with content type application/json") from None
    if not isinstance(document, dict):
        raise UnreadableWebhook(f"the body must be a JSON object, as {producer} sends")
    return document


def _signal(id_: str, type_: str, tenant: str, at: str | None, data: dict[str, Any]) -> Conversion:
    """A signal message; a field the producer left out is left out, for `parse_message` to name if it matters."""
    given = {key: value for key, value in data.items() if value is not None}
    return Conversion(message={"kind": "signal", "id": id_, "type": type_, "tenant": tenant, "at": at, "data": given})


def github_conversion(tenant: str, event: str | None, delivery: str | None, payload: dict[str, Any]) -> Conversion:
    """A review submitted, a pull request merged or an issue closed is a `github.event`, at the time GitHub says it
    happened; a ping is answered."""
    action = payload.get("action")
    pull_request, review, issue = (payload.get(key) or {} for key in ("pull_request", "review", "issue"))
    if event == "ping":
        return Conversion(answer={"ok": True, "zen": payload.get("zen")})
    if event == "pull_request_review" and action == "submitted":
        item, event_type, at = pull_request, "pull_request_review", review.get("submitted_at")
    elif event == "pull_request" and action == "closed" and pull_request.get("merged"):
        item, event_type, at = pull_request, "pull_request_merged", pull_request.get("merged_at")
    elif event == "issues" and action == "closed":
        item, event_type, at = issue, "issue_closed", issue.get("closed_at")
    else:
        return Conversion(ignored=f"GitHub event {event!r} with action {action!r} is none Loopline follows: it follows "
                          "pull_request_review submitted, pull_request closed and merged, and issues closed")
    if not delivery:
        raise UnreadableWebhook("no X-GitHub-Delivery header: GitHub names every delivery, and it is the message's id")
    number = item.get("number")
    data = {
        "event_type": event_type, "repo": (payload.get("repository") or {}).get("full_name"),
        "resource_id": None if number is None else str(number), "url": item.get("html_url"),
        "by": (payload.get("sender") or {}).get("login"),
        "state": review.get("state") if event_type == "pull_request_review" else None,
    }
    return _signal(delivery, "github.event", tenant, at, data)


def slack_conversion(tenant: str, payload: dict[str, Any]) -> Conversion:
    """URL verification is answered with its challenge; a person's message event is a `slack.message`."""
    kind = payload.get("type")
    if kind == "url_verification":
        return Conversion(answer={"challenge": payload.get("challenge")})
    if kind != "event_callback":
        return Conversion(ignored=f"Slack request type {kind!r} is none Loopline follows: it follows event_callback")
    event = payload.get("event") or {}
    if event.get("type") != "message":
        return Conversion(ignored=f"Slack event {event.get('type')!r} is none Loopline follows: it follows message")
    if event.get("bot_id") or event.get("subtype"):
        return Conversion(ignored=f"a Slack message with subtype {event.get('subtype') or 'bot_message'!r} is not a "
                          "person's new message: only those resolve loops")
    event_time = payload.get("event_time")
    sent = _unix_time(event_time)
    if event_time is not None and sent is None:
        return Conversion(ignored=f"event_time {event_time!r} is no time in whole seconds since 1970: the event "
                          "cannot be placed in time")
    at = None if sent is None else format_time(sent)
    data = {"slack_user_id": event.get("user"), "channel_id": event.get("channel"), "ts": event.get("ts"),
            "text": event.get("text"), "team_id": payload.get("team_id")}
    if not payload.get("event_id"):
        raise UnreadableWebhook("the event_callback has no event_id: Slack names every event, and it is the message's id")
    return _signal(str(payload["event_id"]), "slack.message", tenant, at, data)


def generic_delivery_id(source: str, body: bytes, payload: dict[str, Any]) -> str:
    """A generic webhook's id: `source:` and the signed body's `id`, else the body's SHA-256 (the same on a retry);
    the source keeps it apart from other producers'. An id too long with its source is named by its own SHA-256."""
    given = payload.get("id")
    if not (isinstance(given, str) and given):
        return f"{source}:{hashlib.sha256(body).hexdigest()[:32]}"
    named = f"{source}:{given}"
    if len(named) <= MAX_ID_CHARS:
        return named
    return f"{source}:sha256:{hashlib.sha256(given.encode()).hexdigest()[:32]}"  # a long id, kept within the limit


def generic_conversion(tenant: str, source: str, body: bytes, payload: dict[str, Any]) -> Conversion:
    """Any producer's signed JSON object is a `webhook.received` of `source`. All of it comes from the signed body
    (the headers are not signed): the trigger is its `trigger`, the id its `id` (else its SHA-256) and the time its
    `at`, which is required: only the producer knows when it happened, and a retry must be an exact repeat."""
    trigger_name = payload.get("trigger")
    if not trigger_name:
        raise UnreadableWebhook("name what happened in the body's trigger field (the body is what is signed)")
    at = payload.get("at")
    if not at:
        raise UnreadableWebhook("give when it happened in the body's at field, an RFC 3339 time such as "
                                "2026-03-13T10:00:00Z (the body is what is signed, so a retry is an exact repeat)")
    return _signal(generic_delivery_id(source, body, payload), "webhook.received", tenant, at,
                   {"source": source, "trigger_name": trigger_name, "payload": payload})
