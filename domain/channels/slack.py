"""slack: user and channel, and `ts > after_ts` compared as numbers."""

from __future__ import annotations

from typing import Any

from loopline.domain.channels.rule import ChannelRule, SignalData, SignalField, Watch


def _as_number(value: Any) -> float | None:
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def _matches(watch: Watch, signal: SignalData) -> bool:
    ts, after = _as_number(signal.get("ts")), _as_number(watch.get("after_ts"))
    return (
        signal.get("slack_user_id") == watch["slack_user_id"]
        and signal.get("channel_id") == watch["channel_id"]
        and ts is not None
        and (after is None or ts > after)
    )


RULE = ChannelRule(
    channel="slack",
    signal_type="slack.message",
    signal_fields=(
        SignalField("slack_user_id", "who wrote it", required=True),
        SignalField("channel_id", "where", required=True),
        SignalField("ts", "its Slack timestamp; resolves a watch only when later than its `after_ts`", required=True),
        SignalField("text", "kept with the signal"),
    ),
    required_watch=("slack_user_id", "channel_id"),
    optional_watch=("after_ts",),
    rule="slack: slack_user_id, channel_id and ts > after_ts (as numbers)",
    summary="user and channel equal; `ts > after_ts` as numbers",
    watch_key=lambda watch: (str(watch["slack_user_id"]), str(watch["channel_id"])),
    signal_key=lambda signal: (str(signal.get("slack_user_id")), str(signal.get("channel_id"))),
    matches=_matches,
)
