"""`/commands/{id}`: what became of a command a dashboard form published, read from its receipt in the event store
(the `InboundMessage` keyed by tenant and id), so any serve process finds it: refused with the reason, parked, took
effect, or pending while no worker has processed it yet (at scale the receipt is saved with the command's effects)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from eventsourcing.application import AggregateNotFoundError
from fastapi import APIRouter, Depends, HTTPException, Request
from fastapi.responses import HTMLResponse

from loopline.domain import ids
from loopline.domain.parked import DROPPED, RETRIED
from loopline.processors.application import Loopline
from loopline.web.auth import NOT_FOUND, Principal, page_principal
from loopline.web.pages import render
from loopline.web.publishing import PENDING, REFUSED, TOOK_EFFECT

router = APIRouter(include_in_schema=False)

REMEMBERED = 20
"""Commands a session remembers having published: a pending one is known to exist before any receipt says so."""


@dataclass(frozen=True)
class Outcome:
    status: str
    type: str | None = None
    reason: str | None = None


def remember(request: Request, ref: str, tenant: str) -> None:
    """Keeps the command's id and tenant in the signed session, so its page answers `pending` (not 404) until
    processed, and names the tenant for an operator."""
    published = dict(request.session.get("commands") or {})
    published[ref] = tenant
    request.session["commands"] = dict(list(published.items())[-REMEMBERED:])


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
    return Outcome(REFUSED, receipt.type, f"it failed and waits for the operator ({parked.error_type}: "
                                          f"{parked.error}); `loopline parked retry` applies it again")


def _stored(app: Loopline, aggregate_id: Any) -> Any:
    try:
        return app.repository.get(aggregate_id)
    except AggregateNotFoundError:
        return None


@router.get("/commands/{ref}", response_class=HTMLResponse)
def command_page(request: Request, ref: str, tenant: str | None = None,
                 principal: Principal = Depends(page_principal)) -> HTMLResponse:
    """The command's result: another tenant's command, or one nobody published, is 404."""
    published = request.session.get("commands") or {}
    owner = published.get(ref) or principal.scope(tenant)
    if owner is None:
        raise HTTPException(404, NOT_FOUND)
    principal.check(owner)
    outcome = command_outcome(request.app.state.system.app, owner, ref)
    if outcome is None:
        if ref not in published:
            raise HTTPException(404, NOT_FOUND)
        outcome = Outcome(PENDING)
    return render(request, "command.html", principal, ref=ref, tenant=owner, outcome=outcome)
