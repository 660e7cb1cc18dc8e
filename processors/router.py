"""Routes inbound messages to command handlers or signal matching, exactly once per message."""

from __future__ import annotations

from dataclasses import dataclass, replace
from uuid import UUID

from eventsourcing.persistence import IntegrityError
from eventsourcing.utils import get_topic

from loopline.domain import ids
from loopline.domain.errors import DomainError
from loopline.domain.inbound import InboundMessage
from loopline.domain.channels import CHANNEL_BY_SIGNAL
from loopline.domain.open_loop import OpenLoop
from loopline.domain.parked import ParkedMessage
from loopline.domain.timeutil import format_time, parse_time
from loopline.domain.watch_index import WatchIndex
from loopline.processors import faults
from loopline.processors.application import Loopline, Position, UnitOfWork
from loopline.processors.commands import command_from_data, handle_command
from loopline.processors.messages import Message
from loopline.processors.signals import handle_signal
from loopline.processors.steps import Fault, Outcome, apply_steps, is_infrastructure

INBOUND_TOPIC = get_topic(InboundMessage.Received)
RETRIES = 10
EMBEDDED_LOG = "embedded log"


def handle_message(uow: UnitOfWork, msg: Message) -> str:
    """The single dispatch point for commands and signals; a DomainError refuses the message."""
    return handle_command(uow, msg) if msg.kind == "command" else handle_signal(uow, msg)


@dataclass(frozen=True)
class MessageStep:
    """One command or signal as a step; refused, its receipt records the reason; parked, a
    `ParkedMessage` keeps it with its error and where it came in."""

    message_id: UUID
    message: Message
    source: str | None = None  # where it came in, when its receipt is not stored yet (Kafka)
    position: str = ""  # its notification id, when its receipt is stored (the embedded log)

    def apply(self, uow: UnitOfWork) -> str:
        if self.source is not None:
            self._receive(uow)
        if faults.ACTIVE:
            faults.check("handler", {"id": self.message.ref, "data": self.message.data})
        return handle_message(uow, typed(self.message))

    def refuse(self, uow: UnitOfWork, error: DomainError) -> None:
        inbound = uow.get(self.message_id, InboundMessage) or self._receive(uow)
        inbound.reject(reason=str(error))

    def park(self, uow: UnitOfWork, fault: Fault) -> None:
        """Keeps the receipt (a redelivery is then a duplicate) and the message with its error."""
        if uow.get(self.message_id, InboundMessage) is None:
            self._receive(uow)
        parked_id = ids.parked_message_id(self.message_id)
        if uow.get(parked_id, ParkedMessage) is not None:
            return
        msg = self.message
        if self.source is not None:  # "<topic>:<partition>:<offset>", kept as a Kafka reject keeps it
            source, partition, offset = self.source.rsplit(":", 2)
            position = f"{partition}:{offset}"
        else:
            source, position = EMBEDDED_LOG, self.position
        uow.add(ParkedMessage.park(
            id=parked_id, now=msg.at, tenant=msg.tenant, kind=msg.kind, ref=msg.ref, type=msg.type, data=msg.data,
            at=format_time(msg.at), source=source, position=position, error_type=fault.error_type,
            error=fault.message, trace=fault.trace, attempts=fault.attempts,
        ))

    def _receive(self, uow: UnitOfWork) -> InboundMessage:
        msg = self.message
        return uow.add(
            InboundMessage.receive(
                id=self.message_id, at=msg.at, kind=msg.kind, ref=msg.ref, type=msg.type, tenant=msg.tenant,
                data=msg.data, source=self.source or "",
            )
        )


def typed(message: Message) -> Message:
    """The message with its typed command, built here (inside the step) when the log held only its
    data, so a command that cannot be built fails its own step rather than the batch."""
    if message.kind != "command" or message.command is not None:
        return message
    return replace(message, command=command_from_data(message.type, message.data))


def stored_message(received: InboundMessage.Received | ParkedMessage) -> Message:
    """The message as the log (or a parked message) keeps it; its typed command is built when applied."""
    at = received.timestamp if isinstance(received, InboundMessage.Received) else parse_time(received.at)
    return Message(kind=received.kind, ref=received.ref, type=received.type, tenant=received.tenant, at=at,
                   data=received.data)


MessageOutcome = Outcome[MessageStep]


def fresh_steps(uow: UnitOfWork, messages: list[tuple[Message, str]]) -> tuple[list[MessageStep], int]:
    """Steps for the messages whose (tenant, id) was never received, with how many were repeats.

    Used where the log is not the event store (Kafka): each step saves the receipt in the same
    transaction as the message's effects, so a redelivered message finds it and changes nothing.
    """
    steps: list[MessageStep] = []
    seen: set[UUID] = set()
    for msg, source in messages:
        message_id = ids.message_id(msg.tenant, msg.ref)
        if message_id in seen or uow.get(message_id, InboundMessage) is not None:
            continue
        seen.add(message_id)
        steps.append(MessageStep(message_id, msg, source))
    return steps, len(messages) - len(steps)


def prefetch_for(uow: UnitOfWork, messages: list[Message]) -> None:
    """Loads, a few queries per batch, what the batch's handlers are about to ask for one by one:
    receipts, the tasks commands name, and for signals their match-index entries, loops and tasks."""
    uow.prefetch(ids.message_id(m.tenant, m.ref) for m in messages)
    uow.prefetch(ids.task_id(m.tenant, str(m.data["task_id"])) for m in messages if m.data.get("task_id"))
    index_ids = []
    for message in messages:
        rule = CHANNEL_BY_SIGNAL.get(message.type) if message.kind == "signal" else None
        try:
            key = rule.signal_key(message.data) if rule else None
        except Exception:  # noqa: BLE001 - a poison signal fails (and is parked) in its own step, not here
            continue
        if rule and key is not None:
            index_ids.append(ids.watch_index_id(message.tenant, rule.channel, key))
    uow.prefetch(index_ids)
    # An email that answers no open loop may answer a closed acting task: its contact's index is read then.
    uow.prefetch(ids.contact_index_id(m.tenant, str(m.data["sender"])) for m in messages
                 if m.kind == "signal" and m.type == "email.received" and m.data.get("sender"))
    indexes = [index for index in map(uow.peek, index_ids) if isinstance(index, WatchIndex)]
    loop_ids = [ids.loop_id(index.tenant, ref) for index in indexes for ref in index.loop_refs]
    uow.prefetch(loop_ids)
    loops = [loop for loop in map(uow.peek, loop_ids) if isinstance(loop, OpenLoop)]
    uow.prefetch(ids.task_id(loop.tenant, loop.task_ref) for loop in loops)


class Router:
    """Follows the embedded log (InboundMessage events in the event store) in batches.

    Each batch is one transaction: every event it caused, each reject, and the router's position,
    moved by compare-and-set from the position the batch was read at. A crash before the commit
    leaves the position where it was, so the batch is simply redone; a process that committed the
    same batch first makes this commit fail, and the batch after it is read instead.
    """

    name = "router"

    def __init__(self, app: Loopline, batch_size: int = 500) -> None:
        self.app = app
        self.batch_size = batch_size

    def run_once(self) -> list[MessageOutcome]:
        one_by_one = False
        for _ in range(RETRIES):
            try:
                return self._apply_one_by_one() if one_by_one else self._apply_batch(self.batch_size)
            except IntegrityError:
                continue  # another process moved the position or wrote the same aggregates first
            except UnstorableBatch:
                one_by_one = True  # one message's events cannot be stored: find it, one transaction per message
        raise RuntimeError("the router kept conflicting with another process on this home; run it again")

    def _apply_one_by_one(self) -> list[MessageOutcome]:
        outcomes: list[MessageOutcome] = []
        for _ in range(self.batch_size):
            applied = self._apply_batch(1)
            if not applied:
                break
            outcomes += applied
        return outcomes

    def _apply_batch(self, limit: int) -> list[MessageOutcome]:
        previous = self.app.position(self.name)
        notifications = self.app.process_recorder.select_notifications(
            start=previous + 1, limit=limit, topics=[INBOUND_TOPIC]
        )
        if not notifications:
            return []
        uow = UnitOfWork(self.app)
        steps = []
        for notification in notifications:
            received = self.app.mapper.to_domain_event(notification)
            assert isinstance(received, InboundMessage.Received)
            steps.append(MessageStep(received.originator_id, stored_message(received),
                                     position=str(notification.id)))
        prefetch_for(uow, [step.message for step in steps])
        outcomes = apply_steps(uow, steps)
        position = Position(self.name, notifications[-1].id, previous=previous)
        return commit_batch(uow, position, outcomes, single=len(notifications) == 1)


class UnstorableBatch(Exception):
    """A batch of several messages could not be committed because of what one of them caused."""


def commit_batch(
    uow: UnitOfWork, tracking: Position, outcomes: list[MessageOutcome], *, single: bool
) -> list[MessageOutcome]:
    """Commits a batch with its position. A commit failing because of content (an event that cannot be
    encoded; not the storage, whose errors propagate) raises UnstorableBatch, unless the batch is a
    `single` message: that message is then parked in its place, with the position."""
    try:
        uow.commit(tracking)
        return outcomes
    except Exception as error:
        if isinstance(error, IntegrityError) or is_infrastructure(error):
            raise
        if not single or len(outcomes) != 1:
            raise UnstorableBatch(str(error)) from error
        step, fault = outcomes[0].step, Fault(error, attempts=1)
        parking = UnitOfWork(uow.app)
        step.park(parking, fault)
        parking.commit(tracking)
        return [Outcome(step, accepted=False, detail=fault.reason, parked=True)]
