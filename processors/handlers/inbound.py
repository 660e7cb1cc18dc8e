"""What a command or signal means on the bus: applied by its handler, refused with its receipt marked
rejected, parked as a `ParkedMessage` with its error and where it came in; and an operator's retry of
a parked one."""

from __future__ import annotations

from dataclasses import replace
from uuid import UUID

from loopline.domain import ids
from loopline.domain.contact_index import ContactIndex
from loopline.domain.errors import DomainError
from loopline.domain.inbound import InboundMessage
from loopline.domain.channels import CHANNEL_BY_SIGNAL
from loopline.domain.open_loop import OpenLoop
from loopline.domain.parked import ParkedMessage
from loopline.domain.timeutil import format_time, parse_time
from loopline.domain.watch_index import WatchIndex
from loopline.processors.application import UnitOfWork
from loopline.processors.bus import Fault, Handler, Outcome
from loopline.processors.handlers.command_routes import command_from_data, handle_command
from loopline.processors.messages import Inbound, Message, Retry
from loopline.processors.handlers.signals import handle_signal

EMAIL = CHANNEL_BY_SIGNAL["email.received"]
"""The channel a contact's replies come in on; an acting task's creation reads the emails kept under its contact."""
EMBEDDED_LOG = "embedded log"
MessageOutcome = Outcome[Inbound]


class Repeated(str):
    """The detail of a message whose (tenant, id) was received before: it changes nothing."""


def handle_message(uow: UnitOfWork, msg: Message) -> str:
    """The single dispatch point for commands and signals; a DomainError refuses the message."""
    return handle_command(uow, msg) if msg.kind == "command" else handle_signal(uow, msg)


def apply(uow: UnitOfWork, inbound: Inbound) -> str:
    """Where the log is not the event store (Kafka), the receipt is saved in the same step as the
    message's effects, so a redelivered message finds it and changes nothing."""
    if inbound.source is not None:
        if uow.get(inbound.message_id, InboundMessage) is not None:
            return Repeated("received before")
        _receive(uow, inbound)
    return handle_message(uow, typed(inbound.message))


def refuse(uow: UnitOfWork, inbound: Inbound, error: DomainError) -> None:
    receipt = uow.get(inbound.message_id, InboundMessage) or _receive(uow, inbound)
    receipt.reject(reason=str(error))


def park(uow: UnitOfWork, inbound: Inbound, fault: Fault) -> None:
    """Keeps the receipt (a redelivery is then a duplicate) and the message with its error."""
    if uow.get(inbound.message_id, InboundMessage) is None:
        _receive(uow, inbound)
    parked_id = ids.parked_message_id(inbound.message_id)
    if uow.get(parked_id, ParkedMessage) is not None:
        return
    msg = inbound.message
    if inbound.source is not None:  # "<topic>:<partition>:<offset>", kept as a Kafka reject keeps it
        source, partition, offset = inbound.source.rsplit(":", 2)
        position = f"{partition}:{offset}"
    else:
        source, position = EMBEDDED_LOG, inbound.position
    uow.add(ParkedMessage.park(
        id=parked_id, now=msg.at, tenant=msg.tenant, kind=msg.kind, ref=msg.ref, type=msg.type, data=msg.data,
        at=format_time(msg.at), source=source, position=position, error_type=fault.error_type,
        error=fault.message, trace=fault.trace, attempts=fault.attempts,
    ))


def _receive(uow: UnitOfWork, inbound: Inbound) -> InboundMessage:
    msg = inbound.message
    return uow.add(
        InboundMessage.receive(
            id=inbound.message_id, at=msg.at, kind=msg.kind, ref=msg.ref, type=msg.type, tenant=msg.tenant,
            data=msg.data, source=inbound.source or "",
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


def prefetch(uow: UnitOfWork, inbound: list[Inbound]) -> None:
    """Loads, a few queries per batch, what the batch's handlers are about to ask for one by one:
    receipts, the tasks commands name, and for signals their match-index entries, loops and tasks."""
    messages = [item.message for item in inbound]
    uow.prefetch(ids.message_id(m.tenant, m.ref) for m in messages)
    uow.prefetch(ids.task_id(m.tenant, str(m.data["task_id"])) for m in messages if m.data.get("task_id"))
    index_ids, contact_ids = [], []
    for message in messages:
        if message.kind == "command" and message.type == "task.create" and message.data.get("contact"):
            # An acting task's creation reads its contact's index and the emails kept under the contact.
            contact = str(message.data["contact"])
            contact_ids.append(ids.contact_index_id(message.tenant, contact))
            index_ids.append(ids.watch_index_id(message.tenant, "email", EMAIL.signal_key({"sender": contact}) or ()))
        rule = CHANNEL_BY_SIGNAL.get(message.type) if message.kind == "signal" else None
        try:
            key = rule.signal_key(message.data) if rule else None
        except Exception:  # noqa: BLE001 - a poison signal fails (and is parked) in its own step, not here
            continue
        if rule and key is not None:
            index_ids.append(ids.watch_index_id(message.tenant, rule.channel, key))
    # A signal asks its tenant's routine index whether an event routine waits for it (`handlers/routines.py`).
    index_ids += [ids.routine_index_id(m.tenant) for m in messages if m.kind == "signal"]
    uow.prefetch(index_ids)
    # An email reaches one of its contact's acting tasks: the contact's index and those tasks are read.
    contact_ids += [ids.contact_index_id(m.tenant, str(m.data["sender"])) for m in messages
                    if m.kind == "signal" and m.type == "email.received" and m.data.get("sender")]
    # An outcome signal is kept for its contact and reaches their tasks (`handlers/outcome_signals.py`).
    observed = [m for m in messages if m.kind == "signal" and m.type == "outcome.observed" and m.data.get("contact")]
    contact_ids += [ids.contact_index_id(m.tenant, str(m.data["contact"])) for m in observed]
    uow.prefetch([*contact_ids, *(ids.contact_outcomes_id(m.tenant, str(m.data["contact"])) for m in observed)])
    contacts = [index for index in map(uow.peek, contact_ids) if isinstance(index, ContactIndex)]
    uow.prefetch(ids.task_id(index.tenant, ref) for index in contacts for ref in index.tasks.values())
    indexes = [index for index in map(uow.peek, index_ids) if isinstance(index, WatchIndex)]
    loop_ids = [ids.loop_id(index.tenant, ref) for index in indexes for ref in index.loop_refs]
    uow.prefetch(loop_ids)
    loops = [loop for loop in map(uow.peek, loop_ids) if isinstance(loop, OpenLoop)]
    uow.prefetch(ids.task_id(loop.tenant, loop.task_ref) for loop in loops)


INBOUND: Handler[Inbound] = Handler(apply=apply, refuse=refuse, park=park, prefetch=prefetch)


def _apply_retry(uow: UnitOfWork, retry: Retry) -> str:
    """An operator's retry of a parked message: applied, or refused, with the mark that it was retried;
    failing again, it stays parked with the new error."""
    outcome = apply(uow, retry.inbound)
    _parked(uow, retry.parked_id).retried(outcome=outcome, by=retry.by, now=retry.now)
    return outcome


def _refuse_retry(uow: UnitOfWork, retry: Retry, error: DomainError) -> None:
    refuse(uow, retry.inbound, error)
    _parked(uow, retry.parked_id).retried(outcome=f"refused by the domain: {error}", by=retry.by, now=retry.now)


def _park_retry(uow: UnitOfWork, retry: Retry, fault: Fault) -> None:
    _parked(uow, retry.parked_id).retry_failed(
        error_type=fault.error_type, error=fault.message, trace=fault.trace, by=retry.by, now=retry.now
    )


RETRY: Handler[Retry] = Handler(apply=_apply_retry, refuse=_refuse_retry, park=_park_retry)


def _parked(uow: UnitOfWork, parked_id: UUID) -> ParkedMessage:
    parked = uow.get(parked_id, ParkedMessage)
    assert parked is not None, f"no parked message {parked_id}"
    return parked
