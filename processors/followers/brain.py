"""The brain follower: answers the brain's model calls (processors/handlers/brain_calls.py CALL_KINDS), exactly once.

It follows the call kinds' request events from its tracked position. For each request still pending it builds the
call from the aggregate's state (no transaction is held), asks the model (`DecisionModel.converse`), and hands the
answers to the bus as `BrainAnswered`s in one transaction with its new position. A request no longer pending (a
repeat, another process's answer) is skipped, and its answer, if one arrives late, records nothing. Replay never
calls the model: the answers are events.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from eventsourcing.utils import get_topic

from loopline.processors.application import Loopline, Position, UnitOfWork
from loopline.processors.bus import Batch, Bus
from loopline.processors.followers.agent import AgentPass, answer_or_why
from loopline.processors.handlers.brain_calls import CALL_KINDS
from loopline.processors.messages import BrainAnswered
from loopline.processors.ports import DecisionModel

TOPICS = sorted({get_topic(row.requested) for row in CALL_KINDS.values()})


@dataclass
class BrainAnswers:
    """A pass's answers with the position of its last request; read again after a conflict (no model is asked again).
    Recorded one by one (a batch that cannot be stored whole), only the last moves the position."""

    app: Loopline
    name: str
    end: int
    answers: list[BrainAnswered] = field(default_factory=list)
    moves: bool = True

    def read(self) -> Batch | None:
        previous = self.app.position(self.name)
        if previous >= self.end:
            return None
        return Batch(list(self.answers), Position(self.name, self.end, previous=previous) if self.moves else None)

    def one_by_one(self, batch: Batch) -> Iterator[BrainAnswers]:
        for place, answer in enumerate(self.answers):
            yield BrainAnswers(self.app, self.name, self.end, [answer], moves=place == len(self.answers) - 1)


class Brain:
    name = "brain"

    def __init__(self, bus: Bus, model: DecisionModel, *, batch_size: int = 50) -> None:
        self.bus = bus
        self.app = bus.app
        self.model = model
        self.batch_size = batch_size

    def run_once(self) -> AgentPass:
        """Answers the next batch of brain requests, in order; 0 read: none was waiting."""
        previous = self.app.position(self.name)
        notifications = self.app.process_recorder.select_notifications(
            start=previous + 1, limit=self.batch_size, topics=TOPICS
        )
        if not notifications:
            return AgentPass(0, [])
        answers = list(self._answers(notifications))
        outcomes = self.bus.process(BrainAnswers(self.app, self.name, notifications[-1].id, answers))
        return AgentPass(len(notifications), [o.detail for o in outcomes if o.accepted and o.detail])

    def _answers(self, notifications: list[Any]) -> Iterator[BrainAnswered]:
        reader = UnitOfWork(self.app)
        asked: set[tuple[Any, str]] = set()
        for notification in notifications:
            event = self.app.mapper.to_domain_event(notification)
            row = CALL_KINDS[event.kind]
            aggregate = reader.get(event.originator_id, row.aggregate)
            key = (event.originator_id, event.request_ref)
            if aggregate is None or key in asked or not row.pending(aggregate, event.request_ref):
                continue
            asked.add(key)
            request = row.prompt(reader, aggregate, event)  # outside any transaction
            answer = answer_or_why(lambda: self.model.converse(request))
            yield BrainAnswered(event.kind, event.originator_id, event.request_ref, event.timestamp, answer)

