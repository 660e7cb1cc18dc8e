"""The dashboard's first screen, Needs attention: what waits for the owner (the rows `loopline review list` prints,
with each task's draft and escalation handoff), and the owner's answers to them, each a form publishing the command
the CLI publishes for it; the owner is sent on to the command's result (`web/command_results.py`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from fastapi import APIRouter, Depends, HTTPException, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from sqlalchemy.engine import Connection

from loopline.domain.proposal_rules import DEFAULT_REJECTION, REJECTION_TYPES
from loopline.domain.question_ladder import lettered
from loopline.domain.status import TaskStatus
from loopline.domain.task_escalation import render_handoff
from loopline.projections.proposals import find_proposal
from loopline.projections.questions import find_question
from loopline.projections.review_queue import waiting
from loopline.projections.task_queries import find_tasks
from loopline.web import command_results
from loopline.web.auth import NOT_FOUND, Principal, csrf_checked, page_principal
from loopline.web.pages import render
from loopline.web.request_log import acting_for

router = APIRouter(include_in_schema=False)
router.include_router(command_results.router)

Form = dict[str, Any]


class BadForm(Exception):
    """A form field the owner must fix before anything is published; the message names the field."""


@dataclass(frozen=True)
class Action:
    """An owner's answer to one kind of item: the command it publishes and that command's data, from the item's id
    and the form."""

    command: str
    data: Callable[[str, Form], dict[str, Any]]


def _text(form: Form, field: str, what: str) -> str:
    value = str(form.get(field) or "").strip()
    if not value:
        raise BadForm(f"{field}: {what}")
    return value


def _optional(form: Form, field: str) -> dict[str, str]:
    value = str(form.get(field) or "").strip()
    return {field: value} if value else {}


def _rejection(form: Form) -> str:
    kind = str(form.get("type") or DEFAULT_REJECTION)
    if kind not in REJECTION_TYPES:
        raise BadForm(f"type: {kind!r} is no rejection type; choose {', '.join(REJECTION_TYPES)}")
    return kind


def _approval(task_id: str, form: Form) -> dict[str, Any]:
    """The agent's draft as it is, or (with a `draft` field) the owner's edit of it, sent instead."""
    if "draft" not in form:
        return {"task_id": task_id}
    body = _text(form, "draft", "write the message to send, or approve the agent's draft as it is")
    subject = _text(form, "subject", "give the message a subject")
    return {"task_id": task_id, "draft": {"subject": subject, "body": body}}


ACTIONS: dict[tuple[str, str], Action] = {
    ("tasks", "approve"): Action("task.approve", _approval),
    ("tasks", "reject"): Action("task.reject", lambda task_id, form: {
        "task_id": task_id, "rejection_type": _rejection(form), **_optional(form, "reason")}),
    ("tasks", "guidance"): Action("task.guidance", lambda task_id, form: {
        "task_id": task_id, "text": _text(form, "guidance", "write the guidance the agent should go on with")}),
    ("tasks", "reply"): Action("task.reply", lambda task_id, form: {
        "task_id": task_id, "body": _text(form, "reply", "write the reply to send to the contact")}),
    ("tasks", "takeover"): Action("task.takeover", lambda task_id, form: {
        "task_id": task_id, **_optional(form, "reason")}),
    ("proposals", "approve"): Action("proposal.approve", lambda proposal_id, form: {"proposal_id": proposal_id}),
    ("proposals", "reject"): Action("proposal.reject", lambda proposal_id, form: {
        "proposal_id": proposal_id, "rejection_type": _rejection(form), **_optional(form, "reason")}),
    ("questions", "answer"): Action("question.answer", lambda question_id, form: {
        "question_id": question_id, "answer": _text(form, "answer", "pick an option or write your answer")}),
}
"""Every answer the first screen offers, by the kind of item and what the owner does (the form's path)."""


def _task(conn: Connection, tenant: str, task_id: str) -> dict[str, Any] | None:
    found = find_tasks(conn, task_id, tenant)
    return found[0][1] if found else None


FIND: dict[str, Callable[[Connection, str, str], dict[str, Any] | None]] = {
    "tasks": _task, "proposals": find_proposal, "questions": find_question,
}


@router.get("/", response_class=HTMLResponse)
def needs_attention(request: Request, tenant: str | None = None,
                    principal: Principal = Depends(page_principal)) -> HTMLResponse:
    """What waits for the owner, oldest first: a tenant key's own; the operator's of every tenant (or the one named)."""
    with request.app.state.system.projections.engine.connect() as conn:
        items = waiting(conn, principal.scope(tenant))
    for item in items:
        if item["kind"] == "task":
            _with_draft(item)
        if item["kind"] in ("question", "answer"):
            item["lettered"] = lettered(item["options"])
    return render(request, "attention.html", principal, items=items, rejection_types=REJECTION_TYPES,
                  default_rejection=DEFAULT_REJECTION)


def _with_draft(item: dict[str, Any]) -> None:
    """The draft the owner may approve or edit: a task in review's first message; while escalated, the draft the
    agent held back for this escalation (an older notice's draft is no longer the one `task.approve` sends)."""
    escalation = item["context"]["escalation"]
    if escalation:
        item["handoff"] = render_handoff(escalation)
    in_review = item["context"]["status"] == TaskStatus.PENDING_REVIEW
    item["draft"] = item["context"]["draft"] if in_review else escalation and escalation["draft_reply"]


@router.post("/attention/{kind}/{action}/{item_id:path}")
def act(request: Request, kind: str, action: str, item_id: str, form: Form = Depends(csrf_checked),
        principal: Principal = Depends(page_principal)) -> Response:
    """Publishes the owner's answer once the item is one this key may see (another tenant's, or none: 404, nothing
    published) and the form is complete (400 naming the field); then on to the command's result."""
    known = ACTIONS.get((kind, action))
    if known is None:
        raise HTTPException(404, NOT_FOUND)
    tenant = principal.scope(str(form.get("tenant") or "") or None)
    if tenant is None:
        return _bad_form(request, principal, "tenant: name the tenant whose item this is")
    acting_for(request, tenant)
    with request.app.state.system.projections.engine.connect() as conn:
        item = FIND[kind](conn, tenant, item_id)
    if item is None:
        raise HTTPException(404, NOT_FOUND)
    principal.check(item["tenant"])
    try:
        data = known.data(item_id, form)
    except BadForm as error:
        return _bad_form(request, principal, str(error))
    result = request.app.state.publisher.command(tenant, known.command, data, source="dashboard")
    command_results.remember(request, result.id, tenant)
    return RedirectResponse(f"/commands/{result.id}", status_code=303)


def _bad_form(request: Request, principal: Principal, problem: str) -> HTMLResponse:
    return render(request, "error.html", principal, status_code=400, title="The form is not complete",
                  detail=f"{problem}. Nothing was sent.")
