"""`loopline projections status|rebuild`."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.progress import Progress

from loopline.cli.context import fail, flag, opened
from loopline.cli.help import App
from loopline.cli.output import err, out, print_json, print_rows, print_table

app = App(help="The tables queries read (read models): how far behind they are, and rebuilding them.", no_args_is_help=True)


@app.command("status")
def status(json_: Annotated[bool, flag("--json", "Print JSON instead of a table.")] = False) -> None:
    """Each read model's position in the event log and how far it lags."""
    with opened() as system:
        rows = [{"name": s.name, "position": s.position, "head": s.head, "lag": s.lag} for s in system.projections.status()]
    print_rows("read models", rows, ["name", "position", "head", "lag"], as_json=json_)


@app.command("rebuild")
def rebuild(
    names: Annotated[list[str] | None, typer.Argument(help="Read models to rebuild (default: all).")] = None,
    json_: Annotated[bool, flag("--json", "Print JSON.")] = False,
) -> None:
    """Drop read models and project them again from the event store."""
    with opened() as system:
        known = [p.name for p in system.projections.projections]
        unknown = sorted(set(names or ()) - set(known))
        if unknown:
            fail(f"unknown read model(s) {', '.join(unknown)}; choose from {', '.join(known)}")
        head = system.projections.head()
        with Progress(console=err, transient=True) as progress:
            bar = progress.add_task("rebuilding", total=head)
            report = system.rebuild(names or (), progress=lambda n: progress.advance(bar, n))
    result = {"rebuilt": list(report.applied), "events_in_store": report.events_in_store,
              "events_read": report.events_read, "applied": report.applied}
    if json_:
        print_json(result)
        return
    out.print(f"rebuilt {', '.join(result['rebuilt'])}: read {report.events_read} of the {report.events_in_store} events "
              "in the store" + (" (the rest are of types these read models do not follow, such as the inbound messages "
                                "themselves)" if report.events_read < report.events_in_store else ""))
    print_table("applied per read model", [{"read_model": name, "events_applied": n} for name, n in report.applied.items()],
                ["read_model", "events_applied"])
