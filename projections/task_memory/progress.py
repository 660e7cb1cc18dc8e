"""progress.md, context.json and description.md, rendered from the task's state document when read."""

from __future__ import annotations

import json
from typing import Any

from loopline.projections.task_memory.schema import CONVERSATION, DESCRIPTION

DESCRIPTION_SHOWN = 2_000  # characters of the description in progress.md
TEXT_SHOWN = 500  # characters of a summary, note, loop description or reason in progress.md


def render_context(state: dict[str, Any]) -> str:
    return json.dumps({
        "task_id": state["task_id"], "title": state["title"], "status": state["status"],
        "created_at": state["created_at"], "updated_at": state["updated_at"], "expires_at": state["expires_at"],
        "active_loop_ids": sorted(state["waiting_on"]), "owned_workflow_ids": sorted(state["workflows"]["outputs"]),
        "primary_conversation_id": state["primary_conversation_id"], "pending_wakeups": state["wakeups"],
        "stalled_since": state["stalled_since"], "context": state["context"],
    }, indent=2)


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
