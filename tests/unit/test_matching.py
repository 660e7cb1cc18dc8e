"""Per-channel watch schemas and matching rules."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from loopline.domain.channels import CHANNELS, InvalidWatch, channel_rule

EMAIL, SLACK, GITHUB, CALENDAR, LINEAR, WEBHOOK = (
    CHANNELS[name] for name in ("email", "slack", "github", "calendar", "linear", "webhook")
)


def test_email_sender_matches_case_insensitively():
    assert EMAIL.matches({"sender": "Bob@Example.com"}, {"sender": "bob@EXAMPLE.com", "thread_id": "t1"})


def test_email_from_someone_else_does_not_match():
    assert not EMAIL.matches({"sender": "bob@example.com"}, {"sender": "alice@example.com"})


def test_thread_bound_email_watch_ignores_other_threads():
    watch = {"sender": "bob@example.com", "thread_id": "t1"}
    assert EMAIL.matches(watch, {"sender": "bob@example.com", "thread_id": "t1"})
    assert not EMAIL.matches(watch, {"sender": "bob@example.com", "thread_id": "t2"})


def test_email_watch_without_thread_matches_any_thread():
    assert EMAIL.matches({"sender": "bob@example.com"}, {"sender": "bob@example.com", "thread_id": "t9"})


WEBHOOK_WATCH = {"source": "docusign", "trigger_name": "document_signed", "match_fields": {"envelope": "E1", "kind": "nda"}}


def test_webhook_matches_when_every_match_field_is_equal():
    signal = {"source": "docusign", "trigger_name": "document_signed", "payload": {"envelope": "E1", "kind": "nda", "x": 1}}
    assert WEBHOOK.matches(WEBHOOK_WATCH, signal)


def test_webhook_with_one_different_field_does_not_match():
    signal = {"source": "docusign", "trigger_name": "document_signed", "payload": {"envelope": "E1", "kind": "msa"}}
    assert not WEBHOOK.matches(WEBHOOK_WATCH, signal)


def test_webhook_missing_a_payload_field_does_not_match():
    signal = {"source": "docusign", "trigger_name": "document_signed", "payload": {"envelope": "E1"}}
    assert not WEBHOOK.matches(WEBHOOK_WATCH, signal)


SLACK_WATCH = {"slack_user_id": "U1", "channel_id": "D1", "after_ts": "9.9"}


def slack(ts: str) -> dict:
    return {"slack_user_id": "U1", "channel_id": "D1", "ts": ts}


def test_slack_message_at_the_watched_ts_does_not_match():
    assert not SLACK.matches(SLACK_WATCH, slack("9.9"))


def test_slack_later_message_matches_comparing_ts_as_numbers():
    assert SLACK.matches(SLACK_WATCH, slack("10.5"))  # "10.5" < "9.9" as text
    assert not SLACK.matches({**SLACK_WATCH, "after_ts": "10.5"}, slack("9.9"))


def test_github_repo_is_checked_only_when_the_watch_names_it():
    signal = {"event_type": "pull_request_review", "resource_id": "42", "repo": "acme/api"}
    assert GITHUB.matches({"event_type": "pull_request_review", "resource_id": "42"}, signal)
    assert GITHUB.matches({"event_type": "pull_request_review", "resource_id": "42", "repo": "acme/api"}, signal)
    assert not GITHUB.matches({"event_type": "pull_request_review", "resource_id": "42", "repo": "acme/web"}, signal)


def test_calendar_attendee_is_optional_and_case_insensitive():
    signal = {"event_type": "invite_accepted", "event_id": "ev1", "attendee_email": "Carol@X.com"}
    assert CALENDAR.matches({"event_type": "invite_accepted", "event_id": "ev1"}, signal)
    assert CALENDAR.matches({"event_type": "invite_accepted", "event_id": "ev1", "attendee_email": "carol@x.com"}, signal)
    assert not CALENDAR.matches({"event_type": "invite_accepted", "event_id": "ev1", "attendee_email": "dan@x.com"}, signal)


def test_linear_issue_in_another_status_does_not_match_target_status():
    watch = {"event_type": "issue_updated", "issue_id": "LIN-1", "target_status": "done"}
    assert LINEAR.matches(watch, {"event_type": "issue_updated", "issue_id": "LIN-1", "status": "done"})
    assert not LINEAR.matches(watch, {"event_type": "issue_updated", "issue_id": "LIN-1", "status": "in_progress"})


def test_watch_missing_a_required_field_is_rejected_naming_it():
    with pytest.raises(InvalidWatch, match="trigger_name"):
        WEBHOOK.check_watch({"source": "docusign"})


def test_unknown_channel_is_rejected_listing_known_channels():
    with pytest.raises(InvalidWatch) as raised:
        channel_rule("fax")
    assert "fax" in str(raised.value)
    assert all(name in str(raised.value) for name in CHANNELS)


MATCHING_PAIRS = {
    "email": ({"sender": "Bob@X.com", "thread_id": "t"}, {"sender": "bob@x.COM", "thread_id": "t"}),
    "webhook": ({"source": "s", "trigger_name": "t", "match_fields": {"a": 1}}, {"source": "s", "trigger_name": "t", "payload": {"a": 1}}),
    "slack": ({"slack_user_id": "U", "channel_id": "C", "after_ts": "1"}, {"slack_user_id": "U", "channel_id": "C", "ts": "2"}),
    "github": ({"event_type": "e", "resource_id": "r", "repo": "o/r"}, {"event_type": "e", "resource_id": "r", "repo": "o/r"}),
    "calendar": ({"event_type": "e", "event_id": "i"}, {"event_type": "e", "event_id": "i"}),
    "linear": ({"event_type": "e", "issue_id": "i", "target_status": "done"}, {"event_type": "e", "issue_id": "i", "status": "done"}),
}


@pytest.mark.parametrize("channel", sorted(CHANNELS))
def test_matching_signal_is_filed_under_the_watch_key(channel):
    rule = channel_rule(channel)
    watch, signal = MATCHING_PAIRS[channel]
    rule.check_watch(watch)
    assert rule.matches(watch, signal)
    assert rule.signal_key(signal) == rule.watch_key(watch)


text = st.text(min_size=1, max_size=12)


case_change = st.sampled_from([str, str.lower, str.upper, str.swapcase, str.title])


@given(sender=text, other=text, change=case_change, use_other=st.booleans(), thread=st.none() | text)
def test_any_email_that_matches_shares_the_watch_key(sender, other, change, use_other, thread):
    watch = {"sender": sender, **({"thread_id": thread} if thread else {})}
    signal = {"sender": change(other if use_other else sender), "thread_id": thread}
    if EMAIL.matches(watch, signal):
        assert EMAIL.signal_key(signal) == EMAIL.watch_key(watch)


@given(sender=st.from_regex(r"[A-Za-z0-9._]{1,10}@[A-Za-z]{1,8}\.com", fullmatch=True), change=case_change)
def test_email_address_in_any_case_matches(sender, change):
    assert EMAIL.matches({"sender": sender}, {"sender": change(sender)})


@given(source=text, trigger=text, fields=st.dictionaries(text, text, max_size=3), extra=st.dictionaries(text, text, max_size=3))
def test_any_webhook_that_matches_shares_the_watch_key(source, trigger, fields, extra):
    watch = {"source": source, "trigger_name": trigger, "match_fields": fields}
    signal = {"source": source, "trigger_name": trigger, "payload": {**extra, **fields}}
    assert WEBHOOK.matches(watch, signal)
    assert WEBHOOK.signal_key(signal) == WEBHOOK.watch_key(watch)
