"""The `tenants` read model: each tenant's settings as `tenant.configure` left them, for `loopline tenants`."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from sqlalchemy import JSON, Column, Integer, String, Table, select
from sqlalchemy.engine import Connection

from loopline.domain.masking import masked
from loopline.domain.tenant import Tenant, TenantSettings, merge_settings
from loopline.domain.timeutil import format_time
from loopline.projections import writes
from loopline.projections.runner import metadata

tenants = Table(
    "tenants", metadata,
    Column("tenant", String(200), primary_key=True),
    Column("settings", JSON, nullable=False),
    Column("configured_at", String(40), nullable=False),
    Column("updated_at", String(40), nullable=False),
    Column("changes", Integer, nullable=False),
)


def _configured(conn: Connection, event: Tenant.Configured, position: int) -> None:
    """Later values win; the profile is merged key by key, by the Tenant aggregate's own rule."""
    at = format_time(event.timestamp)
    stored = writes.row(conn, tenants, event.tenant)
    if stored is None:
        writes.insert(conn, tenants, {
            "tenant": event.tenant, "settings": dict(event.settings), "configured_at": at, "updated_at": at, "changes": 1,
        })
        return
    settings = merge_settings(stored["settings"], event.settings)
    writes.update(conn, tenants, event.tenant, set={"settings": settings, "updated_at": at}, add={"changes": 1})


def prefetch(conn: Connection, events: list[Any]) -> None:
    writes.preload(conn, tenants, list({event.tenant for event in events if isinstance(event, Tenant.Configured)}))


name = "tenants"
cost = 0.1  # seconds to rebuild bench/rebuild.py's store alone: it configures no tenant
tables = (tenants,)
handlers = {Tenant.Configured: _configured}


def defaults() -> dict[str, Any]:
    """What a tenant never configured runs with (`TenantSettings`' defaults); its profile is empty."""
    return {**{key: value for key, value in asdict(TenantSettings()).items() if key != "profile"}, "profile": {}}


def _shown(row: Any) -> dict[str, Any]:
    given = row.settings
    return {
        "tenant": row.tenant, "settings": masked({**defaults(), **given}), "configured": sorted(given),
        "configured_at": row.configured_at, "updated_at": row.updated_at, "changes": row.changes,
    }


def list_tenants(conn: Connection) -> list[dict[str, Any]]:
    return [_shown(row) for row in conn.execute(select(tenants).order_by(tenants.c.tenant))]


def find_tenant(conn: Connection, tenant: str) -> dict[str, Any] | None:
    row = conn.execute(select(tenants).where(tenants.c.tenant == tenant)).first()
    return _shown(row) if row else None


def unmasked_settings(conn: Connection, tenant: str) -> TenantSettings:
    """The tenant's settings with its secrets unmasked, for the HTTP edge that checks webhook signatures only."""
    row = conn.execute(select(tenants.c.settings).where(tenants.c.tenant == tenant)).first()
    return TenantSettings.from_dict(row.settings if row else {})
