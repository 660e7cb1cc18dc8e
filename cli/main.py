"""The `loopline` command: one Typer app per noun, joined here."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.progress import Progress

from loopline.adapters.clock import SystemClock
from loopline.adapters.leader import PostgresLeader
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
        print_json({"now": format_time(moment), "actions": report.actions, "refused": report.refused})
        return
    for action in report.actions:
        out.print(f"{format_time(moment)}  {action}", highlight=False)
    for refusal in report.refused:  # recorded, shown in `loopline audit`, and never fired again
        out.print(f"{format_time(moment)}  {refusal}", highlight=False)
    if not (report.actions or report.refused):
        out.print(f"{format_time(moment)}  nothing was due")


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
    progress_every: Annotated[float, typer.Option(
        envvar="LOOPLINE_PROGRESS_EVERY", min=0.1,
        help="Seconds between the worker's progress log lines and heartbeats (what `loopline status` lists).",
    )] = 10.0,
) -> None:
    """Run the processors continuously, logging as JSON lines on standard error. With LOOPLINE_KAFKA set, run as one
    of any number of workers."""
    from loopline.cli.worker import run_embedded, run_scale

    with opened() as system:
        if system.is_scale:
            if once:
                fail("--once is for the embedded deployment; a scale worker runs until stopped")
            run_scale(system, interval=interval, tick_every=tick_every, progress_every=progress_every, console=console)
        else:
            run_embedded(system, interval=interval, tick_every=tick_every, progress_every=progress_every, once=once,
                         console=console)


@app.command()
def status(json_: Json = False) -> None:
    """Workers and the leader, how far processing lags (inputs, Kafka partitions at scale, read models), and what is parked.

    Inputs: `next` is the position to read next, `end` the position after the log's last entry, `pending` the
    messages in between; `messages processed` counts distinct messages (a log position is not a message)."""
    from loopline.adapters.heartbeats import Heartbeats

    with opened() as system:
        workers = Heartbeats(system.ledger_engine).workers(SystemClock().now())
        leader = system.leader.holder() if isinstance(system.leader, PostgresLeader) else None
        read_models = [{"name": s.name, "position": s.position, "head": s.head, "lag": s.lag} for s in system.projections.status()]
        inputs = system.input_lag()
        processed = system.messages_processed()
        parked = system.delivery.ledger.parked()
        quarantined = parked_counts(system)
    for worker in workers:
        worker.update(leads=worker["worker"] == leader, started_at=format_time(worker["started_at"]),
                      last_seen=format_time(worker["last_seen"]))
    result = {
        "deployment": "scale" if system.is_scale else "embedded", "leader": leader, "workers": workers,
        "inputs": inputs, "messages_processed": processed, "read_models": read_models,
        "parked_deliveries": {"count": len(parked), "deliveries": parked}, "parked": quarantined,
    }
    if json_:
        print_json(result)
        return
    out.print(f"deployment: {result['deployment']}")
    if system.is_scale:
        out.print(f"leader: {leader or 'none (no worker holds the leader lock)'}", highlight=False)
    else:
        out.print("leader: none needed (embedded: each writing process takes the home lock in turn)")
    print_table("workers (from their heartbeats)", [{
        **w, "partitions": compact_partitions(w["partitions"]),
        "state": ("alive" if w["alive"] else "silent") + (", leads" if w["leads"] else ""),
        "last_seen": f"{w['last_seen'][:19]}Z ({w['seen_seconds_ago']:.0f} s ago)",
    } for w in workers], ["worker", "state", "partitions", "applied", "lag", "last_seen"])
    print_table("inputs", inputs, ["source", "next", "end", "pending"])
    behind = sum(row["next"] > row["end"] for row in inputs)
    if behind:  # the broker's end offset is not exact: say so rather than show a negative count
        out.print(f"note: for {behind} partition(s) the broker reports an end below the next offset to read (Tansu reports "
                  "its last record batch's first offset + 1): pending there may be more than shown")
    out.print(f"messages processed: {processed} (distinct messages, accepted or rejected; a log position is not a message)")
    print_table("read models", read_models, ["name", "position", "head", "lag"])
    out.print(f"parked messages: {quarantined['messages']}, read-model events: {quarantined['read_model_events']}, "
              f"deliveries: {quarantined['deliveries']}" + (" (see `loopline parked list`)" if any(quarantined.values()) else ""))
    out.print(f"parked deliveries (failed after every retry): {len(parked)}")
    if parked:
        print_table("parked deliveries", parked, ["parked_at", "channel", "key", "tenant", "task_id", "kind", "attempts", "last_error"])


def compact_partitions(names: list[str]) -> str:
    """`p.commands[0], p.commands[2]` as `p.commands[0,2]`: a worker's partitions on one short line."""
    by_topic: dict[str, list[str]] = {}
    for name in names:
        topic, bracket, partition = name.rstrip("]").rpartition("[")
        if bracket:
            by_topic.setdefault(topic, []).append(partition)
        else:
            by_topic[name] = []  # not a partition: the embedded log
    return ", ".join(f"{topic}[{','.join(parts)}]" if parts else topic for topic, parts in by_topic.items()) or "-"


def main() -> None:
    app()
