"""`loopline review list`: everything waiting for a human (seed 004 §6): tasks pending review or escalated, open
escalation questions, and free-text answers kept for review, each with what to decide with."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from loopline.cli.context import flag, opened
from loopline.cli.help import App
from loopline.cli.output import print_rows
from loopline.domain.status import TaskStatus
from loopline.projections.questions import answers_for_review, open_questions
from loopline.projections.task_queries import list_tasks

app = App(help="The review queue: what waits for a human to decide.", no_args_is_help=True)

Json = Annotated[bool, flag("--json", "Print JSON instead of a table.")]
Tenant = Annotated[str | None, typer.Option("--tenant", help="Only this tenant.")]
WAITING_TASKS = {
    TaskStatus.PENDING_REVIEW: "publish task.approve or task.reject",
    TaskStatus.ESCALATED: "publish task.guidance, task.reply, task.takeover or task.cancel",
}
"""The task statuses that wait for the owner, and the commands that decide them."""


def _task(row: dict[str, Any], decide: str) -> dict[str, Any]:
    return {"kind": "task", "tenant": row["tenant"], "id": row["task_id"], "what": row["title"],
            "why": row.get("status_reason") or row["status"], "since": row["updated_at"], "decide": decide}


def _question(row: dict[str, Any]) -> dict[str, Any]:
    why = f"{row['asker']} is stuck on {row['stuck_on']}; {row['blocked']} task(s) blocked"
    return {"kind": "question", "tenant": row["tenant"], "id": row["question_id"], "what": row["question"],
            "why": why, "since": row["asked_at"], "decide": "publish question.answer", "task_id": row["task_id"],
            "options": row["options"], "urgency": row["urgency"], "paused": row["paused"]}


def _answer(row: dict[str, Any]) -> dict[str, Any]:
    return {"kind": "answer", "tenant": row["tenant"], "id": row["question_id"], "what": row["answer_text"],
            "why": f"matched none of the options of: {row['question']}", "since": row["answered_at"],
            "decide": "read it; no command needed", "task_id": row["task_id"], "options": row["options"]}


@app.command("list")
def list_(json_: Json = False, tenant: Tenant = None) -> None:
    """List what waits for a human: tasks to review, open questions, free-text answers to review, oldest first."""
    with opened() as system, system.projections.engine.connect() as conn:
        rows = [_task(row, decide) for status, decide in WAITING_TASKS.items()
                for row in list_tasks(conn, tenant=tenant, status=status)]
        rows += [_question(row) for row in open_questions(conn, tenant)]
        rows += [_answer(row) for row in answers_for_review(conn, tenant)]
    rows.sort(key=lambda row: (row["since"], row["kind"], row["id"]))
    print_rows("review queue", rows, ["kind", "tenant", "id", "what", "why", "since", "decide"], as_json=json_)
