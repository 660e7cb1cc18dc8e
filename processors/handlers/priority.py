"""A task's priority by the tenant's rules (seed 004 §3): ruled when the task is created, and once more on the model
urgency score, which is asked for (a decision of the task, through the agent follower) only when a rule reads it and
the task's creator gave neither a priority nor a score."""

from __future__ import annotations

from datetime import datetime

from loopline.domain.priority_rules import TaskFacts, reads_urgency, rule_priority
from loopline.domain.task import Task
from loopline.domain.task_priority import SCORE_URGENCY, URGENCY, URGENCY_REF
from loopline.processors.application import UnitOfWork
from loopline.processors.handlers.model_calls import request_decision
from loopline.processors.handlers.tenants import tenant_settings


def rule_new_task(uow: UnitOfWork, task: Task, *, urgency: float | None, now: datetime) -> None:
    """The first matching rule sets the new task's priority; the model is asked for a score when a rule reads one."""
    rules = tenant_settings(uow, task.tenant).priority_rules
    ruling = rule_priority(rules, _facts(task, urgency))
    if ruling is not None:
        task.rule_priority(priority=ruling.priority, rule=ruling.rule, urgency=urgency, now=now)
    if urgency is None and reads_urgency(rules):
        request_decision(uow, task, request_ref=task.ref + URGENCY_REF, point=SCORE_URGENCY, purpose=URGENCY,
                         touch=None, tone=None, now=now, reason="the tenant's priority rules read a model urgency score")


def rule_on_urgency(uow: UnitOfWork, task: Task, urgency: float, now: datetime) -> str:
    """The rules again, with the score the model gave: a changed priority is recorded, an unchanged one is not."""
    was = task.priority
    ruling = rule_priority(tenant_settings(uow, task.tenant).priority_rules, _facts(task, urgency))
    if ruling is None or ruling.priority == was:
        return f"'{task.title}': urgency {urgency:g}, priority stays {was or 'unset'}"
    task.rule_priority(priority=ruling.priority, rule=ruling.rule, urgency=urgency, now=now)
    return f"'{task.title}': urgency {urgency:g}, priority {ruling.priority} by rule {ruling.rule}, was {was or 'unset'}"


def _facts(task: Task, urgency: float | None) -> TaskFacts:
    return TaskFacts(title=task.title, description=task.description or "", task_type=task.task_type,
                     contact=task.contact, urgency=urgency)
