"""`/commands/{id}`: what became of a command a dashboard form published, read from its receipt in the event store
(`web/command_outcome.py`), so any serve process finds it: refused with the reason, set aside with its error, took
effect, or pending while no worker has processed it yet (at scale the receipt is saved with the command's effects)."""

from __future__ import annotations

from fastapi import APIRouter, Depends, HTTPException, Request
from fastapi.responses import HTMLResponse

from loopline.web.auth import NOT_FOUND, Principal, page_principal
from loopline.web.command_outcome import PENDING, Outcome, command_outcome
from loopline.web.pages import render

router = APIRouter(include_in_schema=False)

REMEMBERED = 20
"""Commands a session remembers having published: a pending one is known to exist before any receipt says so."""


def remember(request: Request, ref: str, tenant: str) -> None:
    """Keeps the command's id and tenant in the signed session, so its page answers `pending` (not 404) until
    processed, and names the tenant for an operator."""
    published = dict(request.session.get("commands") or {})
    published[ref] = tenant
    request.session["commands"] = dict(list(published.items())[-REMEMBERED:])


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
