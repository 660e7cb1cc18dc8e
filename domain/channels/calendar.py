"""calendar: event id and event type, and the attendee (case-insensitive) when the watch names one."""

from __future__ import annotations

from loopline.domain.channels.rule import ChannelRule, SignalField

RULE = ChannelRule(
    channel="calendar",
    signal_type="calendar.event",
    signal_fields=(
        SignalField("event_type", "what happened", required=True,
                    values=("invite_accepted", "event_started", "event_updated")),
        SignalField("event_id", "the calendar event", required=True),
        SignalField("attendee_email", "who; matched when the watch names one"),
        SignalField("starts_at", "when the event starts (RFC 3339); one ahead is an upcoming event to the synthesis run"),
    ),
    required_watch=("event_type", "event_id"),
    optional_watch=("attendee_email",),
    rule="calendar: event_id and event_type, and attendee_email when the watch names one",
    summary="event id and type; attendee when the watch names one",
    watch_key=lambda watch: (str(watch["event_type"]), str(watch["event_id"])),
    signal_key=lambda signal: (str(signal.get("event_type")), str(signal.get("event_id"))),
    matches=lambda watch, signal: (
        signal.get("event_type") == watch["event_type"]
        and signal.get("event_id") == watch["event_id"]
        and (
            not watch.get("attendee_email")
            or str(signal.get("attendee_email", "")).lower() == str(watch["attendee_email"]).lower()
        )
    ),
)
