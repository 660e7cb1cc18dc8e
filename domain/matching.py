"""Per-channel watch schemas and matching rules (seed 000, "The matching logic per channel").

A channel is one `ChannelRule` in `CHANNELS`. Each rule names the signal type it listens to,
the watch fields a loop must give, and an index key that a watch and a matching signal share,
so a signal only ever looks at loops filed under its own key.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from domain.errors import DomainError

Watch = Mapping[str, Any]
SignalData = Mapping[str, Any]


class InvalidWatch(DomainError):
    """A loop's watch is missing fields its channel needs, or names an unknown channel."""


@dataclass(frozen=True)
class ChannelRule:
    channel: str
    signal_type: str
    required_watch: tuple[str, ...]
    rule: str
    watch_key: Callable[[Watch], str]
    signal_key: Callable[[SignalData], str | None]
    matches: Callable[[Watch, SignalData], bool]

    def check_watch(self, watch: Watch) -> None:
        missing = [field for field in self.required_watch if not watch.get(field)]
        if missing:
            raise InvalidWatch(
                f"{self.channel} watch is missing required field(s) {', '.join(missing)}; "
                f"a {self.channel} watch needs {', '.join(self.required_watch)}"
            )


def _email_matches(watch: Watch, signal: SignalData) -> bool:
    if str(signal.get("sender", "")).lower() != str(watch["sender"]).lower():
        return False
    return not watch.get("thread_id") or watch["thread_id"] == signal.get("thread_id")


def _webhook_key(source: Any, trigger_name: Any) -> str:
    return f"{source}\x1f{trigger_name}"


def _webhook_matches(watch: Watch, signal: SignalData) -> bool:
    payload = signal.get("payload") or {}
    return (
        watch["source"] == signal.get("source")
        and watch["trigger_name"] == signal.get("trigger_name")
        and all(payload.get(field) == value for field, value in (watch.get("match_fields") or {}).items())
    )


EMAIL = ChannelRule(
    channel="email",
    signal_type="email.received",
    required_watch=("sender",),
    rule="email: sender (case-insensitive) and thread_id when the watch names one",
    watch_key=lambda watch: str(watch["sender"]).lower(),
    signal_key=lambda signal: str(signal["sender"]).lower() if signal.get("sender") else None,
    matches=_email_matches,
)

WEBHOOK = ChannelRule(
    channel="webhook",
    signal_type="webhook.received",
    required_watch=("source", "trigger_name"),
    rule="webhook: source, trigger_name and every match_fields entry equal in the payload",
    watch_key=lambda watch: _webhook_key(watch["source"], watch["trigger_name"]),
    signal_key=lambda signal: (
        _webhook_key(signal["source"], signal["trigger_name"])
        if signal.get("source") and signal.get("trigger_name")
        else None
    ),
    matches=_webhook_matches,
)


def _as_number(value: Any) -> float | None:
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def _slack_matches(watch: Watch, signal: SignalData) -> bool:
    ts, after = _as_number(signal.get("ts")), _as_number(watch.get("after_ts"))
    return (
        signal.get("slack_user_id") == watch["slack_user_id"]
        and signal.get("channel_id") == watch["channel_id"]
        and ts is not None
        and (after is None or ts > after)
    )


SLACK = ChannelRule(
    channel="slack",
    signal_type="slack.message",
    required_watch=("slack_user_id", "channel_id"),
    rule="slack: slack_user_id, channel_id and ts > after_ts (as numbers)",
    watch_key=lambda watch: f"{watch['slack_user_id']}\x1f{watch['channel_id']}",
    signal_key=lambda signal: f"{signal.get('slack_user_id')}\x1f{signal.get('channel_id')}",
    matches=_slack_matches,
)

GITHUB = ChannelRule(
    channel="github",
    signal_type="github.event",
    required_watch=("event_type", "resource_id"),
    rule="github: event_type and resource_id, and repo when the watch names one",
    watch_key=lambda watch: f"{watch['event_type']}\x1f{watch['resource_id']}",
    signal_key=lambda signal: f"{signal.get('event_type')}\x1f{signal.get('resource_id')}",
    matches=lambda watch, signal: (
        signal.get("event_type") == watch["event_type"]
        and signal.get("resource_id") == watch["resource_id"]
        and (not watch.get("repo") or signal.get("repo") == watch["repo"])
    ),
)

CALENDAR = ChannelRule(
    channel="calendar",
    signal_type="calendar.event",
    required_watch=("event_type", "event_id"),
    rule="calendar: event_id and event_type, and attendee_email when the watch names one",
    watch_key=lambda watch: f"{watch['event_type']}\x1f{watch['event_id']}",
    signal_key=lambda signal: f"{signal.get('event_type')}\x1f{signal.get('event_id')}",
    matches=lambda watch, signal: (
        signal.get("event_type") == watch["event_type"]
        and signal.get("event_id") == watch["event_id"]
        and (
            not watch.get("attendee_email")
            or str(signal.get("attendee_email", "")).lower() == str(watch["attendee_email"]).lower()
        )
    ),
)

LINEAR = ChannelRule(
    channel="linear",
    signal_type="linear.event",
    required_watch=("event_type", "issue_id"),
    rule="linear: issue_id and event_type, and status equal to target_status when the watch names one",
    watch_key=lambda watch: f"{watch['event_type']}\x1f{watch['issue_id']}",
    signal_key=lambda signal: f"{signal.get('event_type')}\x1f{signal.get('issue_id')}",
    matches=lambda watch, signal: (
        signal.get("event_type") == watch["event_type"]
        and signal.get("issue_id") == watch["issue_id"]
        and (not watch.get("target_status") or signal.get("status") == watch["target_status"])
    ),
)

CHANNELS: dict[str, ChannelRule] = {rule.channel: rule for rule in (EMAIL, SLACK, GITHUB, CALENDAR, LINEAR, WEBHOOK)}
CHANNEL_BY_SIGNAL: dict[str, ChannelRule] = {rule.signal_type: rule for rule in CHANNELS.values()}


def channel_rule(channel: str) -> ChannelRule:
    try:
        return CHANNELS[channel]
    except KeyError:
        raise InvalidWatch(f"unknown channel {channel!r}; known channels: {', '.join(sorted(CHANNELS))}") from None
