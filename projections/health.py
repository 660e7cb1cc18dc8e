"""The `upstream_health` read model: each tenant's upstreams that failed lately (`domain/upstream_health.py`), for
`loopline status`: degraded since when, failures in a row, the last error, and when it recovered."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Column, Integer, String, Table, Text, select
from sqlalchemy.engine import Connection

from loopline.domain.timeutil import format_time
from loopline.domain.upstream_health import UpstreamHealth
from loopline.projections import writes
from loopline.projections.runner import metadata

upstream_health = Table(
    "upstream_health", metadata,
    Column("key", String(300), primary_key=True),
    Column("tenant", String(200), nullable=False),
    Column("upstream", String(40), nullable=False),
    Column("failures", Integer, nullable=False),
    Column("degraded_since", String(40)),
    Column("last_error", Text),
    Column("recovered_at", String(40)),
)


def _key(event: Any) -> str:
    return f"{event.upstream}:{event.tenant}"


def _failed(conn: Connection, event: UpstreamHealth.Failed, position: int) -> None:
    key, stored = _key(event), writes.row(conn, upstream_health, _key(event))
    degraded = stored["degraded_since"] if stored else None
    if degraded is None and event.degraded:
        degraded = format_time(event.timestamp)
    shown = {"failures": event.failures, "last_error": event.error, "degraded_since": degraded}
    if stored is None:
        writes.insert(conn, upstream_health, {"key": key, "tenant": event.tenant, "upstream": event.upstream,
                                              "recovered_at": None, **shown})
    else:
        writes.update(conn, upstream_health, key, set=shown)


def _recovered(conn: Connection, event: UpstreamHealth.Recovered, position: int) -> None:
    writes.update(conn, upstream_health, _key(event), set={"failures": 0, "degraded_since": None,
                                                           "recovered_at": format_time(event.timestamp)})


name = "upstream_health"
cost = 0.1  # seconds to rebuild bench/rebuild.py's store alone: its model never fails
tables = (upstream_health,)
handlers = {UpstreamHealth.Failed: _failed, UpstreamHealth.Recovered: _recovered}


def prefetch(conn: Connection, events: list[Any]) -> None:
    writes.preload(conn, upstream_health, list({_key(event) for event in events if type(event) in handlers}))


def failing(conn: Connection) -> list[dict[str, Any]]:
    """Every tenant's upstream that failed since it last answered, degraded ones first."""
    rows = conn.execute(select(upstream_health).where(upstream_health.c.failures > 0))
    shown = [{"tenant": row.tenant, "upstream": row.upstream, "degraded": row.degraded_since is not None,
              "degraded_since": row.degraded_since, "failures": row.failures, "last_error": row.last_error}
             for row in rows]
    return sorted(shown, key=lambda row: (not row["degraded"], row["tenant"], row["upstream"]))
