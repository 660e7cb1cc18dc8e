"""GitHub, Slack and generic webhooks: their producers' signatures (checked against the producers' documented
examples) and what each body becomes — a signal `loopline publish` would take, an answer, or a reason to ignore it."""

from __future__ import annotations

import hashlib
import json
from datetime import datetime, timedelta, timezone

import pytest

from loopline.adapters.messages import parse_message
from loopline.adapters.webhook_formats import (
    BadSignature,
    UnreadableWebhook,
    check_generic_signature,
    check_github_signature,
    check_slack_signature,
    generic_conversion,
    github_conversion,
    read_object,
    slack_conversion,
)
from tests.fixtures import webhooks

# GitHub's documented example ("Validating webhook deliveries").
GITHUB_SECRET, GITHUB_BODY = "It's a Secret to Everybody", b"Hello, World!"
GITHUB_SIGNATURE = "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"
# Slack's documented example ("Verifying requests from Slack").
SLACK_SECRET, SLACK_TIMESTAMP = "8f742231b10e8888abcd99yyyzzz85a5", "1531420618"
SLACK_BODY = (
    b"token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V&channel_name=foobar"
    b"&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text=&response_url=https%3A%2F%2Fhooks.slack.com"
    b"%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN&trigger_id=398738663015.47445629121.803a0bc887a1"
    b"4d10d2c447fce8b6703c"
)
SLACK_SIGNATURE = "v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503"
SLACK_SENT = datetime.fromtimestamp(int(SLACK_TIMESTAMP), timezone.utc)
NOW = datetime(2026, 3, 3, 10, 0, tzinfo=timezone.utc)


def test_githubs_documented_signature_passes_and_any_other_body_or_secret_is_refused() -> None:
    check_github_signature(GITHUB_SECRET, GITHUB_BODY, GITHUB_SIGNATURE)
    with pytest.raises(BadSignature, match="does not match"):
        check_github_signature(GITHUB_SECRET, GITHUB_BODY + b" ", GITHUB_SIGNATURE)
    with pytest.raises(BadSignature, match="does not match"):
        check_github_signature("another secret", GITHUB_BODY, GITHUB_SIGNATURE)
    with pytest.raises(BadSignature, match="no X-Hub-Signature-256 header"):
        check_github_signature(GITHUB_SECRET, GITHUB_BODY, None)
    with pytest.raises(BadSignature, match="must read sha256="):
        check_github_signature(GITHUB_SECRET, GITHUB_BODY, GITHUB_SIGNATURE.replace("sha256=", "sha1="))


def test_slacks_documented_signature_passes_within_five_minutes_of_its_timestamp_only() -> None:
    check_slack_signature(SLACK_SECRET, SLACK_BODY, SLACK_TIMESTAMP, SLACK_SIGNATURE, SLACK_SENT + timedelta(minutes=4))
    with pytest.raises(BadSignature, match="more than 5 minutes from now"):
        check_slack_signature(SLACK_SECRET, SLACK_BODY, SLACK_TIMESTAMP, SLACK_SIGNATURE, SLACK_SENT + timedelta(minutes=6))
    with pytest.raises(BadSignature, match="does not match"):
        check_slack_signature(SLACK_SECRET, SLACK_BODY.replace(b"foobar", b"foobaz"), SLACK_TIMESTAMP, SLACK_SIGNATURE,
                              SLACK_SENT)
    with pytest.raises(BadSignature, match="whole seconds"):
        check_slack_signature(SLACK_SECRET, SLACK_BODY, "yesterday", SLACK_SIGNATURE, SLACK_SENT)


def test_a_generic_webhook_is_signed_over_its_raw_body_like_githubs() -> None:
    raw = webhooks.body({"trigger": "document_signed"})
    header = webhooks.generic_headers("ci-secret", raw)["X-Loopline-Signature"]
    check_generic_signature("ci-secret", raw, header)
    with pytest.raises(BadSignature, match="X-Loopline-Signature does not match"):
        check_generic_signature("ci-secret", raw + b"\n", header)


@pytest.mark.parametrize(("event", "payload", "event_type", "resource_id", "at"), [
    ("pull_request_review", webhooks.review_submitted(42), "pull_request_review", "42", "2026-03-03T09:30:00Z"),
    ("pull_request", webhooks.pull_request_closed(42), "pull_request_merged", "42", "2026-03-03T10:15:00Z"),
    ("issues", webhooks.issue_closed(7), "issue_closed", "7", "2026-03-03T11:00:00Z"),
])
def test_a_github_review_merge_or_issue_close_is_a_github_event_publish_takes(
    event: str, payload: dict, event_type: str, resource_id: str, at: str,
) -> None:
    message = github_conversion("gym", event, "delivery-1", payload).message
    assert message is not None
    parsed = parse_message(json.dumps(message))
    assert (parsed.ref, parsed.type, parsed.tenant, parsed.at.isoformat()) == (
        "delivery-1", "github.event", "gym", at.replace("Z", "+00:00"))
    assert (parsed.data["event_type"], parsed.data["repo"], parsed.data["resource_id"]) == (event_type, "acme/api", resource_id)


def test_a_github_ping_is_answered_and_other_events_are_ignored_with_the_reason() -> None:
    assert github_conversion("gym", "ping", "d", webhooks.ping()).answer == {"ok": True, "zen": "Keep it logically awesome."}
    closed_unmerged = github_conversion("gym", "pull_request", "d", webhooks.pull_request_closed(42, merged=False))
    assert closed_unmerged.message is None
    assert "'pull_request' with action 'closed' is none Loopline follows" in str(closed_unmerged.ignored)
    assert "'push'" in str(github_conversion("gym", "push", "d", {"ref": "refs/heads/main"}).ignored)


def test_a_github_event_loopline_follows_without_a_delivery_id_is_unreadable() -> None:
    with pytest.raises(UnreadableWebhook, match="X-GitHub-Delivery"):
        github_conversion("gym", "issues", None, webhooks.issue_closed(7))


def test_slack_url_verification_is_answered_with_its_challenge() -> None:
    challenge = webhooks.slack_url_verification()["challenge"]
    assert slack_conversion("gym", webhooks.slack_url_verification()).answer == {"challenge": challenge}


def test_a_persons_slack_message_is_a_slack_message_signal_and_a_bots_or_an_edit_is_ignored() -> None:
    message = slack_conversion("gym", webhooks.slack_message()).message
    assert message is not None
    parsed = parse_message(json.dumps(message))
    assert (parsed.ref, parsed.type, parsed.data["slack_user_id"], parsed.data["channel_id"], parsed.data["ts"]) == (
        "Ev0PV52K21", "slack.message", "U061F7AUR", "D0LAN2Q65", "1772530200.000200")
    assert "bot_message" in str(slack_conversion("gym", webhooks.slack_message(bot_id="B01")).ignored)
    assert "message_changed" in str(slack_conversion("gym", webhooks.slack_message(subtype="message_changed")).ignored)
    assert "'reaction_added'" in str(slack_conversion("gym", {**webhooks.slack_message(), "event": {
        "type": "reaction_added"}}).ignored)


def test_a_generic_webhook_takes_its_trigger_id_and_time_from_the_signed_body_its_id_under_its_source() -> None:
    payload = {"trigger": "document_signed", "document": "lease-7", "at": "2026-03-01T08:00:00Z"}
    raw = webhooks.body(payload)
    from_body = generic_conversion("gym", "docusign", raw, payload).message
    named = {**payload, "id": "d-9"}
    with_id = generic_conversion("gym", "docusign", webhooks.body(named), named).message
    assert from_body is not None and with_id is not None
    first, second = parse_message(json.dumps(from_body)), parse_message(json.dumps(with_id))
    at = datetime(2026, 3, 1, 8, tzinfo=timezone.utc)
    assert (first.type, first.data["source"], first.data["trigger_name"], first.data["payload"], first.at) == (
        "webhook.received", "docusign", "document_signed", payload, at)
    assert first.ref == f"docusign:{hashlib.sha256(raw).hexdigest()[:32]}" and (second.ref, second.at) == ("docusign:d-9", at)
    with pytest.raises(UnreadableWebhook, match="body's trigger field"):
        generic_conversion("gym", "docusign", b"{}", {})
    untimed = {"trigger": "document_signed", "id": "d-9"}
    with pytest.raises(UnreadableWebhook, match="body's at field"):
        generic_conversion("gym", "docusign", webhooks.body(untimed), untimed)


def test_a_slack_timestamp_or_event_time_past_any_date_is_refused_or_ignored_not_an_error() -> None:
    for timestamp in ("9" * 30, "99999999999", "１５３１４２０６１８", "-1"):
        with pytest.raises(BadSignature, match="at most 10 digits"):
            check_slack_signature(SLACK_SECRET, SLACK_BODY, timestamp, SLACK_SIGNATURE, SLACK_SENT)
    for event_time in (10**30, -(10**30), "soon"):
        ignored = slack_conversion("gym", {**webhooks.slack_message(), "event_time": event_time}).ignored
        assert f"event_time {event_time!r} is no time" in str(ignored)


def test_a_body_that_is_not_a_json_object_says_to_send_json() -> None:
    with pytest.raises(UnreadableWebhook, match="content type application/json"):
        read_object(b"payload=%7B%7D", "GitHub")
    with pytest.raises(UnreadableWebhook, match="must be a JSON object"):
        read_object(b"[1]", "GitHub")
