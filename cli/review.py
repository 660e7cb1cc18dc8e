"""`loopline review list|approve|reject|log`: everything waiting for a human (seed 004 §6): tasks pending review or
escalated, proposals that survived debate, open escalation questions, and free-text answers kept for review; approve
and reject publish the command that decides one (by the kind of its id), as `loopline publish` would; log reads the
reflection log of decisions made (seed 004 §7)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

import typer

from loopline.cli.context import flag, opened, publish_command
from loopline.cli.help import App
from loopline.cli.output import print_rows
from loopline.cli.output import out
from loopline.cli.review_context import question_context, question_why, task_context
from loopline.domain.proposal_notice import FLAGS
from loopline.domain.status import TaskStatus
from loopline.projections.proposals import list_proposals
from loopline.projections.questions import answers_for_review, open_questions
from loopline.projections.reflections import reflection_log
from loopline.projections.task_queries import list_tasks

app = App(help="The review queue: what waits for a human to decide.", no_args_is_help=True)

Json = Annotated[bool, flag("--json", "Print JSON instead of a table.")]
Tenant = Annotated[str | None, typer.Option("--tenant", help="Only this tenant.")]
Owner = Annotated[str, typer.Option("--tenant", help="The tenant whose task, proposal or question it is.")]
Reason = Annotated[str | None, typer.Option("--reason", help="Why, kept with the decision.")]
WAITING_TASKS = {
    TaskStatus.PENDING_REVIEW: "publish task.approve or task.reject",
    TaskStatus.ESCALATED: "publish task.guidance, task.reply, task.takeover or task.cancel",
}
"""The task statuses that wait for the owner, and the commands that decide them."""


def _task(row: dict[str, Any], decide: str, context: str) -> dict[str, Any]:
    return {"kind": "task", "tenant": row["tenant"], "id": row["task_id"], "what": row["title"],
            "why": row.get("status_reason") or row["status"], "context": context, "since": row["updated_at"],
            "decide": decide}


def _question(row: dict[str, Any]) -> dict[str, Any]:
    return {"kind": "question", "tenant": row["tenant"], "id": row["question_id"], "what": row["question"],
            "why": question_why(row), "context": question_context(row), "since": row["asked_at"], "decide": "publish question.answer",
            "task_id": row["task_id"],
            "options": row["options"], "urgency": row["urgency"], "paused": row["paused"]}


def _proposal(row: dict[str, Any]) -> dict[str, Any]:
    flagged = f"; {FLAGS[row['flag']]}" if row["flag"] in FLAGS else ""
    shown = f", shown in {row['batch_ref']}" if row["batch_ref"] else ""
    return {"kind": "proposal", "tenant": row["tenant"], "id": row["proposal_id"], "what": row["title"],
            "why": f"{row['summary']} ({row['impact']} impact{shown}{flagged})", "since": row["updated_at"],
            "decide": "review approve, or review reject --type never|not_now|bad_approach", "theme": row["theme"]}


def _answer(row: dict[str, Any]) -> dict[str, Any]:
    return {"kind": "answer", "tenant": row["tenant"], "id": row["question_id"], "what": row["answer_text"],
            "why": f"matched none of the options of: {row['question']}", "context": question_context(row),
            "since": row["answered_at"],
            "decide": "read it; no command needed", "task_id": row["task_id"], "options": row["options"]}


@app.command("list")
def list_(json_: Json = False, tenant: Tenant = None) -> None:
    """List what waits for a human, oldest first, each with the context to decide: tasks to review (the last message,
    the draft), proposals, open questions (the options), free-text answers to review."""
    with opened() as system, system.projections.engine.connect() as conn:
        rows = [_task(row, decide, task_context(conn, row)) for status, decide in WAITING_TASKS.items()
                for row in list_tasks(conn, tenant=tenant, status=status)]
        rows += [_proposal(row) for row in list_proposals(conn, tenant)]
        rows += [_question(row) for row in open_questions(conn, tenant)]
        rows += [_answer(row) for row in answers_for_review(conn, tenant)]
    rows.sort(key=lambda row: (row["since"], row["kind"], row["id"]))
    print_rows("review queue", rows, ["kind", "tenant", "id", "what", "why", "context", "since", "decide"],
               as_json=json_)


@app.command("log")
def log(json_: Json = False, tenant: Tenant = None) -> None:
    """List the reflection log: every decision a human made (approved, rejected and its type, answered), in order."""
    with opened() as system, system.projections.engine.connect() as conn:
        rows = reflection_log(conn, tenant)
    print_rows("reflection log", rows, ["tenant", "at", "kind", "subject", "decision", "rejection_type", "detail"],
               as_json=json_)


def _is_proposal(tenant: str, item_id: str) -> bool:
    """Whether the id names one of the tenant's proposals waiting for the owner (else it names a task)."""
    with opened() as system, system.projections.engine.connect() as conn:
        return any(row["proposal_id"] == item_id for row in list_proposals(conn, tenant))


def _decide(tenant: str, command_type: str, data: dict[str, Any]) -> None:
    """Publishes one command and drains, as `loopline publish` does; a refused command exits 1 with its reason."""
    out.print("; ".join(publish_command(tenant, command_type, data, "review")), highlight=False)


@app.command("approve")
def approve(item_id: Annotated[str, typer.Argument(help="A task's or a question's id, as `review list` shows it.")],
            tenant: Owner, answer: Annotated[str | None, typer.Option(
                "--answer", help="For a question: an option's letter with optional reasoning, or free text.")] = None,
            reason: Reason = None) -> None:
    """Approve a task pending review (`task.approve`) or a proposal (`proposal.approve`: it becomes a task), or answer
    a question with --answer (`question.answer`)."""
    if answer is not None:
        _decide(tenant, "question.answer", {"question_id": item_id, "answer": answer})
    elif _is_proposal(tenant, item_id):
        _decide(tenant, "proposal.approve", {"proposal_id": item_id})
    else:
        _decide(tenant, "task.approve", {"task_id": item_id, **({"reason": reason} if reason else {})})


@app.command("reject")
def reject(item_id: Annotated[str, typer.Argument(help="A task pending review or a proposal, as `review list` shows.")],
           tenant: Owner, type_: Annotated[Literal["never", "not_now", "bad_approach"], typer.Option(
               "--type", help="never, not_now (the default) or bad_approach: what the rejection teaches.")] = "not_now",
           reason: Reason = None) -> None:
    """Reject a task pending review (`task.reject`) or a proposal (`proposal.reject`) with the type of the rejection."""
    because = {"reason": reason} if reason else {}
    if _is_proposal(tenant, item_id):
        _decide(tenant, "proposal.reject", {"proposal_id": item_id, "rejection_type": type_, **because})
    else:
        _decide(tenant, "task.reject", {"task_id": item_id, "rejection_type": type_, **because})
