"""How the agent records its answers: in request order, a few to a transaction, and one at a time when
other writers keep committing first, never asking the model twice (on in-memory persistence)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from loopline.adapters.embedded_log import EmbeddedLog
from loopline.adapters.messages import parse_message
from loopline.domain import ids
from loopline.domain.task import Task
from loopline.processors.application import Loopline
from loopline.processors.bus import Bus, KeptConflicting, Outcome, Source
from loopline.processors.followers import agent as agent_module
from loopline.processors.followers.agent import Agent
from loopline.processors.followers.router import Router
from loopline.processors.followers.scheduler import Scheduler
from loopline.processors.handlers.table import build_bus
from tests.conftest import command
from tests.unit.fakes import RecordingDrafter, ScriptedModel

T0 = "2026-03-13T10:00:00Z"
LATER = datetime(2026, 3, 16, 10, 0, 1, tzinfo=timezone.utc)
TASKS = 5


@dataclass
class WatchedBus:
    """The real bus, noting the answers each transaction recorded; `crowded`, a batch of several answers
    always loses to another writer, as on a busy deployment where every answer files timers in buckets the
    other tenants' messages write too."""

    bus: Bus
    crowded: bool = False
    read: list[int] = field(default_factory=list)
    recorded: list[int] = field(default_factory=list)

    @property
    def app(self) -> Loopline:
        return self.bus.app

    def process(self, source: Source) -> list[Outcome[Any]]:
        if self.crowded:
            batch = source.read()
            self.read.append(len(list(batch.messages)) if batch is not None else 0)
            if self.read[-1] > 1:
                raise KeptConflicting("another writer committed first every time")
        outcomes = self.bus.process(source)
        self.recorded.append(len(outcomes))
        return outcomes


def _follow_ups_asked_for(app: Loopline) -> None:
    """`TASKS` tasks whose email went unanswered past its deadline: each asks the model for a follow-up."""
    messages = []
    for n in range(TASKS):
        messages += [
            command(f"c{n}", "task.create", T0, task_id=f"t{n}", title=f"Meet {n}"),
            command(f"e{n}", "action.record", T0, task_id=f"t{n}", action="send_email", to=f"p{n}@company.com",
                    subject="Next week?"),
        ]
    EmbeddedLog(app).append([parse_message(json.dumps(m)) for m in messages], "test")
    bus = build_bus(app, RecordingDrafter())
    Router(bus).run_once()
    Scheduler(bus).tick(LATER)


def _decisions(app: Loopline) -> list[int]:
    return [sum(isinstance(e, Task.DecisionRecorded) for e in app.events.get(ids.task_id("user_xyz", f"t{n}")))
            for n in range(TASKS)]


def test_answers_that_keep_conflicting_are_recorded_one_at_a_time_and_the_model_is_asked_once() -> None:
    app, model = Loopline(env={"PERSISTENCE_MODULE": "eventsourcing.popo"}), ScriptedModel()
    _follow_ups_asked_for(app)
    crowded = WatchedBus(build_bus(app, RecordingDrafter()), crowded=True)
    agent = Agent(crowded, model)  # type: ignore[arg-type]
    try:
        agent.run_once()
    finally:
        agent.close()

    assert len(model.requests) == TASKS
    assert _decisions(app) == [1] * TASKS
    assert crowded.read == [TASKS] + [1] * TASKS  # the whole group lost, then each answer alone went through
    assert crowded.recorded == [1] * TASKS
    assert app.position("agent") > 0


def test_answers_are_recorded_a_few_to_a_transaction_and_the_position_moves_once_all_are(monkeypatch) -> None:
    monkeypatch.setattr(agent_module, "RECORD_EVERY", 2)
    app, model = Loopline(env={"PERSISTENCE_MODULE": "eventsourcing.popo"}), ScriptedModel()
    _follow_ups_asked_for(app)
    counting = WatchedBus(build_bus(app, RecordingDrafter()))
    agent = Agent(counting, model)  # type: ignore[arg-type]
    try:
        agent.run_once()
        assert agent.run_once().read == 0  # the position moved past every request
    finally:
        agent.close()

    assert counting.recorded == [2, 2, 1] and _decisions(app) == [1] * TASKS
