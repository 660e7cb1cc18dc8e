"""Research tasks (seed 002 §31.4): when one is ready, Loopline asks the model (or the offline policy) for the type's
deliverable, keeps the report in the task's memory (its `deliverable` workflow output, in `workflows/`) and closes the
task with the outcome the report reached: no conversation, no follow-up."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from loopline.domain.outreach import Close, Escalate
from loopline.domain.status import TaskStatus
from loopline.domain.task import Task
from loopline.domain.task_types import task_type
from loopline.processors.application import UnitOfWork
from loopline.processors.handlers.escalation import escalate
from loopline.processors.handlers.model_calls import request_decision
from loopline.processors.handlers.outreach import close

WRITE_REPORT = "write_report"
"""The decision point (a tool of `processors/model/tools.py`) that writes the deliverable."""
DELIVERABLE = "deliverable"
"""The workflow the report is kept under in the task's memory."""


def is_research(task: Task) -> bool:
    """A task of a research type that Loopline works itself: one with no contact to send to."""
    return task_type(task.task_type).category == "research" and not task.is_acting


def request_report(uow: UnitOfWork, task: Task, now: datetime) -> None:
    request_decision(uow, task, request_ref=f"{task.ref}/report", point=WRITE_REPORT, purpose="report", touch=None,
                     tone=None, reason="the research task is ready: its deliverable is written", now=now)


def deliver_report(uow: UnitOfWork, task: Task, output: dict[str, Any], decided_by: str, now: datetime) -> str | None:
    """Keeps the report and closes the task as the report's outcome; an outcome not of the type's goes to the owner."""
    kind = task_type(task.task_type)
    outcome = str(output["outcome"])
    if outcome not in kind.outcome_codes:
        return escalate(uow, task, Escalate(f"the report closes as {outcome!r}, which is not one of this type's "
                                            f"({', '.join(kind.outcome_codes)})", "unknown_outcome"), now)
    name = task.record_workflow_output(workflow=DELIVERABLE, output=f"# {output['title']}\n\n{output['content']}", now=now)
    return close(uow, task, Close(outcome, TaskStatus.COMPLETED, f"{decided_by} wrote the report {name}"), now)
