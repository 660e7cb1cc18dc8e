"""Rendering a dashboard page: Jinja2 templates from `web/templates/`, each given who is looking, the CSRF token its
forms carry and the navigation."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fastapi import Request
from fastapi.responses import HTMLResponse
from fastapi.templating import Jinja2Templates

from loopline.web.auth import Principal, csrf_token

TEMPLATES = Jinja2Templates(directory=str(Path(__file__).parent / "templates"))
NAV = [("/", "Needs attention"), ("/scorecard", "Scorecard"), ("/tasks", "Tasks"), ("/loops", "Loops")]
OPERATOR_NAV = [("/system", "System")]


def render(request: Request, template: str, principal: Principal | None, status_code: int = 200,
           **context: Any) -> HTMLResponse:
    nav = NAV + (OPERATOR_NAV if principal and principal.operator else []) if principal else []
    return TEMPLATES.TemplateResponse(request, template, {
        "principal": principal, "csrf": csrf_token(request), "nav": nav, "path": request.url.path, **context,
    }, status_code=status_code)
