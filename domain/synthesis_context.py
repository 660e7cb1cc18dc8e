"""The synthesis run's context snapshot (seed 000 Part 3) and its delta against the last one stored.

A snapshot is sections (active tasks, signals, calendar events, goals, memory...) of items by key, each item the
one line the model reads; the delta is what the model has not seen yet: items new or changed since the last
run, and the keys gone from a section (a task closed, a goal reached).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

Snapshot = Mapping[str, Mapping[str, str]]


@dataclass(frozen=True)
class ContextDelta:
    changed: dict[str, dict[str, str]] = field(default_factory=dict)
    """By section, the items new since the last snapshot or whose line changed."""
    gone: dict[str, list[str]] = field(default_factory=dict)
    """By section, the keys the last snapshot had and this one has not."""

    @property
    def is_empty(self) -> bool:
        return not self.changed and not self.gone


SINCE_LAST_RUN = frozenset({"signals"})
"""Sections that list only what arrived since the last run: their items leaving is no news (nothing to think about)."""


def context_delta(last: Snapshot | None, current: Snapshot) -> ContextDelta:
    """What changed from `last` (None on the first run: everything is new) to `current`."""
    last = last or {}
    changed = {
        section: new for section, items in current.items()
        if (new := {key: line for key, line in items.items() if last.get(section, {}).get(key) != line})
    }
    gone = {
        section: removed for section, items in last.items()
        if section not in SINCE_LAST_RUN
        and (removed := sorted(key for key in items if key not in current.get(section, {})))
    }
    return ContextDelta(changed=changed, gone=gone)


BRIEF_SECTIONS = (("expired_loops", "expired loops"), ("due_soon", "due soon"), ("stalled", "stalled tasks"))
"""The sections the offline policy's morning brief reports, in its order, with the words it says them in."""


def morning_brief(snapshot: Snapshot) -> str | None:
    """The offline synthesis (no model): one brief of the expired loops, due-soon items and stalled tasks, each
    section's lines in key order so the same context always gives the same brief; None when there is nothing to say."""
    parts = [
        f"{title} ({len(items)}): " + "; ".join(items[key] for key in sorted(items))
        for section, title in BRIEF_SECTIONS if (items := snapshot.get(section))
    ]
    return "Morning brief. " + ". ".join(parts) + "." if parts else None
