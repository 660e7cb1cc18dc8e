"""The write-side match index: which open loops of a tenant watch one channel key, and the
signals that came in under that key recently.

A signal loads the one index entry its key names, so matching never scans loops and never
reads a read model (a view may lag the log; the write side never waits on one). Registration and resolution update it in the same
save as the loop itself.

Order independence: commands and signals travel on different topics, so a reply may be
processed before the action it answers. Every signal with a key is therefore kept here for
`KEEP_SIGNALS_FOR` of event time, matched or not, and a loop registered later is resolved at
once by the first kept signal (in the order signals were processed) that its channel rule
matches and whose `at` is not earlier than the loop's registration. Matched signals are kept
too: a signal resolves every matching loop registered before it, so a loop registered earlier
in event time but processed after the signal must still find it (fan-out).
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from eventsourcing.domain import Aggregate

from loopline.domain.base import LooplineAggregate, TenantEvent
from loopline.domain.channels import channel_rule

KEEP_SIGNALS_FOR = timedelta(days=7)
"""How long, in event time, a signal waits for a loop registered late: the longest default deadline."""


class WatchIndex(LooplineAggregate):
    OWNER = {"tenant": "tenant"}

    class Created(Aggregate.Created):
        tenant: str
        channel: str
        key: str

    class Watched(TenantEvent):
        loop_ref: str

        def apply(self, index: WatchIndex) -> None:
            index.loop_refs.append(self.loop_ref)

    class Unwatched(TenantEvent):
        loop_ref: str

        def apply(self, index: WatchIndex) -> None:
            index.loop_refs.remove(self.loop_ref)

    class SignalKept(TenantEvent):
        """A signal came in under this key (its `at` is the timestamp): the loops it resolved stop
        being watched, and it is kept for loops registered later; signals older than the window go."""

        signal_ref: str
        signal_type: str
        data: dict[str, Any]
        resolved_loops: list[str]
        tasks: list[str]

        def apply(self, index: WatchIndex) -> None:
            for loop_ref in self.resolved_loops:
                index.loop_refs.remove(loop_ref)
            horizon = self.timestamp - KEEP_SIGNALS_FOR
            index.kept = [signal for signal in index.kept if signal["at"] >= horizon]
            index.kept.append({
                "ref": self.signal_ref, "type": self.signal_type, "at": self.timestamp, "data": self.data,
                "tasks": list(self.tasks),
            })

    class SignalDelivered(TenantEvent):
        """A kept signal resolved a loop registered later, on a task that had not received it yet."""

        signal_ref: str
        task_ref: str

        def apply(self, index: WatchIndex) -> None:
            for signal in index.kept:
                if signal["ref"] == self.signal_ref:
                    signal["tasks"].append(self.task_ref)

    def __init__(self, tenant: str, channel: str, key: str) -> None:
        self.tenant = tenant
        self.channel = channel
        self.key = key
        self.loop_refs: list[str] = []
        self.kept: list[dict[str, Any]] = []
        """Signals of the last KEEP_SIGNALS_FOR, in the order they were processed:
        ref, type, at, data, and the tasks whose inbox already holds them."""

    @classmethod
    def open(cls, *, id: Any, tenant: str, channel: str, key: str, now: datetime) -> WatchIndex:  # noqa: A002
        return cls._create(cls.Created, id=id, timestamp=now, tenant=tenant, channel=channel, key=key)

    def watch(self, loop_ref: str, *, now: datetime) -> None:
        if loop_ref not in self.loop_refs:
            self.trigger_event(self.Watched, timestamp=now, loop_ref=loop_ref)

    def unwatch(self, loop_ref: str, *, now: datetime) -> None:
        if loop_ref in self.loop_refs:
            self.trigger_event(self.Unwatched, timestamp=now, loop_ref=loop_ref)

    def keep(
        self, *, signal_ref: str, signal_type: str, data: dict[str, Any], resolved_loops: list[str], tasks: list[str],
        at: datetime,
    ) -> None:
        self.trigger_event(
            self.SignalKept, timestamp=at, signal_ref=signal_ref, signal_type=signal_type, data=data,
            resolved_loops=resolved_loops, tasks=tasks,
        )

    def kept_match(self, watch: dict[str, Any], registered_at: datetime) -> dict[str, Any] | None:
        """The first kept signal a loop registered at `registered_at` with this watch would have
        been resolved by, had the signal been processed after it."""
        matches = channel_rule(self.channel).matches
        return next(
            (signal for signal in self.kept if signal["at"] >= registered_at and matches(watch, signal["data"])), None
        )

    def mark_delivered(self, signal_ref: str, task_ref: str, *, now: datetime) -> None:
        self.trigger_event(self.SignalDelivered, timestamp=now, signal_ref=signal_ref, task_ref=task_ref)
