"""`/loops`: what Loopline waits for, soonest deadline first, with the loops whose deadline passed unanswered
highlighted — the rows `loopline loops list` prints, scoped to the key's tenant."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from fastapi import APIRouter, Depends, Request
from fastapi.responses import HTMLResponse

from loopline.adapters.clock import SystemClock
from loopline.domain.timeutil import parse_time
from loopline.projections.open_loops import list_loops
from loopline.projections.scorecard_numbers import scorecard_tenants
from loopline.web.auth import Principal, page_principal
from loopline.web.pages import render

router = APIRouter(include_in_schema=False)


def expired(loop: dict[str, Any], now: datetime) -> bool:
    """Its deadline passed unanswered: resolved as expired by a tick, or still open past it (the next tick acts)."""
    return loop["resolved_by"] == "expired" or (not loop["resolved"] and parse_time(loop["deadline"]) <= now)


def by_deadline(loops: list[dict[str, Any]], now: datetime) -> list[dict[str, Any]]:
    return sorted(({**loop, "expired": expired(loop, now)} for loop in loops),
                  key=lambda loop: (parse_time(loop["deadline"]), loop["tenant"], loop["loop_id"]))


@router.get("/loops", response_class=HTMLResponse)
def loops_page(request: Request, tenant: str | None = None,
               principal: Principal = Depends(page_principal)) -> HTMLResponse:
    with request.app.state.system.projections.engine.connect() as conn:
        found = list_loops(conn, tenant=principal.scope(tenant))
        tenants = scorecard_tenants(conn) if principal.operator else []
    now = SystemClock().now()
    shown = by_deadline([loop for loop in found if not loop["resolved"] or loop["resolved_by"] == "expired"], now)
    return render(request, "loops.html", principal, loops=shown, tenant=tenant or "", tenants=tenants)
