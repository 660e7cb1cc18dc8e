"""What a channel is: the watch a loop must give, the key a watch and a matching signal share, and the rule.

A key is a tuple of strings, never one string joined by hand, so that its parts cannot run into
each other: `ids.composite` makes the one string that names it.
"""

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
class SignalField:
    """One field of a channel's signal: its type (`str` or `dict`), whether every signal carries it, the values
    it may take (empty: any non-blank text), whether it is an address (kept as its normalised mailbox,
    `domain/mailbox.py`) and what it means. The edge's signal schema is derived from these."""

    name: str
    doc: str
    type: Any = str
    required: bool = False
    values: tuple[str, ...] = ()
    mailbox: bool = False


@dataclass(frozen=True)
class ChannelRule:
    """A channel's whole contract: the signal it listens to and that signal's fields, the watch a loop must give,
    the key a watch and a matching signal share, and the rule that matches them."""

    channel: str
    signal_type: str
    signal_fields: tuple[SignalField, ...]
    required_watch: tuple[str, ...]
    optional_watch: tuple[str, ...]
    """Watch fields the rule also reads when a watch names them."""
    rule: str
    """The rule as a resolved loop's trail records it."""
    summary: str
    """The rule in the README's channel table."""
    watch_key: Callable[[Watch], tuple[str, ...]]
    signal_key: Callable[[SignalData], tuple[str, ...] | None]
    matches: Callable[[Watch, SignalData], bool]

    def check_watch(self, watch: Watch) -> None:
        missing = [field for field in self.required_watch if not watch.get(field)]
        if missing:
            raise InvalidWatch(
                f"{self.channel} watch is missing required field(s) {', '.join(missing)}; "
                f"a {self.channel} watch needs {', '.join(self.required_watch)}"
            )
