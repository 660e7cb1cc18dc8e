"""The operator's System page: how far processing lags, what is parked or refused and why, what the limits held
back, what is degraded and paused, and the buttons that pause and resume a tenant or everything — publishing the
same `tenant.pause`/`system.pause` commands as the CLI."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends, HTTPException, Request
from fastapi.responses import HTMLResponse, RedirectResponse

from loopline.adapters.clock import SystemClock
from loopline.projections.timeline import recent_rejections
from loopline.runtime.parked import everything_parked
from loopline.runtime.status import system_status
from loopline.web.auth import NOT_FOUND, Principal, csrf_checked, operator_page
from loopline.web.pages import render

router = APIRouter(include_in_schema=False)
OPERATOR = "operator"
"""The envelope's tenant of `system.pause`/`system.resume` (only who asked: the switch holds every tenant)."""
RESULT = "system_result"
"""The session's slot for the last button's result, shown once on the next /system."""
BUTTONS = {
    "pause-tenant": ("tenant.pause", True), "resume-tenant": ("tenant.resume", True),
    "pause": ("system.pause", False), "resume": ("system.resume", False),
}
"""The button's path -> the command it publishes, and whether it names a tenant."""


@router.get("/system", response_class=HTMLResponse)
def system_page(request: Request, principal: Principal = Depends(operator_page)) -> HTMLResponse:
    system = request.app.state.system
    status = system_status(system, SystemClock().now())
    parked = everything_parked(system)
    with system.projections.engine.connect() as conn:
        rejections = recent_rejections(conn)
    return render(request, "system.html", principal, status=status, parked=parked, rejections=rejections,
                  result=request.session.pop(RESULT, None))


@router.post("/system/{button}")
def press(request: Request, button: str, principal: Principal = Depends(operator_page),
          form: dict[str, Any] = Depends(csrf_checked)) -> RedirectResponse:
    """Publishes the button's command as the operator's key (its id is `by` in the trail); back to /system with
    the result."""
    if button not in BUTTONS:
        raise HTTPException(404, NOT_FOUND)
    command_type, names_tenant = BUTTONS[button]
    tenant = str(form.get("tenant") or "").strip() if names_tenant else OPERATOR
    data = {"reason": str(form.get("reason") or "").strip(), "by": f"operator key {principal.key_id}"}
    result = request.app.state.publisher.command(tenant, command_type, data, source="dashboard")
    request.session[RESULT] = {"id": result.id, "type": result.type, "tenant": tenant if names_tenant else None,
                               "status": result.status, "reason": result.reason}
    return RedirectResponse("/system", status_code=303)
