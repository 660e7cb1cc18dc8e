"""The composition root: builds the embedded or the scale system from settings. Nothing connects at import time."""

from __future__ import annotations

import os
import queue
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime
from multiprocessing import get_context
from typing import Any, Protocol

from eventsourcing.utils import get_topic
from sqlalchemy.engine import Engine

from loopline.adapters.channels import JsonlOutbox, KillAfterSend
from loopline.adapters.clock import SystemClock
from loopline.adapters.config import InvalidSetting, Settings
from loopline.adapters.delivery_state import SqlDeliveryLedger
from loopline.adapters.drafting import TemplateDrafter
from loopline.adapters.embedded_log import AppendReport, EmbeddedLog
from loopline.adapters.event_store import event_store_env
from loopline.adapters.leader import PostgresLeader, SoleLeader, leader_for
from loopline.adapters.offline_policy import OfflinePolicy
from loopline.adapters.reachability import check_reachable
from loopline.adapters.read_model import read_model_engine
from loopline.adapters.smtp import SmtpChannel, SmtpServer
from loopline.adapters.webhook import WebhookChannel
from loopline.processors import faults
from loopline.processors.agent import Agent, concurrency_from_env
from loopline.processors.application import Loopline
from loopline.processors.bus import Bus
from loopline.processors.delivery import Delivery
from loopline.processors.handlers import build_bus
from loopline.processors.messages import Message
from loopline.processors.ports import DecisionModel, OutboundChannel
from loopline.processors.router import INBOUND_TOPIC, MessageOutcome, Router
from loopline.processors.scheduler import Scheduler, TickReport
from loopline.projections import open_loops, proactive_runs, task_memory, tasks, tenants, timeline
from loopline.projections.runner import REBUILD_BATCH, ProjectionRunner

READ_MODELS = (tasks, open_loops, proactive_runs, timeline, task_memory, tenants)


@dataclass
class DrainReport:
    outcomes: list[MessageOutcome] = field(default_factory=list)
    delivered: int = 0
    relayed: int = 0
    projected: int = 0
    decisions: list[str] = field(default_factory=list)
    """What the agent's decisions did, in words (a tick prints them after its own lines)."""

    @property
    def rejected(self) -> list[MessageOutcome]:
        return [outcome for outcome in self.outcomes if not (outcome.accepted or outcome.parked)]

    @property
    def parked(self) -> list[MessageOutcome]:
        return [outcome for outcome in self.outcomes if outcome.parked]


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
        (`cli/worker.py`), so a slow model never holds up delivery or projections.
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
        """One scheduler scan at a time across all processes, then drain."""
        with self.leader.writing():
            with self.leader.scheduling():
                report = self.scheduler.tick(now, progress)
            report.actions += self.drain().decisions
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
    with leader.creating_schema():  # the store's and read models' CREATE … IF NOT EXISTS race otherwise
        app = Loopline(env=event_store_env(settings.event_store))
        engine = read_model_engine(settings.read_model)
        runner = ProjectionRunner(app, engine, [p for p in READ_MODELS if p.name in names])
    try:
        runner.catch_up(reports.put if reports is not None else None, batch_size=REBUILD_BATCH)
        return dict(runner.applied)
    finally:
        engine.dispose()
        app.factory.close()
        leader.close()


def _drain_reports(reports: Any, progress: Callable[[int], None] | None, timeout: float) -> None:
    try:
        while True:
            count = reports.get(timeout=timeout) if timeout else reports.get_nowait()
            if progress:
                progress(count)
    except queue.Empty:
        return


def build(settings: Settings | None = None) -> System:
    settings = settings or Settings.load()
    faults.configure(os.environ.get("LOOPLINE_TEST_FAULTS", ""))  # test-only: see processors/faults.py
    check_reachable(settings)
    try:
        settings.home.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise InvalidSetting(f"LOOPLINE_HOME={str(settings.home)!r} cannot be created: {error.strerror}") from None
    leader = leader_for(settings.event_store, settings.home)
    channels = channels_for(settings)
    with leader.creating_schema():
        app = Loopline(env=event_store_env(settings.event_store))
        projections = ProjectionRunner(app, read_model_engine(settings.read_model), READ_MODELS)
        # The delivery ledger lives beside the events (not the read models): a rebuild never resends.
        ledger_engine = read_model_engine(settings.event_store)
        ledger = SqlDeliveryLedger(ledger_engine)
    bus = build_bus(app, TemplateDrafter())
    system = System(
        settings=settings,
        app=app,
        bus=bus,
        log=EmbeddedLog(app),
        router=Router(bus),
        scheduler=Scheduler(bus),
        delivery=Delivery(app, ledger, channels, clock=SystemClock()),
        projections=projections,
        leader=leader,
        ledger_engine=ledger_engine,
        agent=Agent(bus, decision_model(settings), concurrency=model_concurrency()),
    )
    if settings.kafka:
        from loopline.adapters.kafka_log import KafkaPublisher, Topics, ensure_topics
        from loopline.adapters.kafka_relay import OutboxRelay

        topics = Topics(settings.kafka_topic_prefix)
        ensure_topics(settings.kafka, topics, settings.kafka_partitions, settings.connect_timeout)
        system.log = KafkaPublisher(settings.kafka, topics, settings.connect_timeout)
        system.router = None
        system.relay = OutboxRelay(app, settings.kafka, topics)
    return system


def decision_model(settings: Settings) -> DecisionModel:
    """Claude through the Anthropic API when ANTHROPIC_API_KEY is set, else the deterministic offline policy."""
    if settings.anthropic_api_key:
        from loopline.adapters.anthropic_model import AnthropicModel

        return AnthropicModel.from_settings(settings)
    return OfflinePolicy()


def model_concurrency() -> int:
    """LOOPLINE_MODEL_CONCURRENCY: model calls in flight at once (default 16)."""
    try:
        return concurrency_from_env()
    except ValueError as error:
        raise InvalidSetting(str(error)) from None


def channels_for(settings: Settings) -> list[OutboundChannel]:
    """The JSONL outbox always; email to contacts and webhooks to the owner and agent when configured."""
    channels: list[OutboundChannel] = [JsonlOutbox(settings.home / "outbox.jsonl")]
    if settings.smtp_url:
        channels.append(SmtpChannel(SmtpServer.from_url(settings.smtp_url), settings.email_from))
    if settings.webhook_url:
        if not settings.webhook_secret:
            raise InvalidSetting("LOOPLINE_WEBHOOK_URL is set but LOOPLINE_WEBHOOK_SECRET is not: set the secret "
                                 "the receiver verifies X-Loopline-Signature with")
        channels.append(WebhookChannel(settings.webhook_url, settings.webhook_secret))
    killed_after = os.environ.get("LOOPLINE_TEST_KILL_AFTER_SEND")  # test-only: see KillAfterSend
    return [KillAfterSend(c) if c.name == killed_after else c for c in channels]
