"""The canonical task status set, its single transition table, and the seeds' words for it."""

from __future__ import annotations

from enum import StrEnum

from loopline.domain.errors import DomainError


class TaskStatus(StrEnum):
    PENDING_REVIEW = "pending_review"
    READY = "ready"
    EXECUTING = "executing"
    WAITING = "waiting"
    DORMANT = "dormant"
    ESCALATED = "escalated"
    COMPLETED = "completed"
    CANCELLED = "cancelled"
    EXPIRED = "expired"


S = TaskStatus

TRANSITIONS: dict[TaskStatus, frozenset[TaskStatus]] = {
    S.PENDING_REVIEW: frozenset({S.READY, S.CANCELLED, S.EXPIRED}),
    S.READY: frozenset({S.EXECUTING, S.ESCALATED, S.CANCELLED, S.EXPIRED}),
    S.EXECUTING: frozenset({S.WAITING, S.COMPLETED, S.ESCALATED, S.CANCELLED, S.EXPIRED}),
    S.WAITING: frozenset({S.EXECUTING, S.COMPLETED, S.ESCALATED, S.CANCELLED, S.DORMANT, S.EXPIRED}),
    S.DORMANT: frozenset({S.EXECUTING, S.COMPLETED, S.CANCELLED, S.EXPIRED}),
    S.ESCALATED: frozenset({S.EXECUTING, S.COMPLETED, S.CANCELLED}),
    S.COMPLETED: frozenset(),
    S.CANCELLED: frozenset(),
    S.EXPIRED: frozenset(),
}

TERMINAL: frozenset[TaskStatus] = frozenset(s for s, targets in TRANSITIONS.items() if not targets)

# What reaching its expiry does to an open task, by status: (without open loops, with open loops).
# A task the agent is working on hands unresolved loops to the owner; one not yet approved or
# paused has nobody acting on it, so it expires and its loops close with it; an escalated task
# is already with the owner and stays there, escalated again for expiry (the owner is told once).
AT_EXPIRY: dict[TaskStatus, tuple[TaskStatus, TaskStatus]] = {
    S.PENDING_REVIEW: (S.EXPIRED, S.EXPIRED),
    S.READY: (S.EXPIRED, S.ESCALATED),
    S.EXECUTING: (S.EXPIRED, S.ESCALATED),
    S.WAITING: (S.EXPIRED, S.ESCALATED),
    S.DORMANT: (S.EXPIRED, S.EXPIRED),
    S.ESCALATED: (S.ESCALATED, S.ESCALATED),
}

# Each seed's status words mapped onto the canonical set. A value that is not a
# TaskStatus names a condition flagged on a task rather than a state.
SEED_VOCABULARY: dict[str, dict[str, TaskStatus | str]] = {
    "000 (GAIA proactive architecture)": {
        "active": S.EXECUTING,
        "waiting": S.WAITING,
        "stalled": "flag: stalled (no activity for N days), status unchanged",
        "completed": S.COMPLETED,
        "cancelled": S.CANCELLED,
        "expired": S.EXPIRED,
        "escalating": S.ESCALATED,
    },
    "001 (proactive loop proposals)": {
        "proposed": S.PENDING_REVIEW,
        "approved": S.READY,
        "executed": S.COMPLETED,
        "rejected": S.CANCELLED,
    },
    "002 (business outreach agent)": {status.value: status for status in S if status is not S.EXPIRED},
    "003 (background tasks)": {
        "proposed": S.PENDING_REVIEW,
        "active": S.EXECUTING,
        "paused": S.DORMANT,
        "done": S.COMPLETED,
        "failed": S.ESCALATED,
    },
    "004 (task specification)": {
        "NEW": S.PENDING_REVIEW,
        "READY": S.READY,
        "IN_PROGRESS": S.EXECUTING,
        "WAITING_HITL": S.ESCALATED,
        "DONE": S.COMPLETED,
        "CANCELLED": S.CANCELLED,
    },
}


class InvalidTransition(DomainError):
    def __init__(self, current: TaskStatus, target: TaskStatus) -> None:
        allowed = ", ".join(sorted(TRANSITIONS[current])) or "nothing (terminal)"
        super().__init__(f"task cannot move from {current} to {target}; from {current} it may go to {allowed}")
        self.current = current
        self.target = target


class UnknownStatus(DomainError):
    pass


def parse_status(status: str) -> TaskStatus:
    try:
        return TaskStatus(status)
    except ValueError:
        raise UnknownStatus(f"unknown task status {status!r}; statuses are {', '.join(TaskStatus)}") from None


def check_transition(current: TaskStatus, target: TaskStatus) -> None:
    if target not in TRANSITIONS[current]:
        raise InvalidTransition(current, target)
