"""Routes inbound messages to command handlers or signal matching, exactly once per message."""

from __future__ import annotations

from dataclasses import dataclass
from uuid import UUID

from eventsourcing.persistence import Tracking
from eventsourcing.utils import get_topic

from loopline.domain import ids
from loopline.domain.errors import DomainError
from loopline.domain.inbound import InboundMessage
from loopline.domain.matching import CHANNEL_BY_SIGNAL
from loopline.domain.open_loop import OpenLoop
from loopline.domain.watch_index import WatchIndex
from loopline.processors.application import Loopline, UnitOfWork
from loopline.processors.commands import command_from_data, handle_command
from loopline.processors.messages import Message
from loopline.processors.signals import handle_signal

INBOUND_TOPIC = get_topic(InboundMessage.Received)


@dataclass(frozen=True)
class Outcome:
    message: Message
    accepted: bool
    detail: str


def handle_message(uow: UnitOfWork, msg: Message) -> Outcome:
    """Applies one message as one step of the unit of work; a domain error undoes the step and rejects it."""
    try:
        detail = handle_command(uow, msg) if msg.kind == "command" else handle_signal(uow, msg)
    except DomainError as error:
        uow.rollback_step()
        reason = str(error)
        return Outcome(msg, accepted=False, detail=reason)
    uow.end_step()
    return Outcome(msg, accepted=True, detail=detail)


def record_and_handle(uow: UnitOfWork, msg: Message, source: str) -> Outcome | None:
    """Records the message's receipt and applies it; None when this (tenant, id) was seen before.

    Used where the log is not the event store (Kafka): the receipt is saved in the same
    transaction as the message's effects, so a redelivered message finds it and changes nothing.
    """
    message_id = ids.message_id(msg.tenant, msg.ref)
    if uow.get(message_id, InboundMessage) is not None:
        return None
    uow.add(
        InboundMessage.receive(
            id=message_id, at=msg.at, kind=msg.kind, ref=msg.ref, type=msg.type, tenant=msg.tenant, data=msg.data,
            source=source,
        )
    )
    uow.end_step()
    return _handle_or_reject(uow, message_id, msg)


def _handle_or_reject(uow: UnitOfWork, message_id: UUID, msg: Message) -> Outcome:
    outcome = handle_message(uow, msg)
    if not outcome.accepted:
        inbound = uow.get(message_id, InboundMessage)
        assert inbound is not None
        inbound.reject(reason=outcome.detail)
        uow.end_step()
    return outcome


def prefetch_for(uow: UnitOfWork, messages: list[Message]) -> None:
    """Loads, a few queries per batch, what the batch's handlers are about to ask for one by one:
    receipts, the tasks commands name, and for signals their match-index entries, loops and tasks."""
    uow.prefetch(ids.message_id(m.tenant, m.ref) for m in messages)
    uow.prefetch(ids.task_id(m.tenant, str(m.data["task_id"])) for m in messages if m.data.get("task_id"))
    index_ids = []
    for message in messages:
        rule = CHANNEL_BY_SIGNAL.get(message.type) if message.kind == "signal" else None
        key = rule.signal_key(message.data) if rule else None
        if rule and key is not None:
            index_ids.append(ids.watch_index_id(message.tenant, rule.channel, key))
    uow.prefetch(index_ids)
    indexes = [index for index in map(uow.peek, index_ids) if isinstance(index, WatchIndex)]
    loop_ids = [ids.loop_id(index.tenant, ref) for index in indexes for ref in index.loop_refs]
    uow.prefetch(loop_ids)
    loops = [loop for loop in map(uow.peek, loop_ids) if isinstance(loop, OpenLoop)]
    uow.prefetch(ids.task_id(loop.tenant, loop.task_ref) for loop in loops)


class Router:
    """Follows the embedded log (InboundMessage events in the event store) in batches.

    Each batch is one transaction: every event it caused, each reject, and the router's position.
    A crash before the commit leaves the position where it was, so the batch is simply redone.
    """

    name = "router"

    def __init__(self, app: Loopline, batch_size: int = 500) -> None:
        self.app = app
        self.batch_size = batch_size

    def run_once(self) -> list[Outcome]:
        notifications = self.app.process_recorder.select_notifications(
            start=self.app.position(self.name) + 1, limit=self.batch_size, topics=[INBOUND_TOPIC]
        )
        if not notifications:
            return []
        uow = UnitOfWork(self.app)
        batch = []
        for notification in notifications:
            received = self.app.mapper.to_domain_event(notification)
            assert isinstance(received, InboundMessage.Received)
            batch.append((received.originator_id, Message(
                kind=received.kind, ref=received.ref, type=received.type, tenant=received.tenant,
                at=received.timestamp, data=received.data,
                command=command_from_data(received.type, received.data) if received.kind == "command" else None,
            )))
        prefetch_for(uow, [msg for _, msg in batch])
        outcomes = [_handle_or_reject(uow, message_id, msg) for message_id, msg in batch]
        uow.commit(Tracking(self.name, notifications[-1].id))
        return outcomes
