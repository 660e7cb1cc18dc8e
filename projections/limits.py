"""The `limits` read model: what each limit of `domain/safety_limits.py` held back, and its use on the latest day.

`limit_holds` counts, per tenant and rule, the events a limit caused (a deferred send, a held task creation, an
escalation at a budget, an expiry) with the last one's reason; `limit_use` keeps each daily limit's count on the
tenant's latest day. A rail added elsewhere adds its events to `HELD_BY` or `COUNTED_BY`. The daily model-call
limit's row carries that day's tokens (`projections/model_usage.py`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sqlalchemy import Column, Integer, String, Table, Text, func, select
from sqlalchemy.engine import Connection

from loopline.domain.parked import ParkedMessage
from loopline.domain.safety_limits import LIMITS, tenant_value
from loopline.domain.send_ledger import ContactSends, TenantSends
from loopline.domain.suppression import REASONS
from loopline.domain.status import TERMINAL
from loopline.domain.task import Task
from loopline.domain.task_ledger import TenantTasks
from loopline.domain.tenant import Tenant
from loopline.domain.timeutil import format_time
from loopline.projections import writes
from loopline.projections.model_usage import usage_on
from loopline.projections.runner import metadata
from loopline.projections.tasks import tasks as task_rows

limit_holds = Table(
    "limit_holds", metadata,
    Column("key", String(300), primary_key=True),  # "<tenant> <rule>": an id holds no space
    Column("tenant", String(200), nullable=False, index=True),
    Column("rule", String(64), nullable=False),
    Column("held", Integer, nullable=False),
    Column("last_at", String(40), nullable=False),
    Column("last_task_id", String(200)),
    Column("last_reason", Text, nullable=False),
)

limit_use = Table(
    "limit_use", metadata,
    Column("key", String(300), primary_key=True),
    Column("tenant", String(200), nullable=False, index=True),
    Column("rule", String(64), nullable=False),
    Column("day", String(10), nullable=False),
    Column("used", Integer, nullable=False),
)

ESCALATED_AT = {
    "turn_budget": "turn_budget", "model_unavailable": "decision_retries", "anomaly_turns": "anomaly_turns",
    "anomaly_replies": "anomaly_replies", "task_model_call_limit": "task_model_call_limit",
    "subtasks_per_parent": "subtasks_per_parent",
}
"""An escalation's cause -> the limit that caused it."""

HELD_BY: dict[type, Callable[[Any], tuple[str, str] | None]] = {
    Task.SendDeferred: lambda e: (e.rule, e.reason),
    Task.DecisionHeld: lambda e: (e.rule, e.why),
    TenantTasks.CreationHeld: lambda e: (e.rule, e.reason),
    Task.Escalated: lambda e: (ESCALATED_AT[e.cause], e.reason) if e.cause in ESCALATED_AT else None,
    Task.Expired: lambda e: ("task_expiry", e.reason),
    ContactSends.Suppressed: lambda e: ("suppressed", f"{e.contact} {REASONS[e.reason]}"),
    Tenant.Paused: lambda e: ("bounce_rate", e.reason) if e.by == "bounce_rate" else None,
    ParkedMessage.Parked: lambda e: (
        "message_attempts", f"{e.kind} {e.type} {e.ref} failed {e.attempts} times: {e.error_type}: {e.error}",
    ),
}
"""Event -> (the rule that held something back, the reason), or None when this one was not a limit's doing."""

COUNTED_BY: dict[type, Callable[[Any], tuple[str, ...]]] = {
    TenantSends.Sent: lambda e: ("tenant_daily_limit",),
    Task.DecisionRequested: lambda e: ("daily_model_call_limit",) if e.day else (),  # no day: asked before it counted
    TenantTasks.Counted: lambda e: ("daily_task_limit", *(("daily_spawned_task_limit",) if e.spawned else ())),
}
"""Event (with a local `day`) -> the daily limits whose use it adds one to."""


def _key(tenant: str, rule: str) -> str:
    return f"{tenant} {rule}"


def _held(conn: Connection, event: Any, position: int) -> None:
    found = HELD_BY[type(event)](event)
    if found is None:
        return
    rule, reason = found
    key, last = _key(event.tenant, rule), {
        "last_at": format_time(event.timestamp), "last_task_id": getattr(event, "task_ref", None), "last_reason": reason,
    }
    if writes.row(conn, limit_holds, key) is None:
        writes.insert(conn, limit_holds, {"key": key, "tenant": event.tenant, "rule": rule, "held": 1, **last})
    else:
        writes.update(conn, limit_holds, key, set=last, add={"held": 1})


def _counted(conn: Connection, event: Any, position: int) -> None:
    for rule in COUNTED_BY[type(event)](event):
        key = _key(event.tenant, rule)
        stored = writes.row(conn, limit_use, key)
        if stored is None:
            writes.insert(conn, limit_use, {"key": key, "tenant": event.tenant, "rule": rule, "day": event.day, "used": 1})
        elif stored["day"] == event.day:
            writes.update(conn, limit_use, key, add={"used": 1})
        elif stored["day"] < event.day:  # a later day starts over; a step stamped with an earlier day changes nothing
            writes.update(conn, limit_use, key, set={"day": event.day, "used": 1})


def prefetch(conn: Connection, events: list[Any]) -> None:
    held = {_key(e.tenant, found[0]) for e in events if type(e) in HELD_BY and (found := HELD_BY[type(e)](e))}
    counted = {_key(e.tenant, rule) for e in events if type(e) in COUNTED_BY for rule in COUNTED_BY[type(e)](e)}
    writes.preload(conn, limit_holds, list(held))
    writes.preload(conn, limit_use, list(counted))


name = "limits"
cost = 0.5  # seconds to rebuild bench/rebuild.py's store alone, to share rebuild work evenly
tables = (limit_holds, limit_use)
handlers: dict[type, Any] = {**{event: _held for event in HELD_BY}, **{event: _counted for event in COUNTED_BY}}


def open_acting_tasks(conn: Connection, tenant: str) -> int:
    """Tasks Loopline works (those with a cadence) that are not closed: the use of the open-task limit."""
    query = select(func.count()).select_from(task_rows).where(
        task_rows.c.tenant == tenant, task_rows.c.cadence.is_not(None), task_rows.c.status.not_in(list(TERMINAL)),
    )
    return conn.execute(query).scalar_one()


def tenants_seen(conn: Connection) -> list[str]:
    found = {row.tenant for table in (limit_holds, limit_use) for row in conn.execute(select(table.c.tenant).distinct())}
    return sorted(found)


def limits_of(conn: Connection, tenant: str, settings: dict[str, Any]) -> list[dict[str, Any]]:
    """Each limit with its value for the tenant (`settings` as `tenant.configure` left them, defaults filled in), its use
    on the tenant's latest day where it counts days, and what it held back."""
    holds = {row.rule: row._mapping for row in conn.execute(select(limit_holds).where(limit_holds.c.tenant == tenant))}
    use = {row.rule: row._mapping for row in conn.execute(select(limit_use).where(limit_use.c.tenant == tenant))}
    open_now = open_acting_tasks(conn, tenant)
    rows = []
    for limit in LIMITS.values():
        used = use.get(limit.rule)
        held = holds.get(limit.rule)
        rows.append({
            "rule": limit.rule, "per": limit.scope, "counts": limit.counts,
            "value": tenant_value(limit, settings),
            "setting": limit.setting,
            "used": open_now if limit.rule == "active_task_limit" else used["used"] if used else None,
            "used_on": used["day"] if used else None,
            "held": held["held"] if held else 0,
            "last_held_at": held["last_at"] if held else None,
            "last_task_id": held["last_task_id"] if held else None,
            "last_reason": held["last_reason"] if held else None,
            **({"tokens": usage_on(conn, tenant, used["day"]) if used else None}
               if limit.rule == "daily_model_call_limit" else {}),
        })
    return rows


def held_counts(conn: Connection) -> dict[str, int]:
    """Rule -> how many times it held something back, across tenants (for `loopline status`)."""
    query = select(limit_holds.c.rule, func.sum(limit_holds.c.held)).group_by(limit_holds.c.rule)
    return {rule: int(total) for rule, total in conn.execute(query)}
