"""The `loopline` command: one Typer app per noun, joined here."""

from __future__ import annotations

import signal
import sys
import threading
import time
from pathlib import Path
from typing import Annotated

import typer
from rich.progress import Progress

from loopline.adapters.channels import ConsoleChannel
from loopline.adapters.clock import SystemClock
from loopline.adapters.limits import MAX_LINE_BYTES
from loopline.adapters.messages import InvalidMessage, parse_message
from loopline.cli import demo as demo_module
from loopline.cli import loops, parked, projections, tasks
from loopline.cli.context import NOTHING_ACCEPTED, REJECTED, fail, opened
from loopline.cli.output import err, out, print_json, print_table, styled
from loopline.cli.parked import parked_counts
from loopline.domain import ids
from loopline.domain.timeutil import format_time, parse_time
from loopline.processors.messages import Message
from loopline.processors.parked import short_id
from loopline.processors.rejects import record_rejected_inputs
from loopline.projections.timeline import task_trail

app = typer.Typer(
    help="Loopline: an event-sourced follow-through engine for AI agents.", no_args_is_help=True, add_completion=False
)
app.add_typer(tasks.app, name="tasks")
app.add_typer(loops.app, name="loops")
app.add_typer(projections.app, name="projections")
app.add_typer(parked.app, name="parked")
app.command("demo")(demo_module.demo)

Json = Annotated[bool, typer.Option("--json", help="Print JSON instead of text.")]


@app.command()
def publish(
    file: Annotated[str, typer.Argument(help="JSONL file of commands and signals, or - for standard input.")],
    json_: Json = False,
) -> None:
    """Validate and append commands and signals, then process them.

    Exit 0 if every line was accepted (repeats included), 1 if some were rejected, 4 if none was accepted.
    """
    source = "stdin" if file == "-" else file
    try:
        data = sys.stdin.buffer.read() if file == "-" else Path(file).read_bytes()
    except OSError as error:
        fail(f"cannot read {file}: {error.strerror}; give a JSONL file path or - for standard input")
    valid: list[Message] = []
    invalid: list[tuple[int, bytes, str]] = []
    for number, line in enumerate(split_lines(data), start=1):
        if not line.strip():
            continue
        try:
            valid.append(parse_message(line))
        except InvalidMessage as error:
            invalid.append((number, line, str(error)))
    with opened() as system, system.leader.writing():
        if invalid:  # kept as they came, up to the line limit, with their reasons
            record_rejected_inputs(
                system.app, [(f"line {n}", line[:MAX_LINE_BYTES], reason) for n, line, reason in invalid],
                source=source, now=SystemClock().now(),
            )
        appended = system.log.append(valid, source)
        with Progress(console=err, transient=True) as progress:
            bar = progress.add_task("processing", total=appended.appended)
            report = system.drain(progress=lambda n: progress.advance(bar, n))
        scale = system.is_scale
    rejected = [{"line": number, "reason": reason} for number, _, reason in invalid] + [
        {"id": o.step.message.ref, "tenant": o.step.message.tenant, "type": o.step.message.type, "reason": o.detail}
        for o in report.rejected
    ]
    for reject in rejected:
        where = f"line {reject['line']}" if "line" in reject else f"message {reject['id']} ({reject['type']})"
        err.print(styled("rejected", "red", f" {source} {where}: {reject['reason']}"), highlight=False)
    for outcome in report.parked:  # its handler kept failing: set aside, the rest went on
        parked_id = short_id(ids.parked_message_id(outcome.step.message_id))
        err.print(styled("parked", "yellow", f" message {outcome.step.message.ref} as {parked_id}: "
                         f"{outcome.detail or ''}; see `loopline parked list`"), highlight=False)
    summary = {
        "appended": appended.appended,
        "duplicates_ignored": appended.duplicates,
        "processed": len(report.outcomes),
        "rejected": rejected,
        "parked": len(report.parked),
        "notifications_delivered": report.delivered,
        "counts": {"accepted": appended.appended - len(report.rejected), "duplicates": appended.duplicates, "rejected": len(rejected)},
    }
    if json_:
        print_json(summary)
    elif scale:
        out.print(f"appended {appended.appended} to Kafka for the workers, rejected {len(rejected)}")
    else:
        out.print(
            f"appended {appended.appended}, ignored {appended.duplicates} duplicate(s), "
            f"processed {len(report.outcomes)}, rejected {len(rejected)}"
        )
    if invalid and not valid:
        raise typer.Exit(NOTHING_ACCEPTED)
    if rejected:
        raise typer.Exit(REJECTED)


def split_lines(data: bytes) -> list[bytes]:
    """Lines end at `\\n` only (U+2028, U+0085 or a lone `\\r` inside a line are its content); a line's
    trailing `\\r` (CRLF files) is dropped, so line numbers are what an editor shows."""
    lines = data.split(b"\n")
    if lines[-1] == b"":
        lines.pop()  # the newline that ends the last line starts no line of its own
    return [line[:-1] if line.endswith(b"\r") else line for line in lines]


@app.command()
def tick(
    now: Annotated[str, typer.Option("--now", help="RFC 3339 time to run the scheduler as of.")],
    json_: Json = False,
) -> None:
    """Run the scheduler as of --now: passed deadlines, task expiry, due proactive runs. Idempotent."""
    try:
        moment = parse_time(now)
    except ValueError:
        fail(f"--now {now!r} is not an RFC 3339 time such as 2026-03-16T10:00:00Z")
    with opened() as system, Progress(console=err, transient=True) as progress:
        bar = progress.add_task("scanning", total=None)
        report = system.tick(moment, progress=lambda done, total: progress.update(bar, completed=done, total=total))
    if json_:
        print_json({"now": format_time(moment), "actions": report.actions, "refused": report.refused,
                    "summary": report.summary()})
        return
    # One line per thing done, never wrapped: each is a sentence a person reads (or a script greps).
    for action in report.actions:
        out.print(f"{format_time(moment)}  {action}", highlight=False, soft_wrap=True)
    for refusal in report.refused:  # recorded, shown in `loopline audit`, and never fired again
        out.print(f"{format_time(moment)}  {refusal}", highlight=False, soft_wrap=True)
    out.print(f"{format_time(moment)}  {report.summary()}", highlight=False, soft_wrap=True)


@app.command()
def audit(
    task_id: str,
    json_: Json = False,
    tenant: Annotated[str | None, typer.Option("--tenant", help="Only this tenant.")] = None,
) -> None:
    """The task's full event trail, with the reason for each step."""
    with opened() as system, system.projections.engine.connect() as conn:
        rows = task_trail(conn, task_id, tenant)
    if not rows:
        fail(f"no events for task {task_id!r}{f' of tenant {tenant!r}' if tenant else ''}; see `loopline tasks list`", 1)
    tenants = sorted({row["tenant"] for row in rows})
    if len(tenants) > 1:
        fail(f"task id {task_id!r} exists for several tenants ({', '.join(tenants)}); pass --tenant")
    if json_:
        print_json(rows)
    else:
        print_table(f"audit {task_id}", rows, ["at", "subject", "event", "summary", "reason"])


@app.command()
def run(
    interval: Annotated[float, typer.Option(help="Seconds between polls.")] = 1.0,
    tick_every: Annotated[float, typer.Option(help="Seconds between scheduler ticks at wall-clock time; 0 leaves time to `loopline tick --now`.")] = 60.0,
    once: Annotated[bool, typer.Option("--once", help="Embedded only: drain and tick once, then exit.")] = False,
    console: Annotated[bool, typer.Option("--console", help="Also print every message delivered.")] = False,
) -> None:
    """Run the processors continuously. With LOOPLINE_KAFKA set, run as one of any number of workers."""
    from loopline.cli.worker import print_delivered, run_scale

    with opened() as system:
        if system.is_scale:
            if once:
                fail("--once is for the embedded deployment; a scale worker runs until stopped")
            run_scale(system, interval=interval, tick_every=tick_every, console=console)
            return
        if console:
            system.delivery.add_channel(ConsoleChannel(print_delivered))
        clock = SystemClock()
        last_tick = float("-inf")
        stopping = threading.Event()
        for signum in (signal.SIGINT, signal.SIGTERM):  # stop between passes, and exit 0
            signal.signal(signum, lambda *_: stopping.set())
        while not stopping.is_set():
            with system.leader.writing():  # one pass at a time on this home; the lock is free while sleeping
                report = system.drain()
                if report.outcomes:
                    out.print(f"processed {len(report.outcomes)} message(s), {len(report.rejected)} rejected")
                if (tick_every > 0 and time.monotonic() - last_tick >= tick_every) or once:
                    for action in system.tick(clock.now()).actions:
                        out.print(action, highlight=False)
                    last_tick = time.monotonic()
            if once:
                return
            stopping.wait(interval)


@app.command()
def status(json_: Json = False) -> None:
    """How far processing lags (inputs, Kafka partitions at scale, read models) and deliveries parked as failed."""
    with opened() as system:
        read_models = [{"name": s.name, "position": s.position, "head": s.head, "lag": s.lag} for s in system.projections.status()]
        inputs = system.input_lag()
        parked = system.delivery.ledger.parked()
        quarantined = parked_counts(system)
    result = {
        "deployment": "scale" if system.is_scale else "embedded", "inputs": inputs, "read_models": read_models,
        "parked_deliveries": {"count": len(parked), "deliveries": parked}, "parked": quarantined,
    }
    if json_:
        print_json(result)
        return
    out.print(f"deployment: {result['deployment']}")
    print_table("inputs", inputs, ["source", "end", "processed", "lag"])
    print_table("read models", read_models, ["name", "position", "head", "lag"])
    out.print(f"parked messages: {quarantined['messages']}, read-model events: {quarantined['read_model_events']}, "
              f"deliveries: {quarantined['deliveries']}" + (" (see `loopline parked list`)" if any(quarantined.values()) else ""))
    out.print(f"parked deliveries (failed after every retry): {len(parked)}")
    if parked:
        print_table("parked deliveries", parked, ["parked_at", "channel", "key", "tenant", "task_id", "kind", "attempts", "last_error"])


def main() -> None:
    app()
