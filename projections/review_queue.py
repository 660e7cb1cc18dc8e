"""Everything waiting for the owner (seed 004 §6), oldest first, each with what to decide it with: tasks pending review
or escalated (the last message, the draft, the escalation's handoff), proposals that survived debate, open escalation
questions (the options), and free-text answers kept for review. `loopline review list` prints these rows and the
dashboard's first screen shows them."""

from __future__ import annotations

from typing import Any

from sqlalchemy.engine import Connection

from loopline.domain import ids
from loopline.domain.proposal_notice import FLAGS
from loopline.domain.question_ladder import lettered
from loopline.domain.status import TaskStatus
from loopline.projections import task_memory
from loopline.projections.proposals import list_proposals
from loopline.projections.questions import answers_for_review, open_questions
from loopline.projections.task_queries import list_tasks
from loopline.projections.timeline import task_trail

WAITING_TASKS = {
    TaskStatus.PENDING_REVIEW: "publish task.approve or task.reject",
    TaskStatus.ESCALATED: "publish task.guidance, task.reply, task.takeover or task.cancel",
}
"""The task statuses that wait for the owner, and the commands that decide them."""


def waiting(conn: Connection, tenant: str | None) -> list[dict[str, Any]]:
    """What waits for the owner of `tenant` (None: every tenant), oldest first; a task's `context` is its papers
    (`task_papers`), a question's or an answer's its options in one line."""
    rows = [task_item(row, decide, task_papers(conn, row)) for status, decide in WAITING_TASKS.items()
            for row in list_tasks(conn, tenant=tenant, status=status)]
    rows += [proposal_item(row) for row in list_proposals(conn, tenant)]
    rows += [question_item(row) for row in open_questions(conn, tenant)]
    rows += [answer_item(row) for row in answers_for_review(conn, tenant)]
    rows.sort(key=lambda row: (row["since"], row["kind"], row["id"]))
    return rows


def task_item(row: dict[str, Any], decide: str, context: dict[str, Any]) -> dict[str, Any]:
    return {"kind": "task", "tenant": row["tenant"], "id": row["task_id"], "what": row["title"],
            "why": row.get("status_reason") or row["status"], "context": context, "since": row["updated_at"],
            "decide": decide}


def question_item(row: dict[str, Any]) -> dict[str, Any]:
    return {"kind": "question", "tenant": row["tenant"], "id": row["question_id"], "what": row["question"],
            "why": question_why(row), "context": question_context(row), "since": row["asked_at"],
            "decide": "publish question.answer", "task_id": row["task_id"],
            "options": row["options"], "urgency": row["urgency"], "paused": row["paused"]}


def proposal_item(row: dict[str, Any]) -> dict[str, Any]:
    flagged = f"; {FLAGS[row['flag']]}" if row["flag"] in FLAGS else ""
    shown = f", shown in {row['batch_ref']}" if row["batch_ref"] else ""
    return {"kind": "proposal", "tenant": row["tenant"], "id": row["proposal_id"], "what": row["title"],
            "why": f"{row['summary']} ({row['impact']} impact{shown}{flagged})", "since": row["updated_at"],
            "decide": "review approve, or review reject --type never|not_now|bad_approach", "theme": row["theme"]}


def answer_item(row: dict[str, Any]) -> dict[str, Any]:
    return {"kind": "answer", "tenant": row["tenant"], "id": row["question_id"], "what": row["answer_text"],
            "why": f"matched none of the options of: {row['question']}", "context": question_context(row),
            "since": row["answered_at"],
            "decide": "read it; no command needed", "task_id": row["task_id"], "options": row["options"]}


def task_papers(conn: Connection, row: dict[str, Any]) -> dict[str, Any]:
    """What the owner decides a waiting task with: its status, the last turn of its conversation and the contact's
    last message, the latest draft a notice put before the owner, and while escalated the handoff recorded as it
    entered `escalated`."""
    turns = task_memory.conversation(conn, str(ids.task_id(row["tenant"], row["task_id"])))
    trail = task_trail(conn, row["task_id"], row["tenant"])
    drafts = [entry["payload"]["draft"] for entry in trail
              if entry["event"] == "Task.UserNotified" and entry["payload"].get("draft")]
    handoffs = [entry["payload"] for entry in trail if entry["event"] == "Task.EscalationContextRecorded"]
    escalated = row["status"] == TaskStatus.ESCALATED
    said = [turn for turn in turns if turn["author"] == "contact"]
    return {"status": row["status"], "last": turns[-1] if turns else None, "contact_said": said[-1] if said else None,
            "draft": drafts[-1] if drafts else None,
            "escalation": handoffs[-1] if handoffs and escalated else None}


def question_why(row: dict[str, Any]) -> str:
    """Who is stuck on what, and which tasks wait for the answer: the task it was asked on, then the downstream ones
    (`blocked` counts only those, so a question on one task alone blocks that task, not none)."""
    waiting_tasks = [row["task_id"]] if row["task_id"] else []
    waiting_tasks += [f"{row['blocked']} downstream task(s)"] if row["blocked"] or not waiting_tasks else []
    verb = "waits" if waiting_tasks == [row["task_id"]] else "wait"
    return f"{row['asker']} is stuck on {row['stuck_on']}; {' and '.join(waiting_tasks)} {verb} for the answer"


def question_context(row: dict[str, Any]) -> str:
    """The question's options as the owner answers them, and whether its tasks are paused waiting for the answer."""
    options = "  ".join(lettered(row["options"])) or "no options: answer in your own words"
    return options + (" | its tasks are paused until it is answered" if row.get("paused") else "")
