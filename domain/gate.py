"""The creation gate: the status a new task starts in, and why.

An acting task (it can send and has a contact) starts `ready` only when the tenant's execution
mode (`limited_auto`), the type's escalation triggers and its threshold all let it; every other
outcome is `pending_review` with the reason the owner sees. A task of a type that sends nothing
passes its type's triggers too; every follow-through task keeps the confidence gate: a confidence
given and below the type's threshold goes to review.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from loopline.domain.status import TaskStatus
from loopline.domain.task_types import TaskType
from loopline.domain.tenant import TenantSettings


def is_email(contact: str | None) -> bool:
    """An address Loopline can send to: something@domain, no spaces."""
    if not contact or any(c.isspace() for c in contact):
        return False
    local, at, domain = contact.rpartition("@")
    return bool(at and local and "." in domain.strip(".") and "@" not in local)


def _number(context: Mapping[str, Any], key: str) -> float | None:
    value = context.get(key)
    return value if isinstance(value, int | float) and not isinstance(value, bool) else None


def _over(key: str, limit: float) -> Callable[[Mapping[str, Any]], bool]:
    def tripped(context: Mapping[str, Any]) -> bool:
        value = _number(context, key)
        return value is not None and value > limit
    return tripped


def _reason_contains(word: str) -> Callable[[Mapping[str, Any]], bool]:
    def tripped(context: Mapping[str, Any]) -> bool:
        reason = context.get("cancellation_reason")
        return isinstance(reason, str) and word in reason.lower()
    return tripped


TRIGGERS: dict[str, tuple[Callable[[Mapping[str, Any]], bool], str]] = {
    "always": (lambda context: True, "this type always needs review"),
    "member_tenure_over_1_year": (_over("member_tenure_days", 365), "context member_tenure_days over 365"),
    "member_tenure_over_2_years": (_over("member_tenure_days", 730), "context member_tenure_days over 730"),
    "monthly_value_over_200": (_over("monthly_value", 200), "context monthly_value over 200"),
    "cancellation_reason_complaint": (_reason_contains("complaint"), "context cancellation_reason mentions a complaint"),
    "cancellation_reason_billing": (_reason_contains("billing"), "context cancellation_reason mentions billing"),
}
"""Escalation trigger -> (whether the task's context trips it, what the owner is told)."""


def tripped_trigger(kind: TaskType, context: Mapping[str, Any]) -> str | None:
    """The first of the type's escalation triggers the context trips, with its explanation."""
    for trigger in kind.escalation_triggers:
        check, explanation = TRIGGERS[trigger]
        if check(context):
            return f"escalation trigger {trigger} ({explanation})"
    return None


def initial_status(
    settings: TenantSettings, kind: TaskType, confidence: float | None, context: Mapping[str, Any],
    *, acting: bool = True, spawned_from: str | None = None,
) -> tuple[TaskStatus, str]:
    """The status a new task starts in and the reason; a task the agent spawned from another's work always waits for
    review (seed 002 §7.13)."""
    review = TaskStatus.PENDING_REVIEW
    if acting and settings.reviews_every_task:
        why = "execution mode manual" if settings.execution_mode == "manual" else f"onboarding phase {settings.ramp_phase}"
        return review, f"{why}: every task the agent would send for waits for owner review"
    if acting and spawned_from is not None:
        return review, f"spawned by the agent from task {spawned_from}'s work: a spawned task always waits for owner review"
    # A type that sends nothing (a staff call, a report) is its own kind of work: its triggers hold as for one that
    # sends. A sending type without an address is the outside agent's to act on, under seed 000's gate below.
    trigger = tripped_trigger(kind, context) if acting or not kind.can_send else None
    if trigger is not None:
        return review, f"{trigger}: owner review"
    if not acting:
        if confidence is not None and confidence < kind.review_threshold:
            return review, f"confidence {confidence} below {kind.name} auto threshold {kind.review_threshold}: owner review"
        return TaskStatus.EXECUTING, "auto-approved: no confidence gate tripped"
    score = confidence if confidence is not None else 0.0  # a missing confidence counts as none: an acting task needs one to start
    if score < kind.auto_threshold:
        return review, f"confidence {score} below {kind.name} auto threshold {kind.auto_threshold}: owner review"
    return TaskStatus.READY, (
        f"auto-approved in {settings.execution_mode} mode: no escalation trigger tripped, "
        f"confidence {score} at or above {kind.auto_threshold}"
    )
