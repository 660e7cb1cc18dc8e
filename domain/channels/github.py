"""github: event type and resource id, and the repo when the watch names one."""

from __future__ import annotations

from loopline.domain.channels.rule import ChannelRule

RULE = ChannelRule(
    channel="github",
    signal_type="github.event",
    required_watch=("event_type", "resource_id"),
    rule="github: event_type and resource_id, and repo when the watch names one",
    watch_key=lambda watch: (str(watch["event_type"]), str(watch["resource_id"])),
    signal_key=lambda signal: (str(signal.get("event_type")), str(signal.get("resource_id"))),
    matches=lambda watch, signal: (
        signal.get("event_type") == watch["event_type"]
        and signal.get("resource_id") == watch["resource_id"]
        and (not watch.get("repo") or signal.get("repo") == watch["repo"])
    ),
)
