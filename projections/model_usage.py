"""The `model_usage` read model: per tenant and tenant-local day, the model calls asked for and held back, and the
tokens the decisions spent (of them, read from the prompt cache), for `loopline limits` and `status` beside the limit.

The limit itself is enforced on the write side (`domain/model_checks.py`, on the `TenantModelCalls` ledger); this
view only shows what was spent, from the task's decision events (each names the tenant-local day it counts on), so
lagging behind the log is harmless here.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import Column, Integer, String, Table, func, select
from sqlalchemy.engine import Connection

from loopline.domain.task import Task
from loopline.projections import writes
from loopline.projections.runner import metadata

model_usage = Table(
    "model_usage", metadata,
    Column("key", String(220), primary_key=True),
    Column("tenant", String(200), nullable=False, index=True),
    Column("day", String(10), nullable=False),
    Column("calls", Integer, nullable=False),
    Column("held", Integer, nullable=False),
    Column("decisions", Integer, nullable=False),
    Column("input_tokens", Integer, nullable=False),
    Column("output_tokens", Integer, nullable=False),
    Column("cache_read_tokens", Integer, nullable=False),
    Column("cache_write_tokens", Integer, nullable=False),
)
COUNTS = ("calls", "held", "decisions", "input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens")


def _add(conn: Connection, tenant: str, day: str, **counts: int) -> None:
    key = f"{tenant} {day}"  # one column: the batched writes address a row by a single-column key
    if writes.row(conn, model_usage, key) is None:
        writes.insert(conn, model_usage, {"key": key, "tenant": tenant, "day": day, **dict.fromkeys(COUNTS, 0), **counts})
        return
    writes.update(conn, model_usage, key, add=counts)


def _requested(conn: Connection, event: Task.DecisionRequested, position: int) -> None:
    if event.day is not None:  # asked before model calls were counted by day
        _add(conn, event.tenant, event.day, calls=1)


def _held(conn: Connection, event: Task.DecisionHeld, position: int) -> None:
    _add(conn, event.tenant, event.day, held=1)


def _recorded(conn: Connection, event: Task.DecisionRecorded, position: int) -> None:
    if event.day is None:  # decided before the day was recorded with it: no day to count it on
        return
    _add(conn, event.tenant, event.day, decisions=1, input_tokens=event.input_tokens,
         output_tokens=event.output_tokens, cache_read_tokens=event.cache_read_tokens,
         cache_write_tokens=event.cache_write_tokens)


name = "model_usage"
cost = 0.3  # a guess, not measured with bench/rebuild.py: about proactive_runs' share of the events
tables = (model_usage,)
handlers = {Task.DecisionRequested: _requested, Task.DecisionHeld: _held, Task.DecisionRecorded: _recorded}


def usage_on(conn: Connection, tenant: str, day: str) -> dict[str, int]:
    """What the tenant spent on the local `day` (ISO date): every count 0 when nothing was asked."""
    row = conn.execute(select(model_usage).where(model_usage.c.tenant == tenant, model_usage.c.day == day)).first()
    return {count: row._mapping[count] if row else 0 for count in COUNTS}


def usage_by_day(conn: Connection, tenant: str) -> list[dict[str, Any]]:
    """The tenant's days, latest first, each with its counts."""
    rows = conn.execute(select(model_usage).where(model_usage.c.tenant == tenant).order_by(model_usage.c.day.desc()))
    return [{column: value for column, value in row._mapping.items() if column != "key"} for row in rows]


def totals_by_tenant(conn: Connection) -> dict[str, dict[str, int]]:
    """Tenant -> every count summed over its days (`/metrics`)."""
    query = select(model_usage.c.tenant, *(func.sum(model_usage.c[count]) for count in COUNTS)).group_by(model_usage.c.tenant)
    return {row[0]: {count: int(total or 0) for count, total in zip(COUNTS, row[1:])} for row in conn.execute(query)}
