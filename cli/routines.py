"""`loopline routines [--tenant T] [--json]`: each routine, its owner, schedule, state and last run."""

from __future__ import annotations

from typing import Annotated

import typer

from loopline.cli.context import flag, opened
from loopline.cli.output import print_rows
from loopline.projections.routines import list_routines

COLUMNS = ["routine_id", "tenant", "task_id", "schedule", "action", "status", "runs", "last_outcome", "next_run_at",
           "report_due_at"]


def routines(
    tenant: Annotated[str | None, typer.Option("--tenant", help="Only this tenant's routines.")] = None,
    json_: Annotated[bool, flag("--json", "Print JSON (every field, the last output too) instead of a table.")] = False,
) -> None:
    """List the routines: who owns each (a task, or the tenant when task_id is empty), when it runs next, and how
    its last run went; a tenant's due run waits for its runner's report until report_due_at."""
    with opened() as system, system.projections.engine.connect() as conn:
        rows = list_routines(conn, tenant)
    print_rows("routines", rows, COLUMNS, as_json=json_)
