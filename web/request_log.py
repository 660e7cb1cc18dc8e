"""One JSON line per HTTP request (through `runtime/worker_log.py`'s formatter once `loopline serve` configured it):
method, path, status, duration, and who asked — the key id and its tenant, or the tenant an operator acted for —
with the task id when the path names one. A pure ASGI middleware, so it sees every response, the errors' and the
static files' too."""

from __future__ import annotations

import logging
import re
import time
from typing import Any

from starlette.requests import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from loopline.web.auth import Principal

log = logging.getLogger("loopline.http")
TASK_PATHS = (re.compile(r"^/(?:v1/)?tasks/(.+)$"), re.compile(r"^/attention/tasks/[^/]+/(.+)$"))
"""A task's page and an owner's answer to a task; the rest of the (decoded) path is the id, a `/` in it too."""
WEBHOOK_PATH = re.compile(r"^/v1/webhooks/[^/]+/([^/]+)$")
"""A webhook carries no key: the tenant is the one its path names (and whose secret signed it)."""


class RequestLog:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started, status = time.perf_counter(), 500  # an exception escaping the app is answered 500 by the server

        async def sending(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, sending)
        finally:
            log.info("http.request", extra={"event": "http.request", "fields": _fields(scope, status, started)})


def acting_for(request: Request, tenant: str) -> None:
    """Names the tenant an operator's request acts for (its form's), which the operator's key does not."""
    request.state.acting_for = tenant


def _fields(scope: Scope, status: int, started: float) -> dict[str, Any]:
    path: str = scope["path"]
    state = scope.get("state", {})
    principal = state.get("principal")
    webhook = WEBHOOK_PATH.match(path)
    task = next((found for found in (pattern.match(path) for pattern in TASK_PATHS) if found), None)
    keyed = isinstance(principal, Principal)
    fields: dict[str, Any] = {
        "method": scope["method"], "path": path, "status": status,
        "duration_ms": round((time.perf_counter() - started) * 1000, 1),
        "key_id": principal.key_id if keyed else None,
        "tenant": (principal.tenant or state.get("acting_for")) if keyed else (webhook.group(1) if webhook else None),
    }
    if task:
        fields["task_id"] = task.group(1)
    return fields
