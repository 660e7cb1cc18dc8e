"""linear: issue id and event type, and the status when the watch names a target status."""

from __future__ import annotations

from loopline.domain.channels.rule import ChannelRule, SignalField

RULE = ChannelRule(
    channel="linear",
    signal_type="linear.event",
    signal_fields=(
        SignalField("event_type", "what happened", required=True, values=("issue_status_changed",)),
        SignalField("issue_id", "the issue", required=True),
        SignalField("status", "the new status; must equal the watch's `target_status` when it names one"),
    ),
    required_watch=("event_type", "issue_id"),
    optional_watch=("target_status",),
    rule="linear: issue_id and event_type, and status equal to target_status when the watch names one",
    summary="issue and event type; `status == target_status` when named",
    watch_key=lambda watch: (str(watch["event_type"]), str(watch["issue_id"])),
    signal_key=lambda signal: (str(signal.get("event_type")), str(signal.get("issue_id"))),
    matches=lambda watch, signal: (
        signal.get("event_type") == watch["event_type"]
        and signal.get("issue_id") == watch["issue_id"]
        and (not watch.get("target_status") or signal.get("status") == watch["target_status"])
    ),
)
