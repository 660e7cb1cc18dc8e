"""Loopline on eventsourcing's in-memory store with fake ports, driven as `publish` and `tick` drive it:
the router, the agent (a scripted model), the brain (the offline policy unless given) and delivery (a recording SMTP channel) run until none has work."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from sqlalchemy.engine import Connection

from loopline.adapters.embedded_log import EmbeddedLog
from loopline.adapters.messages import parse_message
from loopline.domain import ids
from loopline.domain.task import Task
from loopline.processors.application import Loopline, UnitOfWork
from loopline.adapters.offline_policy import OfflinePolicy
from loopline.processors.followers.agent import Agent
from loopline.processors.followers.brain import Brain
from loopline.processors.followers.delivery import Delivery, is_contact_email
from loopline.processors.followers.router import Router
from loopline.processors.followers.scheduler import Scheduler
from loopline.processors.handlers.table import build_bus
from loopline.processors.ports import DecisionModel
from loopline.projections import writes
from tests.unit.fakes import FakeChannel, FakeClock, FakeLedger, RecordingDrafter, ScriptedModel


class InMemoryLoopline:
    def __init__(self, model: DecisionModel | None = None, brain_model: DecisionModel | None = None) -> None:
        self.app = Loopline(env={"PERSISTENCE_MODULE": "eventsourcing.popo"})
        self.model = model or ScriptedModel()
        bus = build_bus(self.app, RecordingDrafter())
        self.router, self.scheduler, self.agent = Router(bus), Scheduler(bus), Agent(bus, self.model)
        self.brain = Brain(bus, brain_model or OfflinePolicy())
        self.smtp = FakeChannel("smtp", accepts=is_contact_email)
        self.owner = FakeChannel("jsonl", accepts=lambda message: not is_contact_email(message))
        self.delivery = Delivery(self.app, FakeLedger(), [self.smtp, self.owner], clock=FakeClock())

    def close(self) -> None:
        self.agent.close()

    def publish(self, *messages: dict[str, Any]) -> list[Any]:
        EmbeddedLog(self.app).append([parse_message(json.dumps(message)) for message in messages], "test")
        return self.drain()

    def tick(self, now: datetime) -> list[str]:
        actions = self.scheduler.tick(now).actions
        self.drain()
        return actions

    def drain(self) -> list[Any]:
        """As the embedded `System.drain`: inputs first, then the model's answers, then delivery."""
        outcomes: list[Any] = []
        while True:
            routed = self.router.run_once()
            outcomes += routed
            if routed or self.agent.run_once().read or self.brain.run_once().read:
                continue
            if not self.delivery.run_once():
                return outcomes

    def task(self, tenant: str, ref: str) -> Task:
        task = UnitOfWork(self.app).get(ids.task_id(tenant, ref), Task)
        assert task is not None, f"no task {ref}"
        return task

    def events(self) -> list[Any]:
        """Every stored event, in the order stored."""
        recorder = self.app.recorder
        return [self.app.mapper.to_domain_event(n) for n in recorder.select_notifications(start=1, limit=10**9)]

    def project(self, conn: Connection, read_model: Any) -> None:
        """Every stored event through `read_model`'s handlers into `conn`, as its projector applies them."""
        for event in self.events():
            handler = read_model.handlers.get(type(event))
            if handler is not None:
                handler(conn, event, 0)
        writes.flush(conn)

    def emails(self) -> list[tuple[str, dict[str, Any]]]:
        """(delivery key, message) of every email sent to a contact, in the order sent."""
        return list(self.smtp.sent)
