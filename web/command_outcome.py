"""What became of one command, read from its receipt in the event store (the `InboundMessage` keyed by tenant and
id): the one rule the forms' publisher and the result page (`/commands/{id}`) both tell the owner by."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from eventsourcing.application import AggregateNotFoundError

from loopline.domain import ids
from loopline.domain.parked import DROPPED, RETRIED
from loopline.processors.application import Loopline

PENDING, TOOK_EFFECT, REFUSED, SET_ASIDE = "pending", "took effect", "refused", "set aside"
"""`set aside`: its handler failed and it is parked for the operator (the word `POST /v1/messages` reports too)."""


@dataclass(frozen=True)
class Outcome:
    status: str
    type: str | None = None
    reason: str | None = None


def command_outcome(app: Loopline, tenant: str, ref: str) -> Outcome | None:
    """The command's outcome by its receipt; None while there is none (not processed yet, or no such command)."""
    receipt = _stored(app, ids.message_id(tenant, ref))
    if receipt is None or receipt.kind != "command":
        return None
    if receipt.rejection:
        return Outcome(REFUSED, receipt.type, receipt.rejection)
    parked = _stored(app, ids.parked_message_id(receipt.id))
    if parked is None or parked.status == RETRIED:
        return Outcome(TOOK_EFFECT, receipt.type)
    if parked.status == DROPPED:
        return Outcome(REFUSED, receipt.type, f"it failed ({parked.error}) and {parked.closed_by} dropped it")
    return Outcome(SET_ASIDE, receipt.type, f"it failed and waits for the operator ({parked.error_type}: "
                                            f"{parked.error}); `loopline parked retry` applies it again")


def _stored(app: Loopline, aggregate_id: Any) -> Any:
    try:
        return app.repository.get(aggregate_id)
    except AggregateNotFoundError:
        return None
