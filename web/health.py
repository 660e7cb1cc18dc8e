"""`/healthz` (the process answers) and `/readyz` (it can read and publish: both databases answer, and at scale a
Kafka broker accepts a connection). Anyone may ask,
so a failing check answers only `unavailable`; what failed goes to the operator's log as a JSON line."""

from __future__ import annotations

import logging
from collections.abc import Callable

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse
from sqlalchemy import text
from sqlalchemy.engine import Engine

from loopline.adapters.reachability import check_kafka

router = APIRouter(tags=["operations"])
PROBE_SECONDS = 2.0
"""The longest /readyz waits for a broker: a readiness probe must answer before its own timeout."""
log = logging.getLogger("loopline.http")


@router.get("/healthz")
def healthz() -> dict[str, str]:
    """The process is up and serving; says nothing of its dependencies (see /readyz)."""
    return {"status": "ok"}


@router.get("/readyz")
def readyz(request: Request) -> JSONResponse:
    """Ready while the event store and the read models answer a query and, at scale, Kafka takes a connection; 503
    naming the one that does not."""
    system = request.app.state.system
    probes: dict[str, Callable[[], None]] = {
        "event_store": lambda: _query(system.ledger_engine), "read_models": lambda: _query(system.projections.engine),
    }
    if system.settings.kafka:
        brokers = system.settings.kafka.split(",")  # tried one after another: the probe's time is shared out
        probes["kafka"] = lambda: check_kafka(system.settings.kafka,
                                              min(system.settings.connect_timeout, PROBE_SECONDS) / len(brokers))
    checks: dict[str, str] = {}
    for name, probe in probes.items():
        try:
            probe()
            checks[name] = "ok"
        except Exception as error:  # any failure to answer means not ready; why is the operator's to read
            checks[name] = "unavailable"
            log.warning("readyz.unavailable", extra={"event": "readyz.unavailable", "fields": {
                "check": name, "error": f"{type(error).__name__}: {error}"}})
    ready = all(value == "ok" for value in checks.values())
    return JSONResponse({"ready": ready, "checks": checks}, status_code=200 if ready else 503)


def _query(engine: Engine) -> None:
    with engine.connect() as conn:
        conn.execute(text("SELECT 1"))
