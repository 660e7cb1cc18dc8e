"""An upstream that keeps failing is shown degraded (seed 002 §34) until it answers again: a delivery channel, from
the delivery ledger on SQLite, and a tenant's model, from its health's events in the read model."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from sqlalchemy import create_engine

from loopline.adapters.delivery_state import SqlDeliveryLedger, create_tables
from loopline.domain import ids
from loopline.domain.timeutil import parse_time
from loopline.domain.upstream_health import UpstreamHealth
from loopline.processors.application import UnitOfWork
from loopline.projections.health import failing
from loopline.runtime.system import System
from tests.conftest import build_system

T0 = parse_time("2026-03-02T09:00:00Z")
from loopline.domain.safety_limits import UPSTREAM_FAILURES


def test_a_channel_failing_again_and_again_is_degraded_until_it_delivers(tmp_path: Path) -> None:
    engine = create_engine(f"sqlite:///{tmp_path / 'ledger.db'}")
    create_tables(engine)
    ledger = SqlDeliveryLedger(engine)
    messages = [(f"k{n}", "smtp", {"tenant": "gym", "to": f"m{n}@example.com"}) for n in range(UPSTREAM_FAILURES)]
    for now, attempt in enumerate(ledger.claim(messages[:-1], now=1.0), start=2):
        ledger.failed(attempt, error="421 try again later", retry_at=100.0, now=float(now))
    [failing] = ledger.failing_channels()
    assert (failing["channel"], failing["degraded"], failing["failed_attempts"]) == ("smtp", False, UPSTREAM_FAILURES - 1)

    [last] = ledger.claim(messages[-1:], now=20.0)
    ledger.failed(last, error="421 try again later", retry_at=100.0, now=21.0)
    [degraded] = ledger.failing_channels()
    assert degraded["degraded"] and degraded["tenants"] == ["gym"] and degraded["last_error"] == "421 try again later"

    ledger.delivered(ledger.due(now=100.0, limit=1), now=101.0)
    assert ledger.failing_channels() == []


def test_the_model_failing_for_a_tenant_is_shown_degraded_until_it_answers(home: Path) -> None:
    system = build_system(home)
    try:
        health = UpstreamHealth.open(id=ids.upstream_health_id("gym", "model"), tenant="gym", upstream="model", now=T0)
        for n in range(UPSTREAM_FAILURES):
            health.failed("the model is unavailable: 529 overloaded", T0 + n * timedelta(minutes=5))
        save(system, health)
        with system.projections.engine.connect() as conn:
            assert failing(conn) == [{"tenant": "gym", "upstream": "model", "degraded": True,
                                      "degraded_since": "2026-03-02T09:20:00Z", "failures": UPSTREAM_FAILURES,
                                      "last_error": "the model is unavailable: 529 overloaded"}]

        health.succeeded(T0 + timedelta(hours=1))
        save(system, health)
        with system.projections.engine.connect() as conn:
            assert failing(conn) == []
    finally:
        system.close()


def save(system: System, health: UpstreamHealth) -> None:
    uow = UnitOfWork(system.app)
    uow.add(health)
    uow.commit()
    system.drain()
