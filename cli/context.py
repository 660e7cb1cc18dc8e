"""Opening the system for one CLI command, and the one place where failures become a line and an exit code."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from typing import Any, NoReturn

import typer
from loopline.adapters.clock import SystemClock
from loopline.adapters.config import InvalidSetting, Settings
from loopline.adapters.event_store import UnsupportedStore
from loopline.adapters.messages import InvalidMessage, parse_message
from loopline.processors.handlers.command_fields import parse_timestamp
from loopline.adapters.reachability import DependencyUnavailable
from loopline.cli.output import err, styled
from loopline.runtime.bootstrap import build
from loopline.runtime.publishing import command_line
from loopline.runtime.system import System

REJECTED = 1
USAGE_ERROR = 2
"""A bad option or argument (Typer's own code), or a setting that cannot be used."""
DEPENDENCY_UNAVAILABLE = 3
"""PostgreSQL or Kafka did not answer: nothing was done, and running the command again is safe."""
NOTHING_ACCEPTED = 4
"""`publish`: input was given and every line of it was rejected."""


@contextmanager
def opened() -> Iterator[System]:
    """The system as configured; says so on standard error when this creates a new home."""
    settings = Settings.load()
    is_new_home = not settings.home.exists()
    system = build(settings)
    if is_new_home:
        err.print(f"note: created a new Loopline home at {settings.home.resolve()} (LOOPLINE_HOME chooses another)",
                  highlight=False, soft_wrap=True)
    try:
        yield system
    finally:
        system.close()


def publish_command(tenant: str, command_type: str, data: dict[str, Any], source: str) -> list[str]:
    """One command published and drained now, as `loopline publish` does: what it did; a refused command exits 1
    with why, one that is no valid message exits 2 naming the field."""
    raw = command_line(tenant, command_type, data, source)
    try:
        message = parse_message(json.dumps(raw))
    except InvalidMessage as error:
        fail(str(error))
    with opened() as system, system.leader.writing():
        system.log.append([message], source)
        report = system.drain()
    for outcome in report.rejected:
        fail(f"{command_type} refused: {outcome.detail}", REJECTED)
    return [outcome.detail for outcome in report.outcomes if outcome.accepted]


def flag(name: str, help: str, **options: Any) -> Any:  # noqa: A002 - Typer's own word
    """An option that takes no value, shown in --help without a type (Typer shows `<bool>`)."""
    return typer.Option(name, help=help, metavar="", **options)


def parse_now(value: str, option: str = "--now") -> datetime:
    """A time given on the command line, by the rule messages follow (RFC 3339 with a zone), or `now`."""
    if value == "now":
        return SystemClock().now()
    try:
        return parse_timestamp(value)
    except ValueError as error:
        fail(f"{option} {value!r}: {error}, or now")


def fail(message: str, code: int = USAGE_ERROR) -> NoReturn:
    err.print(styled("error:", "red", f" {message}"), soft_wrap=True)
    raise typer.Exit(code)


@dataclass(frozen=True)
class Failure:
    message: str
    code: int


def explain(error: BaseException) -> Failure | None:
    """What a user should read for an error that is not a bug, and the exit code; None for anything else."""
    if isinstance(error, (InvalidSetting, UnsupportedStore)):
        return Failure(str(error), USAGE_ERROR)
    if isinstance(error, DependencyUnavailable):
        return Failure(str(error), DEPENDENCY_UNAVAILABLE)
    if _is_postgres_unavailable(error):
        return Failure(f"PostgreSQL is unavailable: {_first_line(error)}; check LOOPLINE_EVENT_STORE and "
                       "LOOPLINE_READ_MODEL and that the server is running", DEPENDENCY_UNAVAILABLE)
    if _is_kafka_unavailable(error):
        return Failure(f"Kafka is unavailable: {_first_line(error)}; check LOOPLINE_KAFKA and that the brokers "
                       "are running and reachable at the addresses they advertise", DEPENDENCY_UNAVAILABLE)
    return None


def _is_postgres_unavailable(error: BaseException) -> bool:
    """A lost or refused connection (SQLSTATE class 08, none at all, or the server shutting down), also when
    SQLAlchemy or eventsourcing wrap it; a query the server refused is not one."""
    try:
        import psycopg
        import psycopg_pool
    except ImportError:
        return False
    for cause in _chain(error):
        if isinstance(cause, psycopg_pool.PoolTimeout):
            return True
        if isinstance(cause, psycopg.OperationalError):
            state = cause.sqlstate
            return state is None or state.startswith("08") or state in ("57P01", "57P02", "57P03")
    return False


def _is_kafka_unavailable(error: BaseException) -> bool:
    """kafka-python's (publish, status, topics) or aiokafka's (workers) failure to reach a broker."""
    unavailable: tuple[type[BaseException], ...] = ()
    try:
        from kafka import errors

        unavailable += (errors.KafkaTimeoutError, errors.KafkaConnectionError)
        from aiokafka import errors as aio_errors

        unavailable += (aio_errors.KafkaConnectionError, aio_errors.NoBrokersAvailable)
    except ImportError:
        pass
    return bool(unavailable) and any(isinstance(cause, unavailable) for cause in _chain(error))


def _chain(error: BaseException) -> Iterator[BaseException]:
    """The error and what caused it: SQLAlchemy's `orig`, then Python's cause or context."""
    current: BaseException | None = error
    seen: set[int] = set()
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        current = getattr(current, "orig", None) or current.__cause__ or current.__context__


def _first_line(error: BaseException) -> str:
    for cause in _chain(error):
        text = str(cause).strip()
        if text:
            return text.splitlines()[0]
    return type(error).__name__
