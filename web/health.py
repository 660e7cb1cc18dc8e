"""`/healthz` (the process answers) and `/readyz` (it can read and publish: both databases answer). Anyone may ask,
so a failing check answers only `unavailable`; what failed goes to the operator's log as a JSON line."""

from __future__ import annotations

import logging

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse
from sqlalchemy import text

router = APIRouter(tags=["operations"])
log = logging.getLogger("loopline.http")


@router.get("/healthz")
def healthz() -> dict[str, str]:
    """The process is up and serving; says nothing of its dependencies (see /readyz)."""
    return {"status": "ok"}


@router.get("/readyz")
def readyz(request: Request) -> JSONResponse:
    """Ready while the event store and the read models answer a query; 503 naming the one that does not."""
    system = request.app.state.system
    checks: dict[str, str] = {}
    for name, engine in (("event_store", system.ledger_engine), ("read_models", system.projections.engine)):
        try:
            with engine.connect() as conn:
                conn.execute(text("SELECT 1"))
            checks[name] = "ok"
        except Exception as error:  # any failure to answer means not ready; why is the operator's to read
            checks[name] = "unavailable"
            log.warning("readyz.unavailable", extra={"event": "readyz.unavailable", "fields": {
                "check": name, "error": f"{type(error).__name__}: {error}"}})
    ready = all(value == "ok" for value in checks.values())
    return JSONResponse({"ready": ready, "checks": checks}, status_code=200 if ready else 503)
