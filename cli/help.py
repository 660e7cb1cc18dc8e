"""The Typer app every CLI noun is made with: its `--help` shows as the flag it is.

Typer 0.29 prints a flag's type in help, so `--help` read `--help <bool>`; Loopline's own flags hide it
with an empty metavar (`cli/context.py` `flag`), and these classes do the same for the help option.
"""

from __future__ import annotations

from typing import Any

import typer
from typer.core import TyperCommand, TyperGroup


def _without_type(option: Any) -> Any:
    if option is not None:
        option.metavar = ""
    return option


class Command(TyperCommand):
    def get_help_option(self, ctx: Any) -> Any:
        return _without_type(super().get_help_option(ctx))


class Group(TyperGroup):
    def get_help_option(self, ctx: Any) -> Any:
        return _without_type(super().get_help_option(ctx))


class App(typer.Typer):
    """A `typer.Typer` whose group and commands show `--help` without a type."""

    def __init__(self, **options: Any) -> None:
        super().__init__(cls=Group, **options)

    def command(self, *args: Any, **options: Any) -> Any:
        return super().command(*args, cls=Command, **options)
