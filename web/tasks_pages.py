"""`/tasks` (filtered by status, type and contact, as `loopline tasks list`) and `/tasks/{task_id}`: a task as
`loopline tasks show` tells it, with its memory folder (`tasks files`) and its audit trail (`loopline audit`), each
decision with its confidence and reasoning. Another tenant's task is answered as one that does not exist."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends, HTTPException, Request
from fastapi.responses import HTMLResponse
from sqlalchemy.engine import Connection

from loopline.adapters.clock import SystemClock
from loopline.domain.status import TaskStatus
from loopline.domain.task_types import TASK_TYPES
from loopline.projections import task_memory
from loopline.projections.scorecard_numbers import scorecard_tenants
from loopline.projections.task_queries import find_tasks, list_tasks
from loopline.projections.task_view import task_view
from loopline.projections.timeline import task_trail
from loopline.web.auth import NOT_FOUND, Principal, page_principal
from loopline.web.loops_page import by_deadline
from loopline.web.pages import render

router = APIRouter(include_in_schema=False)


def _one_of(name: str, value: str | None, known: list[str]) -> str | None:
    """The filter's value when it is one Loopline knows (empty: no filter); 400 naming the known ones otherwise."""
    if not value:
        return None
    if value not in known:
        raise HTTPException(400, f"{name} {value[:60]!r} is not one of {', '.join(known)}")
    return value


@router.get("/tasks", response_class=HTMLResponse)
def tasks_page(request: Request, status: str | None = None, type: str | None = None,  # noqa: A002 - the param's name
               contact: str | None = None, tenant: str | None = None,
               principal: Principal = Depends(page_principal)) -> HTMLResponse:
    statuses, types = [str(s) for s in TaskStatus], sorted(TASK_TYPES)
    filters = {"status": _one_of("status", status, statuses), "task_type": _one_of("type", type, types),
               "contact": (contact or "").strip() or None}
    with request.app.state.system.projections.engine.connect() as conn:
        rows = list_tasks(conn, tenant=principal.scope(tenant), **filters)
        tenants = scorecard_tenants(conn) if principal.operator else []
    return render(request, "tasks.html", principal, tasks=rows, statuses=statuses, types=types, status=status or "",
                  type=type or "", contact=contact or "", tenant=tenant or "", tenants=tenants)


def _found(conn: Connection, principal: Principal, task_id: str, tenant: str | None) -> tuple[str, dict[str, Any]]:
    """The task the URL names, within what the key may see; several tenants' tasks of that id ask for `tenant`."""
    found = find_tasks(conn, task_id, principal.scope(tenant))
    if not found:
        raise HTTPException(404, NOT_FOUND)
    if len(found) > 1:
        tenants = ", ".join(row["tenant"] for _, row in found)
        raise HTTPException(400, f"task id {task_id!r} exists for several tenants ({tenants}): add ?tenant=T")
    aggregate_id, row = found[0]
    principal.check(row["tenant"])
    return aggregate_id, row


def _decision(event: dict[str, Any]) -> dict[str, Any] | None:
    """A decision's confidence and reasoning as its event recorded them (the model's, or the gate's at creation)."""
    payload = event["payload"]
    if payload.get("confidence") is None:
        return None
    return {"confidence": payload["confidence"], "reasoning": payload.get("reasoning")}


def _file(conn: Connection, memory: dict[str, Any] | None, task_id: str, path: str) -> dict[str, str]:
    """One file of the task's memory folder; a path is looked up among the task's own files, never opened on a disk,
    so none reaches outside the folder."""
    try:
        if memory is None:
            raise KeyError(path)
        return {"path": path, "content": task_memory.read(conn, memory, path)}
    except KeyError:
        raise HTTPException(404, f"task {task_id} has no file {path[:100]!r}") from None


@router.get("/tasks/{task_id:path}", response_class=HTMLResponse)
def task_page(request: Request, task_id: str, tenant: str | None = None, file: str | None = None,
              principal: Principal = Depends(page_principal)) -> HTMLResponse:
    now = SystemClock().now()
    with request.app.state.system.projections.engine.connect() as conn:
        aggregate_id, row = _found(conn, principal, task_id, tenant)
        trail = task_trail(conn, task_id, row["tenant"])
        task = task_view(conn, aggregate_id, row, trail, now)
        memory = task_memory.find(conn, task_id, row["tenant"])
        files = task_memory.listing(conn, memory[0]) if memory else []
        shown = _file(conn, memory[0] if memory else None, task_id, file) if file else None
    timeline = [{**event, "decision": _decision(event)} for event in trail]
    return render(request, "task.html", principal, task=task, loops=by_deadline(task["loops"], now), files=files,
                  shown=shown, timeline=timeline, root=task_memory.root(memory[0]) if memory else None)
