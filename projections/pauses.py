"""The `pauses` read model: who is paused (a tenant, or the whole system), why, by whom, since when and how much
work the pause holds, for `loopline status` and `loopline tenants show`."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Column, Integer, String, Table, select
from sqlalchemy.engine import Connection

from loopline.domain.pause import SystemSwitch
from loopline.domain.tenant import Tenant
from loopline.domain.timeutil import format_time
from loopline.projections import writes
from loopline.projections.runner import metadata

SYSTEM = ""
"""The row of the whole system's pause (`system.pause`); every other row is a tenant's."""

pauses = Table(
    "pauses", metadata,
    Column("tenant", String(200), primary_key=True),
    Column("paused_since", String(40)),
    Column("reason", String(400)),
    Column("paused_by", String(200)),
    Column("held", Integer, nullable=False),
    Column("resumed_at", String(40)),
)


def _whose(event: Any) -> str:
    return event.tenant if isinstance(event, (Tenant.Paused, Tenant.Resumed, Tenant.WorkHeld)) else SYSTEM


def _paused(conn: Connection, event: Any, position: int) -> None:
    whose, shown = _whose(event), {"paused_since": format_time(event.timestamp), "reason": event.reason,
                                   "paused_by": event.by, "held": 0}
    if writes.row(conn, pauses, whose) is None:
        writes.insert(conn, pauses, {"tenant": whose, "resumed_at": None, **shown})
    else:
        writes.update(conn, pauses, whose, set=shown)


def _held(conn: Connection, event: Any, position: int) -> None:
    writes.update(conn, pauses, _whose(event), add={"held": 1})


def _resumed(conn: Connection, event: Any, position: int) -> None:
    writes.update(conn, pauses, _whose(event), set={"paused_since": None, "held": 0,
                                                    "resumed_at": format_time(event.timestamp)})


name = "pauses"
cost = 0.1  # seconds to rebuild bench/rebuild.py's store alone: it pauses nothing
tables = (pauses,)
handlers = {
    Tenant.Paused: _paused, SystemSwitch.Paused: _paused,
    Tenant.WorkHeld: _held, SystemSwitch.WorkHeld: _held,
    Tenant.Resumed: _resumed, SystemSwitch.Resumed: _resumed,
}


def prefetch(conn: Connection, events: list[Any]) -> None:
    writes.preload(conn, pauses, list({_whose(event) for event in events if type(event) in handlers}))


def _shown(row: Any) -> dict[str, Any]:
    return {"paused": row.paused_since is not None, "since": row.paused_since, "reason": row.reason,
            "by": row.paused_by, "held": row.held, "resumed_at": row.resumed_at}


def current_pauses(conn: Connection) -> dict[str, Any]:
    """The system's pause (None when it runs) and every paused tenant's, for `loopline status`."""
    rows = {row.tenant: _shown(row) for row in conn.execute(select(pauses).where(pauses.c.paused_since.is_not(None)))}
    system = rows.pop(SYSTEM, None)
    return {"system": system, "tenants": [{"tenant": tenant, **shown} for tenant, shown in sorted(rows.items())]}


def tenant_pause(conn: Connection, tenant: str) -> dict[str, Any]:
    """Whether the tenant is paused, by its own pause or the system's, for `loopline tenants show`."""
    rows = conn.execute(select(pauses).where(pauses.c.tenant.in_([tenant, SYSTEM])))
    found = {row.tenant: _shown(row) for row in rows}
    never = {"paused": False, "since": None, "reason": None, "by": None, "held": 0, "resumed_at": None}
    system = found.get(SYSTEM)
    return {**found.get(tenant, never), "system": system if system and system["paused"] else None}
