"""Printing for the CLI: rich tables for people, JSON for machines."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

out = Console()
err = Console(stderr=True)


def print_json(data: Any) -> None:
    print(json.dumps(data, indent=2, sort_keys=True, default=str))


def print_table(title: str, rows: Sequence[dict[str, Any]], columns: Sequence[str]) -> None:
    if not rows:
        out.print(f"[dim]{title}: none[/dim]")
        return
    table = Table(title=title, title_justify="left", show_lines=False)
    for column in columns:
        table.add_column(column, overflow="fold")
    for row in rows:
        table.add_row(*("" if row.get(c) is None else escape(str(row.get(c))) for c in columns))
    out.print(table)
