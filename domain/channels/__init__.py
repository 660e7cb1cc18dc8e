"""The channels Loopline matches signals on (seed 000, "The matching logic per channel"), and their registry.

Each channel is one module here defining its whole contract as a `ChannelRule` named `RULE`: the signal
type it listens to and that signal's fields (the edge's schema is derived from them), the watch fields a
loop must give, and an index key that a watch and a matching signal share, so a signal only ever looks at
loops filed under its own key. Adding a channel is that module plus its entry below.
"""

from __future__ import annotations

from loopline.domain.channels import calendar, email, github, linear, slack, webhook
from loopline.domain.channels.rule import ChannelRule, InvalidWatch, SignalData, SignalField, Watch

__all__ = ["CHANNELS", "CHANNEL_BY_SIGNAL", "ChannelRule", "InvalidWatch", "SignalData", "SignalField", "Watch", "channel_rule"]

CHANNELS: dict[str, ChannelRule] = {
    module.RULE.channel: module.RULE for module in (email, slack, github, calendar, linear, webhook)
}
CHANNEL_BY_SIGNAL: dict[str, ChannelRule] = {rule.signal_type: rule for rule in CHANNELS.values()}


def channel_rule(channel: str) -> ChannelRule:
    try:
        return CHANNELS[channel]
    except KeyError:
        raise InvalidWatch(f"unknown channel {channel!r}; known channels: {', '.join(sorted(CHANNELS))}") from None
