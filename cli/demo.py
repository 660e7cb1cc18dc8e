"""`loopline demo`: what Loopline does for both kinds of user, on the embedded default with simulated time: an
assistant's meeting-scheduling flow, then a gym's month worked by the agent and its scorecard."""

from __future__ import annotations

import json
import tempfile
import time
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.text import Text

from loopline.adapters.config import Settings
from loopline.adapters.messages import parse_message
from loopline.cli.demo_gym import GYM, GYM_MONTH, MONTH, Steps
from loopline.cli.output import out, print_table, styled
from loopline.cli.scorecard import print_scorecard
from loopline.domain.periods import parse_period
from loopline.domain.timeutil import parse_time
from loopline.projections.open_loops import list_loops
from loopline.projections.proactive_runs import list_runs
from loopline.projections.scorecard_numbers import scorecard
from loopline.projections.task_queries import list_tasks
from loopline.projections.timeline import timeline
from loopline.runtime.bootstrap import build
from loopline.runtime.system import System

TENANT = "user_xyz"


def _command(ref: str, type_: str, at: str, **data: Any) -> dict[str, Any]:
    return {"kind": "command", "id": ref, "type": type_, "tenant": TENANT, "at": at, "data": data}


FLOW_1: Steps = [
    ("User: \"Schedule a meeting with Rahul\" — the agent creates a task and emails Rahul", [
        _command("msg-1", "task.create", "2026-03-13T10:00:00Z", task_id="task_abc", title="Schedule meeting with Rahul",
                 task_type="meeting_scheduling", contact="rahul@company.com", context={"conversation_id": "conv_123"}),
        _command("msg-2", "action.record", "2026-03-13T10:00:00Z", task_id="task_abc", action="send_email",
                 to="rahul@company.com", thread_id="gmail_thread_xyz", subject="Meeting next week?",
                 summary="Sent scheduling email to Rahul at 10am"),
    ]),
    ("One day later: the scheduler runs; nothing is overdue yet", "2026-03-14T10:00:00Z"),
    ("Three days pass with no reply: the maintenance scan acts", "2026-03-16T10:00:01Z"),
    ("The scan runs again at the same time: nothing happens twice", "2026-03-16T10:00:01Z"),
    ("Rahul replies in the thread", [
        {"kind": "signal", "id": "gmail-evt-77", "type": "email.received", "tenant": TENANT, "at": "2026-03-17T09:12:00Z",
         "data": {"sender": "Rahul@company.com", "thread_id": "gmail_thread_xyz", "subject": "Re: Meeting next week?",
                  "body": "Thursday 3pm or Friday 2pm works."}},
    ]),
    ("The agent books Thursday 3pm and completes the task", [
        _command("msg-3", "task.complete", "2026-03-17T09:20:00Z", task_id="task_abc",
                 summary="Meeting booked with Rahul for Thursday 3pm"),
    ]),
]


def demo(
    home: Annotated[Path | None, typer.Option(help="Keep the demo's files here (default: a temporary directory, removed at the end).")] = None,
) -> None:
    """Play a meeting-scheduling flow (email, no reply, follow-up, reply), then a gym's month (touches, replies, an
    opt-out, a review approved, outcomes observed), with simulated time, and print what happened and the scorecard."""
    started = time.monotonic()
    if home is not None:
        _play(home)
        out.print(f"\nfiles in {home}; demo took {time.monotonic() - started:.1f}s", style="dim")
        return
    with tempfile.TemporaryDirectory(prefix="loopline-demo-") as scratch:
        _play(Path(scratch))
    out.print(f"\ndemo took {time.monotonic() - started:.1f}s; its files are removed (keep them with --home DIR)", style="dim")


def _play(home: Path) -> None:
    system = build(Settings.load({"LOOPLINE_HOME": str(home)}, config_file=home / "loopline.toml"))
    try:
        shown = _play_steps(system, FLOW_1, 1, 0)
        _print_state(system)
        out.rule(styled("An outreach agent for a gym: a month of it", "bold"))
        _play_steps(system, GYM_MONTH, len(FLOW_1) + 1, shown)
        out.rule(styled(f"The gym's scorecard for {MONTH}", "bold"))
        with system.projections.engine.connect() as conn:
            card = scorecard(conn, GYM, parse_period(MONTH))
        del card["events"]  # `loopline scorecard --explain` lists them
        print_scorecard(card)
    finally:
        system.close()


def _play_steps(system: System, steps: Steps, number: int, shown: int) -> int:
    """Each step narrated, numbered from `number`, then the timeline rows after position `shown` it added."""
    for number, (narration, step) in enumerate(steps, start=number):
        out.rule(styled(f"{number}. {narration}", "bold"))
        if isinstance(step, str):
            out.print(f"tick --now {step}: {system.tick(parse_time(step)).summary()}")
        else:
            for message in step:
                out.print(f"publish {json.dumps(message)}", highlight=False, soft_wrap=True)
            system.log.append([parse_message(json.dumps(m)) for m in step], "demo")
        system.drain()
        shown = _print_new_timeline(system, shown)
    return shown


def _print_new_timeline(system: System, after: int) -> int:
    with system.projections.engine.connect() as conn:
        rows = conn.execute(timeline.select().where(timeline.c.position > after).order_by(timeline.c.position)).all()
    for row in rows:
        if row.event.startswith("InboundMessage"):
            continue
        reason = (f"  ({row.reason})", "dim") if row.reason else ""
        out.print(Text.assemble(f"  {row.at}  ", (row.subject, "cyan"), f"  {row.summary}", reason))
    return rows[-1].position if rows else after


def _print_state(system: System) -> None:
    out.rule(styled("Read models after the meeting flow", "bold"))
    with system.projections.engine.connect() as conn:
        print_table("tasks", list_tasks(conn), ["task_id", "title", "status", "open_loops", "actions", "inbox", "notifications"])
        print_table("loops", list_loops(conn), ["loop_id", "channel", "deadline", "resolved", "resolved_by"])
        print_table("proactive runs", list_runs(conn), ["tenant", "runs", "last_run_summary", "next_run_at"])
