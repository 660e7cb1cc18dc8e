"""`loopline plan TENANT [--days N]`: what the agent would send, when, and what would be held, without changing anything."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.progress import Progress

from loopline.adapters.config import Settings
from loopline.cli.context import flag, parse_now
from loopline.cli.output import err, out, print_json, print_table
from loopline.runtime.plan import MOST_DAYS, plan as work_out


def plan(
    tenant: str,
    days: Annotated[int, typer.Option("--days", min=1, max=MOST_DAYS, help="How many days ahead to plan.")] = 7,
    now: Annotated[str, typer.Option("--now", help="Time the plan starts at: RFC 3339 with a zone, or now.")] = "now",
    json_: Annotated[bool, flag("--json", "Print JSON instead of tables.")] = False,
) -> None:
    """Show the emails the agent would send for a tenant in the next days, when, and why any would be held.

    Worked out on a copy of the event store with the offline policy: nothing is sent, no model is called and the
    event store is left as it was.
    """
    start = parse_now(now)
    with Progress(console=err, transient=True) as progress:
        progress.add_task(f"planning {days} days on a copy", total=None)
        found = work_out(Settings.load(), tenant, start=start, days=days)
    if json_:
        print_json(found.as_dict())
        return
    print_table(f"{tenant} would send ({len(found.sends)})", found.sends, ["at", "task_id", "to", "subject"])
    print_table("held by a rail", found.held, ["at", "task_id", "rule", "until", "reason"])
    print_table("the owner would be told", found.owner_notices, ["at", "task_id", "kind", "message"])
    out.print("nothing was sent or changed: the plan ran on a copy of the event store, with the offline policy "
              "deciding (the model's drafts and evaluations may differ)", style="dim")
