"""The write-side match index: which open loops of a tenant watch one channel key.

A signal loads the one index entry its key names, so matching never scans loops and never
reads a read model (BRIEF invariant 3). Registration and resolution update it in the same
save as the loop itself.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from eventsourcing.domain import Aggregate

from loopline.domain.base import TenantEvent, LooplineAggregate


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

    def __init__(self, tenant: str, channel: str, key: str) -> None:
        self.tenant = tenant
        self.channel = channel
        self.key = key
        self.loop_refs: list[str] = []

    @classmethod
    def open(cls, *, id: Any, tenant: str, channel: str, key: str, now: datetime) -> WatchIndex:  # noqa: A002
        return cls._create(cls.Created, id=id, timestamp=now, tenant=tenant, channel=channel, key=key)

    def watch(self, loop_ref: str, *, now: datetime) -> None:
        if loop_ref not in self.loop_refs:
            self.trigger_event(self.Watched, timestamp=now, loop_ref=loop_ref)

    def unwatch(self, loop_ref: str, *, now: datetime) -> None:
        if loop_ref in self.loop_refs:
            self.trigger_event(self.Unwatched, timestamp=now, loop_ref=loop_ref)
