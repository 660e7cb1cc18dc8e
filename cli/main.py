"""The `loopline` command: one Typer app per noun, joined here."""

from __future__ import annotations

import sys
from importlib.metadata import version
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.progress import Progress

from loopline.adapters.clock import SystemClock
from loopline.cli import demo as demo_module
from loopline.cli.asyncapi import asyncapi
from loopline.cli import contacts, keys, loops, parked, projections, review, routines, rules, serve, tasks
from loopline.cli import limits as limits_module
from loopline.cli import plan as plan_module
from loopline.cli import prompt as prompt_module
from loopline.cli import scorecard as scorecard_module
from loopline.cli import tenants as tenants_module
from loopline.cli.health import print_degraded, print_pauses
from loopline.cli.context import NOTHING_ACCEPTED, REJECTED, explain, fail, flag, opened, parse_now
from loopline.cli.help import App
from loopline.cli.output import err, out, print_json, print_rows, print_table, styled
from loopline.cli.status_views import compact_partitions, print_tenant_status
from loopline.domain import ids
from loopline.domain.timeutil import format_time
from loopline.domain.wording import count
from loopline.processors.followers.parked import short_id
from loopline.projections.timeline import task_trail
from loopline.runtime import publishing
from loopline.runtime.status import system_status

app = App(
    help="Loopline: an event-sourced follow-through engine for AI agents.", no_args_is_help=True, add_completion=False
)
app.add_typer(tasks.app, name="tasks")
app.add_typer(loops.app, name="loops")
app.add_typer(projections.app, name="projections")
app.add_typer(parked.app, name="parked")
app.add_typer(tenants_module.app, name="tenants")
app.add_typer(contacts.app, name="contacts")
app.add_typer(review.app, name="review")
app.add_typer(rules.app, name="rules")
app.add_typer(keys.app, name="keys")
app.command("demo")(demo_module.demo)
app.command("prompt")(prompt_module.prompt)
app.command("limits")(limits_module.limits)
app.command("plan")(plan_module.plan)
app.command("scorecard")(scorecard_module.scorecard_command)
app.command("routines")(routines.routines)
app.command("serve")(serve.serve)
app.command("asyncapi")(asyncapi)

Json = Annotated[bool, flag("--json", "Print JSON instead of text.")]
debugging = False
"""Set by --debug (or LOOPLINE_DEBUG=1): main() then lets a failure's traceback through."""


def _print_version(asked: bool) -> None:
    if asked:
        out.print(f"loopline {version('loopline')}", highlight=False)
        raise typer.Exit()


@app.callback()
def options(
    debug: Annotated[bool, flag("--debug", "Show the full traceback of a failure instead of one line.", envvar="LOOPLINE_DEBUG")] = False,
    version_: Annotated[bool, flag("--version", "Print the version and exit.", callback=_print_version, is_eager=True)] = False,
) -> None:
    """Loopline: an event-sourced follow-through engine for AI agents."""
    global debugging
    debugging = debug


@app.command()
def publish(
    file: Annotated[str, typer.Argument(help="JSONL file of commands and signals, or - for standard input.")],
    json_: Json = False,
) -> None:
    """Apply a file of commands and signals (one JSON object a line) and say which lines took effect and which were refused, and why.

    Exit 0 if every line took effect (repeats included), 1 if some were refused, 4 if all were.
    """
    source = "stdin" if file == "-" else file
    try:
        data = sys.stdin.buffer.read() if file == "-" else Path(file).read_bytes()
    except OSError as error:
        fail(f"cannot read {file}: {error.strerror}; give a JSONL file path or - for standard input")
    try:
        parsed = publishing.parse_lines(data)
    except publishing.UnreadableText as error:
        fail(f"{source}: {error}; convert it, e.g. iconv -f {error.encoding} -t UTF-8 {'FILE' if file == '-' else file}")
    with opened() as system, Progress(console=err, transient=True) as progress:
        bar = progress.add_task("processing", total=None)
        done = publishing.publish(system, parsed, source, progress=lambda n: progress.advance(bar, n),
                                  started=lambda total: progress.update(bar, total=total))
    valid, invalid, appended, report = parsed.valid, parsed.invalid, done.appended, done.report
    rejected, warnings = done.rejected(), done.warnings()
    for reject in rejected:
        err.print(styled("rejected", "red", f" {source} {_where(reject)}: {reject['reason']}"), highlight=False, soft_wrap=True)
    for warning in warnings:
        err.print(styled("warning", "yellow", f" {source} {_where(warning)}: {warning['warning']}"), highlight=False,
                  soft_wrap=True)
    hint = publishing.format_hint(invalid)
    if hint:
        err.print(styled("hint:", "bold", f" {hint}"), highlight=False, soft_wrap=True)
    for outcome in report.parked:  # its handler kept failing: set aside, the rest went on
        parked_id = short_id(ids.parked_message_id(outcome.step.message_id))
        err.print(styled("parked", "yellow", f" message {outcome.step.message.ref} as {parked_id}: "
                         f"{outcome.detail or ''}; see `loopline parked list`"), highlight=False)
    summary = {
        "appended": appended.appended,
        "duplicates_ignored": appended.duplicates,
        "processed": len(report.outcomes),
        "rejected": rejected,
        "warnings": warnings,
        "parked": len(report.parked),
        "notifications_delivered": report.delivered,
        "counts": {"accepted": appended.appended - len(report.rejected), "duplicates": appended.duplicates,
                   "rejected": len(rejected), "took_effect": None},
    }
    ours = done.own_outcomes()
    took_effect = sum(1 for o in ours if o.accepted)
    summary["counts"]["took_effect"] = took_effect  # this publish's own lines, applied now (not parked, not refused)
    if json_:
        print_json(summary)
    elif done.scale:
        out.print(f"read {count(len(valid) + len(invalid), 'line')}: {appended.appended} handed to the workers "
                  f"(Kafka), {len(invalid)} refused", soft_wrap=True)
    else:
        out.print(_said(lines=len(valid) + len(invalid), took_effect=took_effect,
                        refused=len(invalid) + sum(1 for o in ours if not (o.accepted or o.parked)),
                        repeats=appended.duplicates, set_aside=sum(1 for o in ours if o.parked),
                        earlier=len(report.outcomes) - len(ours)), soft_wrap=True)
    if invalid and not valid:
        raise typer.Exit(NOTHING_ACCEPTED)
    if rejected:
        raise typer.Exit(REJECTED)


def _said(*, lines: int, took_effect: int, refused: int, repeats: int, set_aside: int, earlier: int) -> str:
    """What a publish did, in a user's words: every line read either took effect, was refused (the lines above
    say why), was a repeat of a message received before, or was set aside to retry."""
    said = f"read {count(lines, 'line')}: {took_effect} took effect, {refused} refused"
    if repeats:
        said += f", {repeats} already received before (ignored)"
    if set_aside:
        said += f", {set_aside} set aside to retry (see `loopline parked list`)"
    if earlier:
        said += f"; {count(earlier, 'message')} of an earlier publish processed too"
    return said


def _where(item: dict[str, Any]) -> str:
    """`line 3`, `line 3, message m-1 (task.create)`, or, for a message of an earlier publish, `message m-1`."""
    if "id" not in item:
        return f"line {item['line']}"
    message = f"message {item['id']}" + (f" ({item['type']})" if "type" in item else "")
    return f"line {item['line']}, {message}" if item["line"] is not None else message


@app.command()
def tick(
    now: Annotated[str, typer.Option("--now", help="Time to run the scheduler as of: an RFC 3339 time with a zone, or now.")],
    json_: Json = False,
) -> None:
    """Do what is due as of --now: waits past their deadline, touches and wake-ups due, tasks expiring, the owner's check-ins; a second run for the same time does nothing more."""
    moment = parse_now(now)
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
    """Everything that happened to a task (a proposal by its id, `proactive-run` the tenant's runs), in order, with why."""
    with opened() as system, system.projections.engine.connect() as conn:
        rows = task_trail(conn, task_id, tenant)
    if not rows:
        fail(f"no events for task {task_id!r}{f' of tenant {tenant!r}' if tenant else ''}; see `loopline tasks list`", 1)
    tenants = sorted({row["tenant"] for row in rows})
    if len(tenants) > 1:
        fail(f"task id {task_id!r} exists for several tenants ({', '.join(tenants)}); pass --tenant")
    print_rows(f"audit {task_id}", rows, ["at", "subject", "event", "summary", "reason"], as_json=json_)


@app.command()
def run(
    interval: Annotated[float, typer.Option(help="Seconds between polls.")] = 1.0,
    tick_every: Annotated[float, typer.Option(help="Seconds between scheduler ticks at wall-clock time; 0 leaves time to `loopline tick --now`.")] = 60.0,
    once: Annotated[bool, flag("--once", "Embedded only: drain and tick once, then exit.")] = False,
    console: Annotated[bool, flag("--console", "Also print every message delivered.")] = False,
    progress_every: Annotated[float, typer.Option(
        envvar="LOOPLINE_PROGRESS_EVERY", min=0.1,
        help="Seconds between the worker's progress log lines and heartbeats (what `loopline status` lists).",
    )] = 10.0,
) -> None:
    """Keep working until stopped: apply what is published, do what falls due, deliver notices and emails; logs JSON
    lines on standard error. With LOOPLINE_KAFKA set, run as one of any number of workers."""
    from loopline.runtime.worker import run_embedded, serve

    if not once:
        serve(opened, lambda error: debugging or explain(error) is not None, interval=interval, tick_every=tick_every,
              progress_every=progress_every, console=console)
        return
    with opened() as system:
        if system.is_scale:
            fail("--once is for the embedded deployment; a scale worker runs until stopped")
        run_embedded(system, interval=interval, tick_every=tick_every, progress_every=progress_every, once=True,
                     console=console)


@app.command()
def status(
    json_: Json = False,
    tenant: Annotated[str | None, typer.Option("--tenant", help="Show this tenant's loop metrics instead.")] = None,
) -> None:
    """Workers and the leader, how far processing lags (inputs, Kafka partitions at scale, read models), what is paused
    or degraded, and what is parked.

    Inputs: `next` is the position to read next, `end` the position after the log's last entry, `pending` the
    messages in between; `messages processed` counts distinct messages (a log position is not a message)."""
    if tenant is not None:
        print_tenant_status(tenant, as_json=json_)
        return
    with opened() as system:
        result = system_status(system, SystemClock().now())
    if json_:
        print_json(result)
        return
    workers, inputs, read_models, leader = result["workers"], result["inputs"], result["read_models"], result["leader"]
    paused, held, quarantined = result["pauses"], result["limits_held"], result["parked"]
    parked, processed = result["parked_deliveries"]["deliveries"], result["messages_processed"]
    model, channels = result["degraded"]["model"], result["degraded"]["channels"]
    out.print(f"deployment: {result['deployment']}")
    print_pauses(paused)
    print_degraded(model, channels)
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
    out.print(f"held back by a limit: {sum(held.values())}"
              + (f" ({', '.join(f'{rule} {n}' for rule, n in sorted(held.items()))}; see `loopline limits`)" if held else ""))
    if parked:
        print_table("parked deliveries", parked, ["parked_at", "channel", "key", "tenant", "task_id", "kind", "attempts", "last_error"])


def main() -> None:
    """Runs the command; a failure that is not a bug (bad settings, a server that does not answer)
    ends as one line and its exit code, unless --debug asks for the traceback."""
    try:
        app()
    except Exception as error:
        failure = explain(error)
        if failure is None or debugging:
            raise
        err.print(styled("error:", "red", f" {failure.message}"), highlight=False, soft_wrap=True)
        sys.exit(failure.code)
