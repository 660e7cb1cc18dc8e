"""`loopline tasks list|show`."""

from __future__ import annotations

from typing import Annotated

import typer

from cli.context import fail, opened
from cli.output import out, print_json, print_table
from projections.open_loops import list_loops
from projections.tasks import find_tasks, inbox, list_tasks
from projections.timeline import task_trail

app = typer.Typer(help="Tasks: status, loops, inbox.", no_args_is_help=True)

Json = Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")]
Tenant = Annotated[str | None, typer.Option("--tenant", help="Only this tenant.")]


@app.command("list")
def list_(
    json_: Json = False,
    tenant: Tenant = None,
    status: Annotated[str | None, typer.Option(help="Only tasks with this status.")] = None,
) -> None:
    """List tasks with their status and counts."""
    with opened() as system, system.projections.engine.connect() as conn:
        rows = list_tasks(conn, tenant=tenant, status=status)
    if json_:
        print_json(rows)
    else:
        print_table("tasks", rows, ["tenant", "task_id", "title", "status", "open_loops", "actions", "inbox", "expires_at"])


@app.command("show")
def show(task_id: str, json_: Json = False, tenant: Tenant = None) -> None:
    """Show one task: its state, loops, inbox and notifications."""
    with opened() as system, system.projections.engine.connect() as conn:
        found = find_tasks(conn, task_id, tenant)
        if not found:
            fail(f"no task {task_id!r}{f' for tenant {tenant!r}' if tenant else ''}; see `loopline tasks list`", 1)
        if len(found) > 1:
            tenants = ", ".join(row["tenant"] for _, row in found)
            fail(f"task id {task_id!r} exists for several tenants ({tenants}); pass --tenant")
        aggregate_id, task = found[0]
        task["loops"] = list_loops(conn, tenant=task["tenant"], task_id=task_id)
        task["inbox_items"] = inbox(conn, aggregate_id)
        task["notifications_sent"] = [
            {"at": row["at"], "kind": row["reason"], "message": row["payload"]["message"]}
            for row in task_trail(conn, task_id, task["tenant"])
            if row["event"] == "Task.UserNotified"
        ]
    if json_:
        print_json(task)
        return
    for key in ("tenant", "task_id", "title", "status", "status_reason", "task_type", "created_at", "expires_at", "last_note"):
        out.print(f"[bold]{key}[/bold]: {task[key]}")
    print_table("loops", task["loops"], ["loop_id", "channel", "deadline", "if_unresolved", "resolved", "resolved_by"])
    print_table("inbox", task["inbox_items"], ["received_at", "type", "signal_id", "data"])
    print_table("notifications", task["notifications_sent"], ["at", "kind", "message"])
