"""Opening the system for one CLI command, with errors that say what to do."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import typer
from loopline.adapters.config import InvalidSetting
from loopline.adapters.event_store import UnsupportedStore
from loopline.cli.bootstrap import System, build
from loopline.cli.output import err, styled

USAGE_ERROR = 2
REJECTED = 1
NOTHING_ACCEPTED = 4
"""`publish`: input was given and every line of it was rejected (2 is Typer's usage error)."""


@contextmanager
def opened() -> Iterator[System]:
    try:
        system = build()
    except (UnsupportedStore, InvalidSetting) as error:
        err.print(styled("error:", "red", f" {error}"))
        raise typer.Exit(USAGE_ERROR) from None
    try:
        yield system
    finally:
        system.close()


def fail(message: str, code: int = USAGE_ERROR) -> None:
    err.print(styled("error:", "red", f" {message}"))
    raise typer.Exit(code)
