"""Printing for the CLI: rich tables for people, JSON for machines.

Piped or redirected, a table is printed as wide as its content: rich would otherwise wrap it at an
assumed 80 columns (or $COLUMNS), splitting headers and values over lines a script cannot read back.

Both consoles read no markup: ids, titles, reasons and file names are printed as users wrote them
(`[/x]` in a title would otherwise crash a command, `[bold]` restyle it). Style with `style=` or
`styled`, never with tags in a string.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from rich.console import Console
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

UNLIMITED = 1_000_000
out = Console(markup=False)
err = Console(stderr=True, markup=False)


def styled(label: str, style: str, rest: str = "") -> Text:
    """A styled label followed by plain text, e.g. `styled("error:", "red", " no such task")`."""
    return Text.assemble((label, style), rest)


def print_json(data: Any) -> None:
    print(json.dumps(data, indent=2, sort_keys=True, default=str))


def print_rows(title: str, rows: Sequence[dict[str, Any]], columns: Sequence[str], *, as_json: bool) -> None:
    """A query's rows: every field as JSON (`--json`), or the named columns as a table."""
    if as_json:
        print_json(rows)
    else:
        print_table(title, rows, columns)


def print_table(title: str, rows: Sequence[dict[str, Any]], columns: Sequence[str]) -> None:
    if not rows:
        out.print(f"{title}: none", style="dim")
        return
    table = Table(title=title, title_justify="left", show_lines=False)
    for column in columns:
        table.add_column(column, overflow="fold")
    for row in rows:
        table.add_row(*("" if row.get(c) is None else str(row.get(c)) for c in columns))
    if out.is_terminal:
        out.print(table)
        return
    unwrapped = Measurement.get(out, out.options.update_width(UNLIMITED), table).maximum
    Console(file=out.file, markup=False, width=unwrapped, color_system=None).print(table)
