"""`loopline keys create|revoke|list`: the API keys the HTTP edge (`loopline serve`) takes, a tenant's or the
operator's; a key is printed once, when created, and only its hash is kept."""

from __future__ import annotations

from typing import Annotated

import typer

from loopline.adapters.api_keys import ApiKeys, UnknownKey
from loopline.adapters.clock import SystemClock
from loopline.cli.context import fail, flag, opened
from loopline.cli.help import App
from loopline.cli.output import err, out, print_json, print_rows

app = App(help="API keys for `loopline serve`: the dashboard's login and the API's Bearer token.", no_args_is_help=True)

Json = Annotated[bool, flag("--json", "Print JSON instead of text.")]


@app.command("create")
def create(
    tenant: Annotated[str | None, typer.Option("--tenant", help="The tenant the key sees and acts for.")] = None,
    operator: Annotated[bool, flag("--operator", "A key for the operator: every tenant, and the System page.")] = False,
    label: Annotated[str, typer.Option("--label", help="What the key is for, shown by `keys list`.")] = "",
    json_: Json = False,
) -> None:
    """Make a key and print it once (it is not kept, only its hash): give it as `Authorization: Bearer <key>`, or
    paste it on the dashboard's login page."""
    if operator == (tenant is not None):
        fail("give --tenant T for a tenant's key, or --operator for the operator's (one of them)")
    if tenant is not None and not tenant.strip():
        fail("--tenant: give the tenant's id")
    with opened() as system:
        issued = ApiKeys(system.ledger_engine).create(tenant=tenant, operator=operator, label=label,
                                                      now=SystemClock().now())
    if json_:
        print_json({"key": issued.token, "key_id": issued.key_id, "tenant": tenant, "operator": operator})
        return
    out.print(issued.token, highlight=False, soft_wrap=True)
    who = "the operator" if operator else f"tenant {tenant}"
    err.print(f"key {issued.key_id} for {who}: copy it now, it is not shown again; "
              f"revoke it with `loopline keys revoke {issued.key_id}`", highlight=False, soft_wrap=True)


@app.command("revoke")
def revoke(key_id: Annotated[str, typer.Argument(help="The key's id (`keys list`), or the whole key.")],
           json_: Json = False) -> None:
    """Revoke a key at once: its API calls are refused and its dashboard sessions end, in every serve process."""
    if key_id.startswith("ll_"):
        key_id = key_id.split("_", 2)[1] if key_id.count("_") >= 2 else key_id
    with opened() as system:
        try:
            record = ApiKeys(system.ledger_engine).revoke(key_id, SystemClock().now())
        except UnknownKey as error:
            fail(str(error), 1)
    if json_:
        print_json(record.as_dict())
        return
    out.print(f"revoked key {record.key_id} ({'operator' if record.operator else record.tenant}) "
              f"at {record.revoked_at:%Y-%m-%d %H:%M:%S %Z}", highlight=False)


@app.command("list")
def list_(tenant: Annotated[str | None, typer.Option("--tenant", help="Only this tenant's keys.")] = None,
          json_: Json = False) -> None:
    """The keys issued, live and revoked (never the keys themselves)."""
    with opened() as system:
        rows = [record.as_dict() for record in ApiKeys(system.ledger_engine).list(tenant)]
    print_rows("API keys", rows, ["key_id", "tenant", "operator", "label", "created_at", "revoked_at"], as_json=json_)
