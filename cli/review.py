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
from loopline.domain.wording import one_line
from loopline.projections.proposals import list_proposals
from loopline.projections.reflections import reflection_log
from loopline.projections.review_queue import waiting

app = App(help="The review queue: what waits for a human to decide.", no_args_is_help=True)

Json = Annotated[bool, flag("--json", "Print JSON instead of a table.")]
Tenant = Annotated[str | None, typer.Option("--tenant", help="Only this tenant.")]
Owner = Annotated[str, typer.Option("--tenant", help="The tenant whose task, proposal or question it is.")]
Reason = Annotated[str | None, typer.Option("--reason", help="Why, kept with the decision.")]


@app.command("list")
def list_(json_: Json = False, tenant: Tenant = None) -> None:
    """List what waits for a human, oldest first, each with the context to decide: tasks to review (the last message,
    the draft), proposals, open questions (the options), free-text answers to review."""
    with opened() as system, system.projections.engine.connect() as conn:
        rows = [{**row, "context": task_line(row["context"])} if row["kind"] == "task" else row
                for row in waiting(conn, tenant)]
    print_rows("review queue", rows, ["kind", "tenant", "id", "what", "why", "context", "since", "decide"],
               as_json=json_)


def task_line(papers: dict[str, Any]) -> str:
    """A waiting task's papers in one line: its last message (who wrote it) and the latest draft put before the
    owner."""
    last, draft = papers["last"], papers["draft"]
    parts = [f"last from {last['author']}: {one_line(last['text'], 160)}"] if last else []
    if draft:
        subject = f"{draft['subject']}: " if draft.get("subject") else ""
        parts.append(f"draft: {one_line(subject + draft.get('body', ''), 160)}")
    return " | ".join(parts) or "no message yet"


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
