"""The deployment's state as `loopline status --json` gives it, for the CLI and the dashboard's System page alike:
workers and the leader, how far processing lags (inputs, Kafka partitions at scale, read models), what is paused or
degraded, what is parked and what the limits held back."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from loopline.adapters.heartbeats import Heartbeats
from loopline.adapters.leader import PostgresLeader
from loopline.domain.timeutil import format_time
from loopline.projections.health import failing
from loopline.projections.limits import held_counts
from loopline.projections.pauses import current_pauses
from loopline.runtime.parked import parked_counts
from loopline.runtime.system import System


def system_status(system: System, now: datetime) -> dict[str, Any]:
    """Everything `loopline status` reports, read once (times as RFC 3339 text)."""
    workers = Heartbeats(system.ledger_engine).workers(now)
    leader = system.leader.holder() if isinstance(system.leader, PostgresLeader) else None
    read_models = [{"name": s.name, "position": s.position, "head": s.head, "lag": s.lag}
                   for s in system.projections.status()]
    inputs = system.input_lag()
    processed = system.messages_processed()
    parked = system.delivery.ledger.parked()
    quarantined = parked_counts(system)
    # A channel this process does not deliver on (the `routing` of an unroutable event) is no upstream.
    channels = [row for row in system.delivery.ledger.failing_channels() if row["channel"] in system.delivery.channels]
    with system.projections.engine.connect() as conn:
        paused, model, held = current_pauses(conn), failing(conn), held_counts(conn)
    for worker in workers:
        worker.update(leads=worker["worker"] == leader, started_at=format_time(worker["started_at"]),
                      last_seen=format_time(worker["last_seen"]))
    return {
        "deployment": "scale" if system.is_scale else "embedded", "leader": leader, "workers": workers,
        "inputs": inputs, "messages_processed": processed, "read_models": read_models,
        "parked_deliveries": {"count": len(parked), "deliveries": parked}, "parked": quarantined, "pauses": paused,
        "degraded": {"model": model, "channels": channels}, "limits_held": held,
    }
