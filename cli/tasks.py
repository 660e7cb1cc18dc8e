"""`loopline tasks list|show|files|context`."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Annotated, Any

import typer

from loopline.cli.context import fail, flag, opened, parse_now
from loopline.cli.help import App
from loopline.cli.output import out, print_json, print_rows, print_table, styled
from loopline.cli.task_goal import print_goal
from loopline.domain.status import TaskStatus
from loopline.domain.task_escalation import render_handoff
from loopline.domain.task_types import TASK_TYPES
from loopline.domain.timeutil import format_time, parse_time
from loopline.projections import task_memory
from loopline.projections.task_queries import find_tasks, list_tasks
from loopline.projections.task_view import task_view
from loopline.projections.timeline import task_trail

app = App(help="Tasks: status, loops, inbox, memory files, context for agent prompts.", no_args_is_help=True)

Json = Annotated[bool, flag("--json", "Print JSON instead of a table.")]
Tenant = Annotated[str | None, typer.Option("--tenant", help="Only this tenant.")]


@app.command("list")
def list_(
    json_: Json = False,
    tenant: Tenant = None,
    status: Annotated[TaskStatus | None, typer.Option(
        help=f"Only tasks with this status, in any case: {', '.join(TaskStatus)}.", case_sensitive=False, metavar="<status>"
    )] = None,
    outcome: Annotated[str | None, typer.Option(
        help="Only tasks closed with this outcome (recovered, opted_out, unresponsive, …).", metavar="<outcome>",
    )] = None,
    contact: Annotated[str | None, typer.Option(
        help="Only tasks with this contact, in any case.", metavar="<contact>",
    )] = None,
) -> None:
    """List tasks with their status, outcome, contact and counts."""
    if outcome is not None and outcome not in OUTCOME_CODES:
        fail(f"--outcome: no task type has the outcome {outcome!r}; the outcomes are {', '.join(sorted(OUTCOME_CODES))}")
    with opened() as system, system.projections.engine.connect() as conn:
        rows = list_tasks(conn, tenant=tenant, status=status, outcome=outcome, contact=contact)
    columns = ["tenant", "task_id", "title", "status", "outcome", "contact", "open_loops", "actions", "inbox", "expires_at"]
    print_rows("tasks", rows, columns, as_json=json_)


OUTCOME_CODES = frozenset(code for kind in TASK_TYPES.values() for code in kind.outcome_codes)


Now = Annotated[str, typer.Option(help="Time to count the days left at: an RFC 3339 time with a zone, or now.")]


@app.command("show")
def show(task_id: str, json_: Json = False, tenant: Tenant = None, now: Now = "now") -> None:
    """Show one task: its state, the escalation's handoff while it is with the owner, budgets, cadence position, next
    action, outcome, subtasks, conversation, loops and inbox."""
    moment = parse_now(now)
    with opened() as system, system.projections.engine.connect() as conn:
        aggregate_id, row = _one(find_tasks(conn, task_id, tenant), task_id, tenant, lambda found: found[1]["tenant"])
        task = task_view(conn, aggregate_id, row, task_trail(conn, task_id, row["tenant"]), moment)
    if json_:
        print_json(task)
        return
    for key in ("tenant", "task_id", "title", "status", "status_reason", "task_type", "created_at", "expires_at", "last_note"):
        beside = f" (outcome {task['outcome']})" if key == "status" and task["outcome"] else ""
        out.print(styled(key, "bold", f": {task[key]}{beside}"))
    if task["pause"]:
        pause = task["pause"]
        out.print(styled("paused", "bold", f": since {pause['since']} by {pause['by']} ({pause['reason']})"))
    if task["parent"]:
        out.print(styled("parent", "bold", f": {task['parent']['task_id']} ({task['parent']['requirement']} subtask)"))
    if task["escalation"]:
        out.print(styled("escalation", "bold", f": {task['escalation']['reason']}\n{render_handoff(task['escalation'])}"))
    if task["outreach"]:
        _print_outreach(task["outreach"])
    if task["subtasks"]:
        out.print(styled("its subtasks make it", "bold", f": {task['subtasks_derived']}"))
        print_table("subtasks", task["subtasks"], ["task_id", "title", "requirement", "status", "messages_used", "outcome"])
    print_table("conversation", task["conversation"], ["at", "author", "text"])
    print_table("loops", task["loops"], ["loop_id", "channel", "deadline", "if_unresolved", "resolved", "resolved_by"])
    print_table("inbox", task["inbox_items"], ["received_at", "type", "signal_id", "data"])
    print_table("notifications", task["notifications_sent"], ["at", "kind", "message"])
    print_goal(task["goal"])


def _print_outreach(plan: dict[str, Any]) -> None:
    """Budgets used and left, the cadence position, what comes next and when, and the outcome."""
    budget = plan["budget"]
    out.print(styled("execution", "bold", ": Loopline works this task (drafts, sends, follows the cadence, reads replies)"))
    out.print(styled("cadence", "bold", f": {plan['cadence']}, {plan['position']}"))
    for name in ("messages", "turns"):
        used = budget[name]
        out.print(styled(name, "bold", f": {used['used']} used, {used['left']} left of {used['budget']}"))
    if budget["days"]:
        days = budget["days"]
        out.print(styled("days", "bold", f": {days['used']} used, {days['left']} left of {days['budget']} (until {days['ends_at']})"))
    if plan["away"]:
        away = plan["away"]
        back = f"says back on {away['returns_on']}" if away["returns_on"] else "gives no return date, so a week"
        out.print(styled("away", "bold", f": until {away['until']}: an automatic reply ({away['recognised_by']}) "
                         f"{back}; the cadence resumes then"))
    step = plan["next_action"]
    if step:
        when = f"{step['at']}: " if step["at"] else ""
        out.print(styled("next action", "bold", f": {when}{step['what']}" + (f" ({step['reason']})" if step["reason"] else "")))
    else:
        out.print(styled("next action", "bold", ": none (waits for a reply)" if plan["outcome"] is None else ": none (closed)"))
    if plan["outcome"]:
        outcome = plan["outcome"]
        label = f" — {outcome['label']}" if outcome.get("label") else ""
        provisional = ", provisional" if outcome["provisional"] else ""
        out.print(styled("outcome", "bold", f": {outcome['code']}{label} ({outcome['kind']}{provisional})"))
        if outcome.get("next_step"):
            out.print(styled("your next step", "bold", f": {outcome['next_step']}"))
    out.print(styled("decisions", "bold", f": {plan['decisions']} (see `loopline audit`), deferred sends: {plan['deferrals']}"))


def _one(found: list, task_id: str, tenant: str | None, tenant_of) -> Any:
    """The single task a task id (and optional tenant) names, or a clear error."""
    if not found:
        fail(f"no task {task_id!r}{f' for tenant {tenant!r}' if tenant else ''}; see `loopline tasks list`", 1)
    if len(found) > 1:
        fail(f"task id {task_id!r} exists for several tenants ({', '.join(tenant_of(f) for f in found)}); pass --tenant")
    return found[0]


@app.command("files")
def files(
    task_id: str,
    path: Annotated[str | None, typer.Argument(help="A file (progress.md, log.md, inbox/…) or a folder (inbox/).")] = None,
    json_: Json = False,
    tenant: Tenant = None,
) -> None:
    """The task's memory folder (progress.md, log.md, context.json, inbox/, workflows/): list it, or print one file."""
    with opened() as system, system.projections.engine.connect() as conn:
        memory = _one(task_memory.find(conn, task_id, tenant), task_id, tenant, lambda found: found["tenant"])
        if path is not None and not path.endswith("/"):
            try:
                content = task_memory.read(conn, memory, path)
            except KeyError:
                fail(f"task {task_id} has no file {path!r}; list its files with `loopline tasks files {task_id}`", 1)
            if json_:
                print_json({"task_id": task_id, "tenant": memory["tenant"], "path": path, "content": content})
            else:
                print(content, end="" if content.endswith("\n") else "\n")  # a shell prompt never lands on the last line
            return
        entries = task_memory.listing(conn, memory)  # rendering every file: only when a listing is asked for
    if path is not None:
        entries = [entry for entry in entries if entry["path"].startswith(path)]
    if json_:
        print_json({"task_id": task_id, "tenant": memory["tenant"], "root": task_memory.root(memory),
                    "archived_at": memory["archived_at"], "files": entries})
    else:
        archived = f" (archived {memory['archived_at']})" if memory["archived_at"] else ""
        print_table(f"{task_memory.root(memory)}{path or ''}{archived}", entries, ["path", "kind", "size", "at"])


SOON = timedelta(hours=24)


@app.command("context")
def context(
    tenant: str,
    task: Annotated[str | None, typer.Option("--task", help="Also include this task's full progress.md.")] = None,
    now: Annotated[str, typer.Option(help="Time to judge deadlines at: an RFC 3339 time with a zone, or now.")] = "now",
    json_: Json = False,
) -> None:
    """What an agent prompt includes: the tenant's active tasks with status and expired or soon-expiring loops."""
    moment = parse_now(now)
    with opened() as system, system.projections.engine.connect() as conn:
        active = [_summary(row, moment) for row in task_memory.active_tasks(conn, tenant)]
        progress = None
        if task is not None:
            memory = _one(task_memory.find(conn, task, tenant), task, tenant, lambda found: found["tenant"])
            progress = task_memory.render_progress(memory["state"])
    result = {"tenant": tenant, "now": format_time(moment), "active_tasks": active}
    if task is not None:
        result["task"] = {"task_id": task, "progress_md": progress}
    if json_:
        print_json(result)
        return
    rows = [
        {**row, "expired": ", ".join(loop["loop_id"] for loop in row["expired_loops"]),
         "expiring_soon": ", ".join(loop["loop_id"] for loop in row["expiring_soon"])}
        for row in active
    ]
    print_table(f"active tasks of {tenant}", rows, ["task_id", "title", "status", "stalled", "expired", "expiring_soon", "next_wakeup"])
    if progress:
        out.print(progress)


def _summary(row: dict[str, Any], now: datetime) -> dict[str, Any]:
    """The lightweight line per task, as an agent's context reads it: title, status, and loops past or near their deadline."""
    state = row["state"]
    overdue, soon = [], []
    for loop_id, loop in sorted(state["waiting_on"].items(), key=lambda item: item[1]["deadline"]):
        deadline = parse_time(loop["deadline"])
        entry = {"loop_id": loop_id, "description": loop["description"], "deadline": loop["deadline"]}
        if deadline <= now:
            overdue.append({**entry, "expired_at": None})
        elif deadline <= now + SOON:
            soon.append(entry)
    return {
        "task_id": row["task_id"], "title": state["title"], "status": state["status"],
        "stalled": state["stalled_since"] is not None, "open_loops": len(state["waiting_on"]),
        "expired_loops": state["expired_loops"] + overdue, "expiring_soon": soon,
        "next_wakeup": min((w["at"] for w in state["wakeups"].values() if w["at"]), default=None),
    }
