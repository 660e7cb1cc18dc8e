"""`loopline parked list|retry|drop`: messages, read-model events and deliveries set aside after failing."""

from __future__ import annotations

import getpass
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from typing import Annotated, Any

import typer

from loopline.adapters.clock import SystemClock
from loopline.cli.context import REJECTED, fail, flag, opened
from loopline.cli.help import App
from loopline.cli.output import out, print_json, print_table
from loopline.domain.parked import ParkedMessageClosed
from loopline.processors.followers import parked as parked_messages
from loopline.projections.runner import ParkedEventClosed
from loopline.runtime.parked import everything_parked
from loopline.runtime.system import System

app = App(help="Parked messages, read-model events and deliveries: see, retry, drop.", no_args_is_help=True)

Json = Annotated[bool, flag("--json", "Print JSON instead of a table.")]
Id = Annotated[str, typer.Argument(help="The id `loopline parked list` shows (m-…, p-…, d-…).")]
By = Annotated[str, typer.Option("--by", help="Who acts, recorded with the retry or drop (default: your user name).")]
DELIVERY_CLOSED = "the delivery is not parked any more (requeued or dropped already)"


def operator(by: str) -> str:
    if by:
        return by
    try:
        return getpass.getuser()
    except (OSError, KeyError):
        return "operator"


@app.command("list")
def list_(
    json_: Json = False,
    all_: Annotated[bool, flag("--all", "Also those already retried or dropped (messages, read-model events).")] = False,
) -> None:
    """Everything parked: the id to act on, what it is, whose, where it came from and the error."""
    with opened() as system:
        rows = everything_parked(system, include_closed=all_)
    if json_:
        print_json([{k: v for k, v in row.items() if not k.startswith("_")} for row in rows])
        return
    print_table("parked", rows, ["id", "parked", "status", "tenant", "what", "source", "at", "error"])
    if rows:
        out.print("retry one with `loopline parked retry ID` once its cause is fixed, or give it up with `loopline parked drop ID`")


def _find(system: System, wanted: str) -> dict[str, Any]:
    rows = [row for row in everything_parked(system, include_closed=True) if row["id"] == wanted.strip().lower()]
    if not rows:
        fail(f"nothing parked has id {wanted!r}; `loopline parked list` shows the ids (m-…, p-…, d-…)", REJECTED)
    return rows[0]


@contextmanager
def _acting_on(parked_id: str, by: str) -> Iterator[tuple[System, dict[str, Any], str, datetime]]:
    """The parked row the id names, in a system open for writing, with who acts on it and when."""
    who = operator(by)
    now = SystemClock().now()
    with opened() as system, system.leader.writing():
        yield system, _find(system, parked_id), who, now


@app.command("retry")
def retry(parked_id: Id, by: By = "", json_: Json = False) -> None:
    """Apply a parked message, project a parked event or requeue a parked delivery, once."""
    with _acting_on(parked_id, by) as (system, row, who, now):
        try:
            if row["parked"] == "message":
                outcome = parked_messages.retry(system.bus, row["_ref"], by=who, now=now)
            elif row["parked"] == "read model event":
                system.projections.retry_parked(*row["_ref"], by=who, now=now)
                outcome = "projected"
            elif not system.delivery.ledger.requeue(*row["_ref"], now=now.timestamp()):
                raise ParkedEventClosed(DELIVERY_CLOSED)
            else:
                outcome = "queued for delivery"
        except (ParkedMessageClosed, ParkedEventClosed) as error:
            fail(f"{row['id']}: {error}", REJECTED)
        except parked_messages.StillFailing as error:
            fail(f"{row['id']} failed again and stays parked: {error}; fix the cause and retry, or "
                 f"`loopline parked drop {row['id']}`", REJECTED)
        except Exception as error:  # noqa: BLE001 - a read model's handler failing again is the operator's news
            if row["parked"] != "read model event":
                raise
            fail(f"{row['id']} failed again and stays parked: {type(error).__name__}: {error}; fix the cause and "
                 f"retry, or `loopline parked drop {row['id']}`", REJECTED)
        system.drain()  # embedded: project and deliver what the retry caused before answering
    result = {"id": row["id"], "retried": True, "outcome": outcome, "by": who}
    if json_:
        print_json(result)
    else:
        out.print(f"{row['id']} retried: {outcome}", highlight=False, markup=False)


@app.command("drop")
def drop(parked_id: Id, by: By = "", json_: Json = False) -> None:
    """Give up a parked message, event or delivery for good, recording who did."""
    with _acting_on(parked_id, by) as (system, row, who, now):
        try:
            if row["parked"] == "message":
                parked_messages.drop(system.app, row["_ref"], by=who, now=now)
            elif row["parked"] == "read model event":
                system.projections.drop_parked(*row["_ref"], by=who, now=now)
            elif not system.delivery.ledger.drop(*row["_ref"], by=who, now=now.timestamp()):
                raise ParkedEventClosed(DELIVERY_CLOSED)
        except (ParkedMessageClosed, ParkedEventClosed) as error:
            fail(f"{row['id']}: {error}", REJECTED)
    if json_:
        print_json({"id": row["id"], "dropped": True, "by": who})
    else:
        out.print(f"{row['id']} dropped by {who}", highlight=False, markup=False)
