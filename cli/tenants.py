"""`loopline tenants list|show`: each tenant's settings (`tenant.configure`), with the defaults it runs with."""

from __future__ import annotations

import json
from typing import Annotated, Any

from loopline.cli.context import flag, opened
from loopline.cli.help import App
from loopline.cli.health import print_pauses
from loopline.cli.output import out, print_json, print_table, styled
from loopline.projections.pauses import tenant_pause
from loopline.projections.tenants import defaults, find_tenant, list_tenants

app = App(help="Tenants: settings from tenant.configure, and the defaults for the rest.", no_args_is_help=True)

Json = Annotated[bool, flag("--json", "Print JSON instead of a table.")]


@app.command("list")
def list_(json_: Json = False) -> None:
    """List configured tenants with their execution mode and send limits."""
    with opened() as system, system.projections.engine.connect() as conn:
        rows = list_tenants(conn)
    if json_:
        print_json(rows)
        return
    print_table("tenants", [{"tenant": row["tenant"], **row["settings"], "updated_at": row["updated_at"]} for row in rows],
                ["tenant", "name", "execution_mode", "member_weekly_limit", "daily_send_limit", "timezone", "updated_at"])


@app.command("show")
def show(tenant: str, json_: Json = False) -> None:
    """One tenant's settings, and whether it is paused; a tenant never configured shows the defaults it runs with."""
    with opened() as system, system.projections.engine.connect() as conn:
        found = find_tenant(conn, tenant)
        pause = tenant_pause(conn, tenant)
    if found is None:
        found = {"tenant": tenant, "settings": defaults(), "configured": [], "configured_at": None, "updated_at": None,
                 "changes": 0}
    found["pause"] = pause
    if json_:
        print_json(found)
        return
    print_pauses({"system": pause["system"], "tenants": [{"tenant": tenant, **pause}] if pause["paused"] else []})
    if not found["configured"]:
        out.print(f"tenant {tenant} was never configured (tenant.configure): it runs with the defaults", style="dim")
    settings = found["settings"]
    for key, value in settings.items():
        if key != "profile":
            origin = "" if key in found["configured"] else "  (default)"
            out.print(styled(key, "bold", f": {_plain(value)}{origin}"))
    print_table("profile", [{"field": k, "value": _plain(v)} for k, v in sorted(settings.get("profile", {}).items())],
                ["field", "value"])


def _plain(value: Any) -> str:
    return "—" if value is None else value if isinstance(value, str) else json.dumps(value)

