"""The `task_memory` read model: each task's folder of seed 000 ("The VFS — Living Memory").

    progress.md     what has been done and what is next (read first on every wake-up); long texts
                    are cut short there, with a pointer to the file holding them whole
    description.md  the task's description as written, when it has one
    log.md          chronological history; past 500 lines the oldest 80% go into a log_summary
    context.json    structured state: status, active loop ids, workflows, conversation id
    conversation.md every message sent and received (seed 002 §8): who wrote it (agent, contact,
                    owner, system), when, and the text (`domain/conversation.py` says which events)
    inbox/          one file per signal stored in the task's inbox
    workflows/      workflow outputs of the last 7 days; older ones in workflows/archive/,
                    with one archive_summary per ISO week

Everything is rendered from the task's events (and its loops' registrations), so a rebuild
gives the same folder. Stored are a per-task state document, every log line, and the inbox and
workflow files; progress.md, context.json, log.md and the summaries are rendered when read.
Time in this read model is event time: workflow outputs rotate when a later event of the task
arrives, never by a clock. A completed, cancelled or expired task keeps its folder, archived.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import JSON, Column, Integer, String, Table, Text, func, literal, select
from sqlalchemy.engine import Connection

from loopline.domain import ids
from loopline.domain.conversation import turn_of
from loopline.domain.open_loop import OpenLoop
from loopline.domain.outreach import planned_touches
from loopline.domain.task import Task
from loopline.domain.timeutil import format_time, parse_time
from loopline.projections import writes
from loopline.projections.runner import metadata
from loopline.projections.timeline import DESCRIPTIONS

LOG_LIMIT = 500
LOG_COMPACT_SHARE = 0.8
WORKFLOW_INLINE = timedelta(days=7)
DONE_SHOWN = 10
DESCRIPTION_SHOWN = 2_000  # characters of the description in progress.md
TEXT_SHOWN = 500  # characters of a summary, note, loop description or reason in progress.md
DESCRIPTION = "description.md"
CONVERSATION = "conversation.md"
EXPIRED_SHOWN = 5
WORKFLOWS = "workflows/"
ARCHIVED_WORKFLOWS = "workflows/archive/"

memory_tasks = Table(
    "memory_tasks", metadata,
    Column("aggregate_id", String(36), primary_key=True),
    Column("tenant", String(200), nullable=False, index=True),
    Column("task_id", String(200), nullable=False, index=True),
    Column("archived_at", String(40)),
    Column("state", JSON, nullable=False),
)

memory_log = Table(
    "memory_log", metadata,
    Column("aggregate_id", String(36), primary_key=True),
    Column("seq", Integer, primary_key=True, autoincrement=False),
    Column("at", String(40), nullable=False),
    Column("event", String(64), nullable=False),
    Column("line", Text, nullable=False),
)

memory_turns = Table(
    "memory_turns", metadata,
    Column("aggregate_id", String(36), primary_key=True),
    Column("seq", Integer, primary_key=True, autoincrement=False),
    Column("at", String(40), nullable=False),
    Column("author", String(16), nullable=False),
    Column("text", Text, nullable=False),
)

memory_files = Table(
    "memory_files", metadata,
    Column("aggregate_id", String(36), primary_key=True),
    Column("path", String(400), primary_key=True),
    Column("kind", String(32), nullable=False),
    Column("at", String(40), nullable=False),
    Column("content", Text, nullable=False),
)

KEY_MOMENTS = {
    "Task.Created", "Task.Reviewed", "Task.GuidanceGiven", "Task.Escalated", "Task.Completed", "Task.Cancelled",
    "Task.Expired", "Task.ProgressNoted", "Task.StallFlagged", "Task.WokenUp", "Task.WaitEnded",
}


# --- projecting ----------------------------------------------------------------------------


def _load(conn: Connection, aggregate_id: str) -> dict[str, Any]:
    row = writes.row(conn, memory_tasks, aggregate_id)
    assert row is not None, f"task {aggregate_id} has events but no Created event was projected"
    return row["state"]


def _save(conn: Connection, aggregate_id: str, state: dict[str, Any], **columns: Any) -> None:
    writes.update(conn, memory_tasks, aggregate_id, set={"state": state, **columns})


def _log(conn: Connection, aggregate_id: str, state: dict[str, Any], event: Any) -> None:
    """Appends the event's line to log.md, compacting the oldest 80% into a summary past 500 lines."""
    summary, reason = DESCRIPTIONS[type(event)](event)
    at = format_time(event.timestamp)
    log = state["log"]
    log["lines"] += 1
    writes.insert(conn, memory_log, {
        "aggregate_id": aggregate_id, "seq": log["lines"], "at": at, "event": type(event).__qualname__,
        "line": f"- {at} {summary}" + (f" ({reason})" if reason else ""),
    })
    live = log["lines"] - log["start"] + 1
    if live > LOG_LIMIT:
        compacted = int(live * LOG_COMPACT_SHARE)
        day = at[:10]
        same_day = sum(1 for s in log["summaries"] if s["name"].startswith(f"log_summary_{day}"))
        name = f"log_summary_{day}{f'_{same_day + 1}' if same_day else ''}.md"
        log["summaries"].append({"name": name, "from": log["start"], "to": log["start"] + compacted - 1, "at": at})
        log["start"] += compacted


def _rotate_workflows(conn: Connection, aggregate_id: str, state: dict[str, Any], now: datetime) -> None:
    """Moves workflow outputs older than 7 days (event time) into workflows/archive/."""
    oldest = state["workflows"]["oldest_inline"]
    cutoff = format_time(now - WORKFLOW_INLINE)
    if oldest is None or oldest >= cutoff:
        return
    mine = memory_files.c.aggregate_id == aggregate_id
    writes.execute(conn, memory_files, memory_files.update().where(
        mine, memory_files.c.kind == "workflow", memory_files.c.at < cutoff
    ).values(
        path=literal(ARCHIVED_WORKFLOWS) + func.substr(memory_files.c.path, len(WORKFLOWS) + 1), kind="workflow_archived"
    ))
    state["workflows"]["oldest_inline"] = conn.execute(
        select(func.min(memory_files.c.at)).where(mine, memory_files.c.kind == "workflow")
    ).scalar()


def _handle(change):
    """Wraps a state change: load the task's state, change it, log the event, rotate, save."""

    def handler(conn: Connection, event: Any, position: int) -> None:
        aggregate_id = _owner(event)
        state = _load(conn, aggregate_id)
        columns = change(conn, aggregate_id, state, event) or {}
        _said(conn, aggregate_id, state, event)
        state["updated_at"] = format_time(event.timestamp)
        _log(conn, aggregate_id, state, event)
        _rotate_workflows(conn, aggregate_id, state, event.timestamp)
        _save(conn, aggregate_id, state, **columns)

    return handler


def _owner(event: Any) -> str:
    if isinstance(event, OpenLoop.Registered):
        return str(ids.task_id(event.tenant, event.task_ref))
    return str(event.originator_id)


def prefetch(conn: Connection, events: list[Any]) -> None:
    """The state of every task the batch touches, in a few queries rather than one per task."""
    handled = tuple(cls for cls in handlers if cls is not Task.Created)
    created = {str(event.originator_id) for event in events if isinstance(event, Task.Created)}  # new this batch
    owners = (_owner(event) for event in events if isinstance(event, handled))
    writes.preload(conn, memory_tasks, [owner for owner in owners if owner not in created])


def _created(conn: Connection, event: Task.Created, position: int) -> None:
    aggregate_id = str(event.originator_id)
    at = format_time(event.timestamp)
    state = {
        "task_id": event.ref, "title": event.title, "description": event.description, "task_type": event.task_type,
        "status": event.status, "created_at": at, "updated_at": at, "expires_at": format_time(event.expires_at),
        "contact": event.contact, "primary_conversation_id": event.context.get("conversation_id"),
        "context": event.context, "done": [], "actions": 0, "notes": None, "waiting_on": {}, "expired_loops": [],
        "wakeups": {}, "inbox": {"count": 0, "latest": None}, "workflows": {"outputs": {}, "oldest_inline": None},
        "stalled_since": None, "escalation": None, "outcome": None, "turns": 0, "outreach": None,
        "log": {"lines": 0, "start": 1, "summaries": []},
    }
    _log(conn, aggregate_id, state, event)
    writes.insert(conn, memory_tasks, {
        "aggregate_id": aggregate_id, "tenant": event.tenant, "task_id": event.ref, "archived_at": None, "state": state,
    })


def _moved(state: dict[str, Any], event: Any) -> None:
    if hasattr(event, "status"):
        state["status"] = str(event.status)
    state["stalled_since"] = None


def _action(conn: Connection, aggregate_id: str, state: dict[str, Any], event: Task.ActionRecorded) -> None:
    state["actions"] += 1
    state["done"] = [*state["done"], {
        "at": format_time(event.timestamp), "action": event.action, "summary": event.summary, "by": event.performed_by,
    }][-DONE_SHOWN:]
    _moved(state, event)


def _loop_registered(conn: Connection, aggregate_id: str, state: dict[str, Any], event: OpenLoop.Registered) -> None:
    state["waiting_on"][event.ref] = {
        "description": event.description, "channel": event.channel, "deadline": format_time(event.deadline),
        "if_unresolved": event.if_unresolved, "origin": event.origin,
    }


def _loop_closed(conn: Connection, aggregate_id: str, state: dict[str, Any], event: Task.LoopClosed) -> None:
    loop = state["waiting_on"].pop(event.loop_ref, None)
    if event.resolved_by == "expired" and loop is not None:
        state["expired_loops"] = [*state["expired_loops"], {
            "loop_id": event.loop_ref, "description": loop["description"], "deadline": loop["deadline"],
            "expired_at": format_time(event.timestamp),
        }][-EXPIRED_SHOWN:]


def _signal(conn: Connection, aggregate_id: str, state: dict[str, Any], event: Task.SignalReceived) -> None:
    for loop_ref in event.resolved_loops:
        state["waiting_on"].pop(loop_ref, None)
    state["inbox"]["count"] += 1
    number = state["inbox"]["count"]
    path = f"inbox/{number:04d}_{_safe(event.signal_ref)}.json"
    state["inbox"]["latest"] = {"path": path, "type": event.signal_type, "at": format_time(event.timestamp)}
    writes.insert(conn, memory_files, {
        "aggregate_id": aggregate_id, "path": path, "kind": "inbox", "at": format_time(event.timestamp),
        "content": json.dumps({
            "signal_id": event.signal_ref, "type": event.signal_type, "received_at": format_time(event.timestamp),
            "resolved_loops": event.resolved_loops, "data": event.data,
        }, indent=2, sort_keys=True),
    })
    _moved(state, event)


def _noted(conn: Connection, aggregate_id: str, state: dict[str, Any], event: Task.ProgressNoted) -> None:
    state["notes"] = {"at": format_time(event.timestamp), "text": event.notes}
    _moved(state, event)


def _status(outcome_field: str | None = None, status: str | None = None, archive: bool = False):
    def change(conn: Connection, aggregate_id: str, state: dict[str, Any], event: Any) -> dict[str, Any] | None:
        _moved(state, event)
        if status:
            state["status"] = status
        if isinstance(event, Task.Escalated):
            state["escalation"] = event.reason
        if isinstance(event, Task.GuidanceGiven):
            state["escalation"] = None
        if outcome_field:
            state["outcome"] = getattr(event, outcome_field)
        return {"archived_at": format_time(event.timestamp)} if archive else None

    return change


def _reviewed(conn: Connection, aggregate_id: str, state: dict[str, Any], event: Task.Reviewed) -> dict[str, Any] | None:
    _moved(state, event)
    if event.status == "cancelled":
        state["outcome"] = event.reason
        return {"archived_at": format_time(event.timestamp)}
    return None


def _workflow_output(conn: Connection, aggregate_id: str, state: dict[str, Any], event: Task.WorkflowOutputRecorded) -> None:
    outputs = state["workflows"]["outputs"]
    outputs[event.workflow] = outputs.get(event.workflow, 0) + 1
    at = format_time(event.timestamp)
    # Rotation (after this change) moves files older than 7 days; this one is newer than all of them.
    if state["workflows"]["oldest_inline"] is None:
        state["workflows"]["oldest_inline"] = at
    content = event.output if isinstance(event.output, str) else json.dumps(event.output, indent=2, sort_keys=True)
    writes.insert(conn, memory_files, {
        "aggregate_id": aggregate_id, "path": WORKFLOWS + event.name, "kind": "workflow", "at": at, "content": content,
    })
    state["stalled_since"] = None


def _wakeup_scheduled(conn: Connection, aggregate_id: str, state: dict[str, Any], event: Task.WakeupScheduled) -> None:
    state["wakeups"][event.wake_ref] = {"at": format_time(event.at), "loop_id": event.loop_ref, "reason": event.reason}


def _woken(conn: Connection, aggregate_id: str, state: dict[str, Any], event: Task.WokenUp) -> None:
    state["wakeups"].pop(event.wake_ref, None)
    if event.cause == "escalation":  # as in Task.WokenUp: a nudge is not activity
        state["status"] = str(event.status)
    else:
        _moved(state, event)


def _stalled(conn: Connection, aggregate_id: str, state: dict[str, Any], event: Task.StallFlagged) -> None:
    state["stalled_since"] = format_time(event.timestamp)


def _only_logged(conn: Connection, aggregate_id: str, state: dict[str, Any], event: Any) -> None:
    return None


def _said(conn: Connection, aggregate_id: str, state: dict[str, Any], event: Any) -> None:
    """The event's message in the conversation (seed 002 §8), by the rules prompts read it with."""
    turn = turn_of(event)
    if turn is None:
        return
    state["turns"] += 1
    writes.insert(conn, memory_turns, {
        "aggregate_id": aggregate_id, "seq": state["turns"], "at": format_time(turn.at), "author": turn.author,
        "text": turn.text,
    })


def _planned(conn: Connection, aggregate_id: str, state: dict[str, Any], event: Task.OutreachPlanned) -> None:
    state["outreach"] = {
        "cadence": event.cadence, "touches": planned_touches(event.budget_messages, event.intervals), "touch": 0,
        "messages": event.budget_messages, "messages_used": 0, "ends_at": format_time(event.ends_at), "outcome": None,
    }


def _touch_sent(conn: Connection, aggregate_id: str, state: dict[str, Any], event: Task.TouchSent) -> None:
    state["outreach"]["touch"] = event.touch
    state["outreach"]["messages_used"] = event.messages_used


def _outcome_set(conn: Connection, aggregate_id: str, state: dict[str, Any], event: Task.OutcomeSet) -> None:
    state["outreach"]["outcome"] = {"code": event.code, "kind": event.kind, "provisional": event.provisional}


def _context_merged(conn: Connection, aggregate_id: str, state: dict[str, Any], event: Task.ContextMerged) -> None:
    state["context"] = {**state["context"], **event.context}


def _went_dormant(conn: Connection, aggregate_id: str, state: dict[str, Any], event: Task.WentDormant) -> None:
    _moved(state, event)


def _safe(ref: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in ref)[:120]


name = "task_memory"
cost = 5.5  # seconds to rebuild bench/rebuild.py's store alone, to share rebuild work evenly
tables = (memory_tasks, memory_log, memory_turns, memory_files)
handlers = {
    Task.Created: _created,
    Task.ActionRecorded: _handle(_action),
    OpenLoop.Registered: _handle(_loop_registered),
    Task.LoopClosed: _handle(_loop_closed),
    Task.SignalReceived: _handle(_signal),
    Task.ProgressNoted: _handle(_noted),
    Task.UserNotified: _handle(_only_logged),
    Task.Reviewed: _handle(_reviewed),
    Task.GuidanceGiven: _handle(_status()),
    Task.Escalated: _handle(_status(status="escalated")),
    Task.Completed: _handle(_status("summary", "completed", archive=True)),
    Task.Cancelled: _handle(_status("reason", "cancelled", archive=True)),
    Task.Expired: _handle(_status("reason", "expired", archive=True)),
    Task.WaitEnded: _handle(_status()),
    Task.WorkflowOutputRecorded: _handle(_workflow_output),
    Task.WakeupScheduled: _handle(_wakeup_scheduled),
    Task.WokenUp: _handle(_woken),
    Task.StallFlagged: _handle(_stalled),
    Task.OutreachPlanned: _handle(_planned),
    Task.ContextMerged: _handle(_context_merged),
    Task.TouchSent: _handle(_touch_sent),
    Task.OutcomeSet: _handle(_outcome_set),
    Task.WentDormant: _handle(_went_dormant),
    Task.DecisionRequested: _handle(_only_logged),
    Task.DecisionRecorded: _handle(_only_logged),
    Task.DecisionFailed: _handle(_only_logged),
    Task.SendDeferred: _handle(_only_logged),
    Task.NextTouchScheduled: _handle(_only_logged),
}


# --- reading -------------------------------------------------------------------------------


def find(conn: Connection, task_id: str, tenant: str | None = None) -> list[dict[str, Any]]:
    query = select(memory_tasks).where(memory_tasks.c.task_id == task_id)
    if tenant:
        query = query.where(memory_tasks.c.tenant == tenant)
    return [dict(row._mapping) for row in conn.execute(query)]


def root(memory: dict[str, Any]) -> str:
    """Where the folder lives: under tasks/archive/ once the task is closed (seed 000 lifecycle)."""
    task_id = memory["task_id"]
    return f"tasks/archive/{task_id}/" if memory["archived_at"] else f"tasks/{task_id}/"


def listing(conn: Connection, memory: dict[str, Any]) -> list[dict[str, Any]]:
    """Every file of the folder: path, kind, size in bytes and when it last changed."""
    state = memory["state"]
    rendered = {
        "progress.md": ("progress", render_progress(state)),
        "log.md": ("log", render_log(conn, memory)),
        "context.json": ("context", render_context(state)),
    }
    if state["description"]:
        rendered[DESCRIPTION] = ("description", render_description(state))
    if state["turns"]:
        rendered[CONVERSATION] = ("conversation", render_conversation(conn, memory))
    entries = [{"path": p, "kind": k, "size": len(c.encode()), "at": state["updated_at"]} for p, (k, c) in rendered.items()]
    for summary in state["log"]["summaries"]:
        entries.append({
            "path": summary["name"], "kind": "log_summary", "at": summary["at"],
            "size": len(render_log_summary(conn, memory, summary).encode()),
        })
    stored = conn.execute(
        select(memory_files.c.path, memory_files.c.kind, memory_files.c.at, func.length(memory_files.c.content))
        .where(memory_files.c.aggregate_id == memory["aggregate_id"]).order_by(memory_files.c.path)
    ).all()
    weeks: dict[str, str] = {}
    for path, kind, at, size in stored:
        entries.append({"path": path, "kind": kind, "size": size, "at": at})
        if kind == "workflow_archived":
            weeks[_week(at)] = max(weeks.get(_week(at), at), at)
    for week, at in sorted(weeks.items()):
        path = f"{ARCHIVED_WORKFLOWS}archive_summary_{week}.md"
        entries.append({"path": path, "kind": "archive_summary", "at": at, "size": len(read(conn, memory, path).encode())})
    return sorted(entries, key=lambda entry: (entry["path"].count("/"), entry["path"]))


def read(conn: Connection, memory: dict[str, Any], path: str) -> str:
    """One file's content; raises KeyError naming the path when the folder has no such file."""
    state = memory["state"]
    if path == "progress.md":
        return render_progress(state)
    if path == "context.json":
        return render_context(state)
    if path == "log.md":
        return render_log(conn, memory)
    if path == DESCRIPTION and state["description"]:
        return render_description(state)
    if path == CONVERSATION and state["turns"]:
        return render_conversation(conn, memory)
    for summary in state["log"]["summaries"]:
        if summary["name"] == path:
            return render_log_summary(conn, memory, summary)
    if path.startswith(f"{ARCHIVED_WORKFLOWS}archive_summary_") and path.endswith(".md"):
        week = path.removeprefix(f"{ARCHIVED_WORKFLOWS}archive_summary_").removesuffix(".md")
        return _render_week(conn, memory, week)
    content = conn.execute(
        select(memory_files.c.content).where(memory_files.c.aggregate_id == memory["aggregate_id"], memory_files.c.path == path)
    ).scalar()
    if content is None:
        raise KeyError(path)
    return content


def render_context(state: dict[str, Any]) -> str:
    return json.dumps({
        "task_id": state["task_id"], "title": state["title"], "status": state["status"],
        "created_at": state["created_at"], "updated_at": state["updated_at"], "expires_at": state["expires_at"],
        "active_loop_ids": sorted(state["waiting_on"]), "owned_workflow_ids": sorted(state["workflows"]["outputs"]),
        "primary_conversation_id": state["primary_conversation_id"], "pending_wakeups": state["wakeups"],
        "stalled_since": state["stalled_since"], "context": state["context"],
    }, indent=2)


def conversation(conn: Connection, aggregate_id: str) -> list[dict[str, Any]]:
    """Every message of the task, oldest first: `at`, `author` (agent, contact, owner, system) and `text`."""
    rows = conn.execute(
        select(memory_turns.c.at, memory_turns.c.author, memory_turns.c.text)
        .where(memory_turns.c.aggregate_id == aggregate_id).order_by(memory_turns.c.seq)
    )
    return [dict(row._mapping) for row in rows]


def render_conversation(conn: Connection, memory: dict[str, Any]) -> str:
    lines = [f"# Conversation — {memory['state']['title']}", ""]
    for turn in conversation(conn, memory["aggregate_id"]):
        lines += [f"## {turn['at']} · {turn['author']}", "", turn["text"], ""]
    return "\n".join(lines)


def render_description(state: dict[str, Any]) -> str:
    return state["description"] if state["description"].endswith("\n") else state["description"] + "\n"


def _clipped(text: str, limit: int, whole_in: str) -> str:
    """The text, or its start and where the whole of it is: an agent reads progress.md first, on every wake-up."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… [cut at {limit:,} of {len(text):,} characters; the whole text is in {whole_in}]"


def render_progress(state: dict[str, Any]) -> str:
    log = f"log.md and `loopline audit {state['task_id']}`"  # the audit trail: log.md may have been summarised
    lines = [f"# {state['title']}", "", f"Status: **{state['status']}** · task {state['task_id']} · created "
             f"{state['created_at']} · last change {state['updated_at']}"]
    if state["expires_at"]:
        lines.append(f"Expires: {state['expires_at']}")
    if state["stalled_since"]:
        lines.append(f"Stalled: flagged {state['stalled_since']} (no activity)")
    if state["escalation"]:
        lines.append(f"Escalated: {_clipped(state['escalation'], TEXT_SHOWN, log)}")
    if state["outcome"]:
        lines.append(f"Outcome: {_clipped(state['outcome'], TEXT_SHOWN, log)}")
    outreach = state["outreach"]
    if outreach:
        lines.append(
            f"Outreach: cadence {outreach['cadence']}, touch {outreach['touch']} of {outreach['touches']}, "
            f"{outreach['messages_used']} of {outreach['messages']} message(s) used"
            + (f", until {outreach['ends_at']}" if outreach["ends_at"] else "")
            + (f"; outcome {outreach['outcome']['code']} ({outreach['outcome']['kind']})" if outreach["outcome"] else "")
            + (f"; the conversation is in {CONVERSATION}" if state["turns"] else "")
        )
    if state["description"]:
        lines += ["", _clipped(state["description"], DESCRIPTION_SHOWN, DESCRIPTION)]
    lines += ["", "## Done"]
    lines += [f"- {d['at']} {d['action']}: {_clipped(d['summary'], TEXT_SHOWN, log)}" for d in state["done"]] or ["- nothing yet"]
    if state["actions"] > len(state["done"]):
        lines.append(f"- … {state['actions'] - len(state['done'])} earlier action(s) in log.md")
    lines += ["", "## Next: waiting on"]
    lines += [
        f"- {ref}: {_clipped(loop['description'], TEXT_SHOWN, log)} ({loop['channel']}) by {loop['deadline']};"
        f" if unresolved: {loop['if_unresolved']}"
        for ref, loop in sorted(state["waiting_on"].items(), key=lambda item: item[1]["deadline"])
    ] or ["- nothing"]
    if state["wakeups"]:
        lines += ["", "## Wake-ups"]
        for ref, wakeup in state["wakeups"].items():
            parts = ([f"at {wakeup['at']}"] if wakeup["at"] else []) + ([f"when loop {wakeup['loop_id']} matches"] if wakeup["loop_id"] else [])
            lines.append(f"- {ref}: {' or '.join(parts)} ({_clipped(wakeup['reason'], TEXT_SHOWN, log)})")
    if state["expired_loops"]:
        lines += ["", "## Expired"]
        lines += [
            f"- {e['loop_id']}: {_clipped(e['description'], TEXT_SHOWN, log)} (deadline {e['deadline']})"
            for e in state["expired_loops"]
        ]
    if state["notes"]:
        lines += ["", "## Latest note", f"{state['notes']['at']}: {_clipped(state['notes']['text'], TEXT_SHOWN, log)}"]
    inbox = state["inbox"]
    if inbox["count"]:
        latest = inbox["latest"]
        lines += ["", "## Inbox", f"{inbox['count']} signal(s); latest {latest['type']} at {latest['at']} ({latest['path']})"]
    if state["workflows"]["outputs"]:
        lines += ["", "## Workflows"]
        lines += [f"- {name}: {count} output(s)" for name, count in sorted(state["workflows"]["outputs"].items())]
    return "\n".join(lines) + "\n"


def _lines(conn: Connection, aggregate_id: str, first: int, last: int | None = None) -> list[Any]:
    query = select(memory_log).where(memory_log.c.aggregate_id == aggregate_id, memory_log.c.seq >= first)
    if last is not None:
        query = query.where(memory_log.c.seq <= last)
    return conn.execute(query.order_by(memory_log.c.seq)).all()


def render_log(conn: Connection, memory: dict[str, Any]) -> str:
    state = memory["state"]
    log = state["log"]
    lines = [f"# Log — {state['title']}", ""]
    if log["summaries"]:
        lines.append("Earlier entries, summarised:")
        lines += [f"* {s['name']} (entries {s['from']}–{s['to']})" for s in log["summaries"]]
        lines.append("")
    lines += [row.line for row in _lines(conn, memory["aggregate_id"], log["start"])]
    return "\n".join(lines) + "\n"


def render_log_summary(conn: Connection, memory: dict[str, Any], summary: dict[str, Any]) -> str:
    rows = _lines(conn, memory["aggregate_id"], summary["from"], summary["to"])
    counts = Counter(row.event for row in rows)
    lines = [
        f"# Log summary — {memory['state']['title']}", "",
        f"Entries {summary['from']}–{summary['to']} ({rows[0].at} → {rows[-1].at}), compacted {summary['at']}.", "",
        "## What happened",
    ]
    lines += [f"- {event}: {count}" for event, count in sorted(counts.items())]
    moments = [row.line for row in rows if row.event in KEY_MOMENTS]
    if moments:
        lines += ["", "## Key moments", *moments[-20:]]
    lines += ["", f"The full history stays in the audit trail: `loopline audit {memory['task_id']}`."]
    return "\n".join(lines) + "\n"


def _week(at: str) -> str:
    year, week, _ = parse_time(at).isocalendar()
    return f"{year}-W{week:02d}"


def _render_week(conn: Connection, memory: dict[str, Any], week: str) -> str:
    rows = conn.execute(
        select(memory_files.c.path, memory_files.c.at).where(
            memory_files.c.aggregate_id == memory["aggregate_id"], memory_files.c.kind == "workflow_archived"
        ).order_by(memory_files.c.at)
    ).all()
    files = [row for row in rows if _week(row.at) == week]
    if not files:
        raise KeyError(f"{ARCHIVED_WORKFLOWS}archive_summary_{week}.md")
    per_workflow: dict[str, list[str]] = defaultdict(list)
    for row in files:
        per_workflow[row.path.removeprefix(ARCHIVED_WORKFLOWS).rsplit("_", 2)[0]].append(row.at)
    lines = [f"# Workflow outputs of {week} (archived)", ""]
    lines += [f"- {workflow}: {len(times)} output(s), {times[0]} → {times[-1]}" for workflow, times in sorted(per_workflow.items())]
    lines += ["", "Files:", *[f"- {row.path}" for row in files]]
    return "\n".join(lines) + "\n"


def active_tasks(conn: Connection, tenant: str) -> list[dict[str, Any]]:
    rows = conn.execute(
        select(memory_tasks).where(memory_tasks.c.tenant == tenant, memory_tasks.c.archived_at.is_(None))
        .order_by(memory_tasks.c.task_id)
    )
    return [dict(row._mapping) for row in rows]
