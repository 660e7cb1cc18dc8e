"""`/healthz` (the process answers) and `/readyz` (it can read and publish: both databases answer)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse
from sqlalchemy import text

router = APIRouter(tags=["operations"])


@router.get("/healthz")
def healthz() -> dict[str, str]:
    """The process is up and serving; says nothing of its dependencies (see /readyz)."""
    return {"status": "ok"}


@router.get("/readyz")
def readyz(request: Request) -> JSONResponse:
    """Ready while the event store and the read models answer a query; 503 naming the one that does not."""
    system = request.app.state.system
    checks: dict[str, Any] = {}
    for name, engine in (("event_store", system.ledger_engine), ("read_models", system.projections.engine)):
        try:
            with engine.connect() as conn:
                conn.execute(text("SELECT 1"))
            checks[name] = "ok"
        except Exception as error:  # any failure to answer means not ready; the reason is reported
            checks[name] = f"{type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}"
    ready = all(value == "ok" for value in checks.values())
    return JSONResponse({"ready": ready, "checks": checks}, status_code=200 if ready else 503)
