"""The brain follower: answers the brain's model calls (processors/handlers/brain_calls.py CALL_KINDS), exactly once.

It follows the call kinds' request events from its tracked position. For each request still pending it builds the
call from the aggregate's state (no transaction is held), asks the model (`DecisionModel.converse`), and hands the
answers to the bus as `BrainAnswered`s in one transaction with its new position. A request no longer pending (a
repeat, another process's answer) is skipped, and its answer, if one arrives late, records nothing. Replay never
calls the model: the answers are events.

While its tenant or the whole system is paused, a request is held, as the agent holds a task's: no model is asked,
each pass reads it again (so a resume is seen, and it is answered then, unless the run's own fallback closed it
meanwhile), and the position stays before it, so a restarted brain finds it again. Later requests of tenants not
paused are answered meanwhile.
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
from loopline.processors.handlers.pausing import current_pause
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
        if previous > self.end or (previous == self.end and not self.answers):
            return None
        # A held request keeps the position where it is: the answers after it go without moving it.
        moves = self.moves and self.end > previous
        return Batch(list(self.answers), Position(self.name, self.end, previous=previous) if moves else None)

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
        self.held: dict[int, Any] = {}
        """Requests read while their tenant (or the system) was paused, by notification id: read again each pass."""
        self.read_to = 0
        """The last request this process read: past the position while one before it is held."""

    def run_once(self) -> AgentPass:
        """Answers the next batch of brain requests, in order, and the held ones whose pause ended; 0 read: none was
        waiting, or only held ones still paused."""
        previous = self.app.position(self.name)
        # Nothing here changes until the answers are committed: a failed pass leaves the next one to read them again.
        held = {place: notification for place, notification in self.held.items() if place > previous}
        read_to = max(self.read_to, previous)
        notifications = self.app.process_recorder.select_notifications(
            start=read_to + 1, limit=self.batch_size, topics=TOPICS
        )
        if not notifications and not held:
            self.held = held
            return AgentPass(0, [])
        still_held: dict[int, Any] = {}
        answers = list(self._answers([*held.values(), *notifications], still_held))
        read_to = notifications[-1].id if notifications else read_to
        read = len(notifications) + len(held) - len(still_held)
        details: list[str] = []
        if read:
            end = min(still_held, default=read_to + 1) - 1
            outcomes = self.bus.process(BrainAnswers(self.app, self.name, end, answers))
            details = [o.detail for o in outcomes if o.accepted and o.detail]
        self.held, self.read_to = still_held, read_to
        return AgentPass(read, details)

    def _answers(self, notifications: list[Any], held: dict[int, Any]) -> Iterator[BrainAnswered]:
        """The answers to the requests still pending; one whose tenant is paused is held instead (no model asked)."""
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
            if current_pause(reader, aggregate.tenant) is not None:
                held[notification.id] = notification
                continue
            request = row.prompt(reader, aggregate, event)  # outside any transaction
            answer = answer_or_why(lambda: self.model.converse(request))
            yield BrainAnswered(event.kind, event.originator_id, event.request_ref, event.timestamp, answer)

