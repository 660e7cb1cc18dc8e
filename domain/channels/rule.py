"""What a channel is: the watch a loop must give, the key a watch and a matching signal share, and the rule."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from loopline.domain.errors import DomainError

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
