"""webhook: source, trigger name, and every `match_fields` entry equal in the payload."""

from __future__ import annotations

from typing import Any

from loopline.domain.channels.rule import ChannelRule, SignalData, SignalField, Watch


def _key(source: Any, trigger_name: Any) -> tuple[str, str]:
    return str(source), str(trigger_name)


def _matches(watch: Watch, signal: SignalData) -> bool:
    payload = signal.get("payload") or {}
    return (
        watch["source"] == signal.get("source")
        and watch["trigger_name"] == signal.get("trigger_name")
        and all(payload.get(field) == value for field, value in (watch.get("match_fields") or {}).items())
    )


RULE = ChannelRule(
    channel="webhook",
    signal_type="webhook.received",
    signal_fields=(
        SignalField("source", "who sent the webhook", required=True),
        SignalField("trigger_name", "what it reports", required=True),
        SignalField("payload", "its body; must carry every `match_fields` entry of the watch", type=dict),
    ),
    required_watch=("source", "trigger_name"),
    optional_watch=("match_fields",),
    rule="webhook: source, trigger_name and every match_fields entry equal in the payload",
    summary="source, trigger and every `match_fields` entry equal in `payload`",
    watch_key=lambda watch: _key(watch["source"], watch["trigger_name"]),
    signal_key=lambda signal: (
        _key(signal["source"], signal["trigger_name"]) if signal.get("source") and signal.get("trigger_name") else None
    ),
    matches=_matches,
)
