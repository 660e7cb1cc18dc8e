"""`loopline limits [--tenant T]`: each limit of `domain/safety_limits.py` for a tenant, its use now and what it held."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from loopline.cli.context import flag, opened
from loopline.cli.output import out, print_json, print_table
from loopline.projections.limits import limits_of, tenants_seen
from loopline.projections.tenants import defaults, find_tenant, list_tenants

Json = Annotated[bool, flag("--json", "Print JSON instead of tables.")]
TenantOption = Annotated[
    str | None, typer.Option("--tenant", help="Only this tenant (one never seen shows its defaults)."),
]


def limits(tenant: TenantOption = None, json_: Json = False) -> None:
    """Each limit with its value for the tenant, its use now and how often it held something back (and the last
    reason)."""
    with opened() as system, system.projections.engine.connect() as conn:
        names = [tenant] if tenant else sorted({row["tenant"] for row in list_tenants(conn)} | set(tenants_seen(conn)))
        shown = [{"tenant": name, "limits": limits_of(conn, name, _settings(conn, name))} for name in names]
    if json_:
        print_json(shown)
        return
    if not shown:
        out.print("no tenant yet: limits shows each tenant's once it is configured or sends", style="dim")
    for one in shown:
        print_table(f"limits of {one['tenant']}", [_row(limit) for limit in one["limits"]],
                    ["limit", "per", "value", "used", "held", "last held", "tokens"])


def _settings(conn: Any, tenant: str) -> dict[str, Any]:
    found = find_tenant(conn, tenant)
    return found["settings"] if found else defaults()


def _row(limit: dict[str, Any]) -> dict[str, Any]:
    used = limit["used"]
    return {
        "limit": limit["rule"], "per": limit["per"], "value": limit["value"],
        "used": None if used is None else f"{used} on {limit['used_on']}" if limit["used_on"] else used,
        "held": limit["held"] or None,
        "last held": (f"{limit['last_held_at']} {limit['last_task_id'] or ''}: {limit['last_reason']}"
                      if limit["held"] else None),
        "tokens": _tokens(limit.get("tokens")),
    }


def _tokens(spent: dict[str, int] | None) -> str | None:
    """The day's model tokens, beside the daily model-call limit: what went in (and of it, from the prompt cache)."""
    if not spent:
        return None
    return (f"{spent['input_tokens'] + spent['cache_read_tokens'] + spent['cache_write_tokens']} in "
            f"({spent['cache_read_tokens']} from the cache), {spent['output_tokens']} out")
