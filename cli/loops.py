"""`loopline loops list`."""

from __future__ import annotations

from typing import Annotated

import typer

from loopline.cli.context import flag, opened
from loopline.cli.help import App
from loopline.cli.output import print_rows
from loopline.projections.open_loops import list_loops

app = App(help="Open loops: what Loopline is waiting for.", no_args_is_help=True)


@app.command("list")
def list_(
    open_: Annotated[bool, flag("--open", "Only unresolved loops.")] = False,
    json_: Annotated[bool, flag("--json", "Print JSON instead of a table.")] = False,
    tenant: Annotated[str | None, typer.Option("--tenant", help="Only this tenant.")] = None,
) -> None:
    """List open loops with their deadline and resolution."""
    with opened() as system, system.projections.engine.connect() as conn:
        rows = list_loops(conn, open_only=open_, tenant=tenant)
    columns = ["loop_id", "task_id", "tenant", "channel", "deadline", "resolved", "resolved_by"]
    print_rows("loops", rows, columns, as_json=json_)
