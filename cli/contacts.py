"""`loopline contacts suppressed`: the contacts a tenant may not email (an opt-out, an unsubscribe, a bounce, a
complaint) and why; `contact.resubscribe` lifts one."""

from __future__ import annotations

from typing import Annotated

import typer

from loopline.cli.context import flag, opened
from loopline.cli.help import App
from loopline.cli.output import print_json, print_table
from loopline.projections.suppressions import list_suppressions

app = App(help="Contacts: who is suppressed (nothing is sent to them) and why.", no_args_is_help=True)

Json = Annotated[bool, flag("--json", "Print JSON instead of a table.")]
Tenant = Annotated[str | None, typer.Option("--tenant", help="Only this tenant.")]
Lifted = Annotated[bool, flag("--lifted", "Also the contacts whose suppression was lifted (contact.resubscribe).")]


@app.command("suppressed")
def suppressed(tenant: Tenant = None, lifted: Lifted = False, json_: Json = False) -> None:
    """The suppressed contacts: why (their words, the bounce), since when, and where it came from."""
    with opened() as system, system.projections.engine.connect() as conn:
        rows = list_suppressions(conn, tenant=tenant, lifted=lifted)
    if json_:
        print_json(rows)
        return
    print_table("suppressed contacts", rows,
                ["tenant", "contact", "why", "words", "since", "source", *(["lifted_at"] if lifted else [])])
