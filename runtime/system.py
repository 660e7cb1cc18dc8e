"""The running system: the processors drained until none has work, the scheduler's tick, and read-model rebuilds."""

from __future__ import annotations

import os
import queue
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime
from multiprocessing import get_context
from typing import Any, Protocol

from eventsourcing.utils import get_topic
from sqlalchemy.engine import Engine

from loopline.adapters.clock import SystemClock
from loopline.adapters.config import Settings
from loopline.adapters.embedded_log import AppendReport
from loopline.adapters.leader import PostgresLeader, SoleLeader, leader_for
from loopline.adapters.heartbeats import LastTick, TickTimes
from loopline.processors.followers.agent import Agent
from loopline.processors.followers.brain import Brain
from loopline.processors.application import Loopline
from loopline.processors.bus import Bus, Outcomes
from loopline.processors.followers.delivery import Delivery
from loopline.processors.messages import Inbound, Message
from loopline.processors.followers.router import INBOUND_TOPIC, Router
from loopline.processors.followers.scheduler import Scheduler, TickReport
from loopline.projections.runner import REBUILD_BATCH, ProjectionRunner
from loopline.runtime.stores import READ_MODELS, open_stores


@dataclass
class DrainReport(Outcomes[Inbound]):
    delivered: int = 0
    relayed: int = 0
    projected: int = 0
    decisions: list[str] = field(default_factory=list)
    """What the agent's decisions did, in words (a tick prints them after its own lines)."""


@dataclass(frozen=True)
class RebuildReport:
    """What a rebuild read and wrote: every read model reads only the event types it follows."""

    events_in_store: int
    events_read: int  # distinct events of the types the rebuilt read models follow
    applied: dict[str, int]  # per read model, the events its handlers applied


class Log(Protocol):
    """What `publish` appends to: the event store (embedded) or Kafka (scale)."""

    def append(self, messages: list[Message], source: str) -> AppendReport: ...


@dataclass
class System:
    settings: Settings
    app: Loopline
    bus: Bus
    log: Log
    router: Router | None
    scheduler: Scheduler
    delivery: Delivery
    projections: ProjectionRunner
    leader: SoleLeader | PostgresLeader
    ledger_engine: Engine
    agent: Agent | None = None
    brain: Brain | None = None
    """The brain's model calls (synthesis turns, debate roles): run wherever the agent runs."""
    relay: Any = None

    @property
    def is_scale(self) -> bool:
        return self.router is None

    def drain(
        self, progress: Callable[[int], None] | None = None, *, deliver: bool | None = None, decide: bool | None = None
    ) -> DrainReport:
        """Runs the processors this process may run until none has work left, so the next query sees the effects.

        At scale inbound messages are the Kafka workers' job and the relay the leader's; delivery
        only a `loopline run` leader's (it passes `deliver=True`), never a `publish` or `tick`
        from a host. Leadership is checked before each batch (a lost lock stops them at once).
        Embedded, the home lock is held throughout and its holder delivers. Projections are safe
        to run anywhere (their positions are compare-and-set). The agent (model decisions) runs here
        before delivery when embedded; at scale the leader runs it in a thread of its own
        (`runtime/leading.py`), so a slow model never holds up delivery or projections.
        """
        report = DrainReport()
        if deliver is None:
            deliver = not self.is_scale
        if decide is None:
            decide = not self.is_scale
        with self.leader.writing():
            while True:
                outcomes = self.router.run_once() if self.router else []
                report.outcomes += outcomes
                if progress and outcomes:
                    progress(len(outcomes))
                if outcomes:
                    continue
                report.projected += self.projections.catch_up()  # first: it is what the next query reads
                answered = self.agent.run_once() if decide and self.agent else None
                if answered and answered.read:
                    report.decisions += answered.done
                    continue  # its sends and owner notices are delivered in the same drain
                thought = self.brain.run_once() if decide and self.brain else None
                if thought and thought.read:
                    report.decisions += thought.done
                    continue
                leads = self.leader.try_lead()  # before each batch: a lost lock stops relaying and delivering at once
                delivered = self.delivery.run_once() if leads and deliver else 0  # never waits on the broker
                relayed = self.relay.run_once() if self.relay and leads else 0
                report.relayed += relayed
                report.delivered += delivered
                if not (relayed or delivered):
                    break
        return report

    def input_lag(self) -> list[dict[str, Any]]:
        """Per source, the next position to read, the log's end, and the messages pending in between.

        At scale a source is a partition: `next` is the offset to read next (the stored position), `end` the
        offset the broker reports after its last record, `pending` = end - next, never below 0 (Tansu reports
        the end as its last record batch's base offset + 1, which can be below `next`). Embedded, the log is the
        event store: positions number every event, `next` is the first message not yet processed (or `end`), and
        `pending` counts the messages from there, not the positions.
        """
        if self.router is not None:
            head = self.app.process_recorder.max_notification_id() or 0
            position = self.app.position(self.router.name)
            pending = self.app.process_recorder.select_notifications(
                start=position + 1, limit=100_000, stop=head, topics=[INBOUND_TOPIC]
            )
            following = pending[0].id if pending else head + 1  # the first message not yet processed
            return [{"source": "embedded log", "next": following, "end": head + 1, "pending": len(pending)}]
        from loopline.adapters.kafka_log import Topics, end_offsets
        from loopline.adapters.kafka_worker import PartitionPositions

        assert self.settings.kafka is not None
        topics = Topics(self.settings.kafka_topic_prefix)
        positions = PartitionPositions(self.app)
        rows = []
        for (topic, partition), end in sorted(end_offsets(self.settings.kafka, [topics.commands, topics.signals], self.settings.connect_timeout).items()):
            following = self.app.position(positions.name(topic, partition))
            rows.append({"source": f"{topic}[{partition}]", "next": following, "end": end, "pending": max(end - following, 0)})
        return rows

    def messages_processed(self) -> int:
        """Distinct messages processed, accepted or rejected (a repeated id is one; malformed records go to the
        dead-letter topic uncounted). Embedded, a message is recorded when appended, so the pending ones are not."""
        received = self.app.process_recorder.count_by_topic([INBOUND_TOPIC]).get(INBOUND_TOPIC, 0)  # type: ignore[attr-defined]
        return received - (sum(row["pending"] for row in self.input_lag()) if self.router is not None else 0)

    def tick(self, now: datetime, progress: Callable[[int, int], None] | None = None) -> TickReport:
        """One scheduler scan at a time across all processes, then drain; records how long it took (`/metrics`)."""
        started = time.monotonic()
        with self.leader.writing():
            with self.leader.scheduling():
                report = self.scheduler.tick(now, progress)
            report.actions += self.drain().decisions
        TickTimes(self.ledger_engine).record(LastTick(time.monotonic() - started, len(report.actions), now,
                                                      SystemClock().now()))
        return report

    def rebuild(self, names: Sequence[str] = (), progress: Callable[[int], None] | None = None) -> RebuildReport:
        """Drops the named read models and projects them again; on PostgreSQL in one process per core,
        each taking a share of the read models (they keep separate positions, so they are independent)."""
        chosen = self.projections.reset(names)
        stored = self.app.process_recorder.count_by_topic()  # type: ignore[attr-defined]
        workers = min(os.cpu_count() or 1, len(chosen))
        if workers < 2 or not self.settings.read_model.startswith(("postgresql://", "postgres://")):
            runner = self.projections.only(chosen)
            read = runner.catch_up(progress, batch_size=REBUILD_BATCH)
            return RebuildReport(sum(stored.values()), read, {name: runner.applied[name] for name in chosen})
        groups = self.projections.split(chosen, workers)
        context = get_context("spawn")
        with context.Manager() as manager, ProcessPoolExecutor(len(groups), mp_context=context) as pool:
            reports = manager.Queue()
            futures = [
                pool.submit(_rebuild_part, self.settings, group, reports if i == 0 else None) for i, group in enumerate(groups)
            ]
            while not all(future.done() for future in futures):
                _drain_reports(reports, progress, timeout=0.2)
            _drain_reports(reports, progress, timeout=0)
            applied = {name: n for future in futures for name, n in future.result().items()}
        # The groups read overlapping shares of the store: the distinct events read are those of the types any follows.
        followed = {get_topic(cls) for p in self.projections.projections if p.name in chosen for cls in p.handlers}
        read = sum(n for topic, n in stored.items() if topic in followed)
        return RebuildReport(sum(stored.values()), read, {name: applied.get(name, 0) for name in chosen})

    def close(self) -> None:
        for closable in (self.log, self.relay, self.agent):
            if hasattr(closable, "close"):
                closable.close()
        self.leader.close()
        self.ledger_engine.dispose()
        self.projections.engine.dispose()
        self.app.factory.close()


def _rebuild_part(settings: Settings, names: list[str], reports: Any) -> dict[str, int]:
    """One rebuild process: catches up some read models from the event store; returns the events each applied."""
    leader = leader_for(settings.event_store, settings.home)
    stores = open_stores(settings, leader, tuple(p for p in READ_MODELS if p.name in names))
    try:
        stores.projections.catch_up(reports.put if reports is not None else None, batch_size=REBUILD_BATCH)
        return dict(stores.projections.applied)
    finally:
        stores.projections.engine.dispose()
        stores.ledger_engine.dispose()
        stores.app.factory.close()
        leader.close()


def _drain_reports(reports: Any, progress: Callable[[int], None] | None, timeout: float) -> None:
    try:
        while True:
            count = reports.get(timeout=timeout) if timeout else reports.get_nowait()
            if progress:
                progress(count)
    except queue.Empty:
        return
