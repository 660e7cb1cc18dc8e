"""Rendering a dashboard page: Jinja2 templates from `web/templates/`, each given who is looking, the CSRF token its
forms carry and the navigation."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote

from fastapi import Request
from fastapi.responses import HTMLResponse
from fastapi.templating import Jinja2Templates
from markupsafe import Markup

from loopline.domain.timeutil import format_time, parse_time
from loopline.domain.wording import when
from loopline.web.auth import Principal, csrf_token

TEMPLATES = Jinja2Templates(directory=str(Path(__file__).parent / "templates"))
TEMPLATES.env.filters["quote"] = lambda value: quote(str(value), safe="")
"""Every id or value a template puts in a URL: a `/` or `?` in a tenant's id stays inside its one path segment or
query value (Jinja's `urlencode` keeps `/`, so an id `../../system/pause` would climb out of its form's path)."""


def time_element(value: str | datetime | None) -> Markup | str:
    """A time worded as the CLI words it ("27 Nov 2026 03:32 UTC"), its exact value kept in `<time datetime>`."""
    if value is None or value == "":
        return ""
    moment = parse_time(value)
    return Markup('<time datetime="{}">{}</time>').format(format_time(moment), when(moment))


TEMPLATES.env.filters["when"] = time_element

NAV = [("/", "Needs attention"), ("/scorecard", "Scorecard"), ("/tasks", "Tasks"), ("/loops", "Loops")]
OPERATOR_NAV = [("/system", "System")]


def render(request: Request, template: str, principal: Principal | None, status_code: int = 200,
           **context: Any) -> HTMLResponse:
    nav = NAV + (OPERATOR_NAV if principal.operator else []) if principal else []
    return TEMPLATES.TemplateResponse(request, template, {
        "principal": principal, "csrf": csrf_token(request), "nav": nav, "path": request.url.path, **context,
    }, status_code=status_code)
