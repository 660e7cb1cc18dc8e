"""github: event type and resource id, and the repo when the watch names one."""

from __future__ import annotations

from loopline.domain.channels.rule import ChannelRule, SignalField

RULE = ChannelRule(
    channel="github",
    signal_type="github.event",
    signal_fields=(
        SignalField("event_type", "what happened", required=True,
                    values=("pull_request_review", "pull_request_merged", "issue_closed")),
        SignalField("repo", "the repository; matched when the watch names one", required=True),
        SignalField("resource_id", "the pull request or issue", required=True),
    ),
    required_watch=("event_type", "resource_id"),
    optional_watch=("repo",),
    rule="github: event_type and resource_id, and repo when the watch names one",
    summary="event type and resource; repo when the watch names one",
    watch_key=lambda watch: (str(watch["event_type"]), str(watch["resource_id"])),
    signal_key=lambda signal: (str(signal.get("event_type")), str(signal.get("resource_id"))),
    matches=lambda watch, signal: (
        signal.get("event_type") == watch["event_type"]
        and signal.get("resource_id") == watch["resource_id"]
        and (not watch.get("repo") or signal.get("repo") == watch["repo"])
    ),
)
