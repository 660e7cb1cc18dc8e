"""A delivery channel that keeps failing is shown degraded (seed 002 §34), from the delivery ledger on SQLite; its
next delivery makes it healthy again by itself."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import create_engine

from loopline.adapters.delivery_state import SqlDeliveryLedger, create_tables
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
