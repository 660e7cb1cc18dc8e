"""Subtasks (seed 002 §14): how a parent's status follows from its children, which sibling holds a child back, and the
spawn limits (§7.8) a new subtask passes. Pure rules: `processors/handlers/subtasks.py` applies them."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from loopline.domain.errors import DomainError
from loopline.domain.safety_limits import SUBTASK_DEPTH, SUBTASKS_PER_EVALUATION, SUBTASKS_PER_PARENT
from loopline.domain.status import TaskStatus

S = TaskStatus


class Requirement(StrEnum):
    """How a subtask's end weighs on its parent (§14.6)."""

    REQUIRED = "required"
    """The parent cannot complete until it succeeds; its failure or escalation escalates the parent."""
    OPTIONAL = "optional"
    """The parent can complete without it; its failure is noted on the parent."""
    BEST_EFFORT = "best_effort"
    """The parent ignores its failure entirely."""


NEEDS_EVALUATION = "needs_evaluation"
"""§14.4's pseudo-state: every child has ended, so whoever plans the parent decides whether its goal is met."""

FAILED = frozenset({S.ESCALATED, S.EXPIRED})
"""How a child fails: handed to the owner, or out of time (its mini-budget's days) without succeeding."""

FINISHED = frozenset({S.COMPLETED, S.CANCELLED})
"""A child's ends that free the siblings depending on it, and count as ended for any requirement."""

TAKEN_BY_PARENT: dict[str, TaskStatus] = {
    S.ESCALATED: S.ESCALATED,
    S.EXECUTING: S.EXECUTING,
    S.WAITING: S.WAITING,
    S.PENDING_REVIEW: S.WAITING,
    NEEDS_EVALUATION: S.EXECUTING,
}
"""The status a parent takes for each derived one: a child in review leaves the parent waiting on the owner (an
approved parent does not go back to review); one whose children all ended is the planner's turn, so executing."""


class SpawnRefused(DomainError):
    """A subtask that cannot be added (a spawn limit of seed 002 §7.8, a parent not yet approved, a sibling it names
    that is none): nothing is created."""


@dataclass(frozen=True)
class Child:
    """What a parent knows of one subtask: its requirement, its status, the siblings it waits for."""

    ref: str
    requirement: Requirement
    status: TaskStatus
    depends_on: tuple[str, ...] = ()

    @classmethod
    def of(cls, ref: str, entry: Mapping[str, Any]) -> Child:
        return cls(ref, Requirement(entry["requirement"]), TaskStatus(entry["status"]), tuple(entry["depends_on"]))

    @property
    def ended(self) -> bool:
        """Ended for the parent's derivation (§14.4): completed or cancelled, or failed when not required."""
        return self.status in FINISHED or (self.requirement is not Requirement.REQUIRED and self.status in FAILED)


def children_of(subtasks: Mapping[str, Mapping[str, Any]]) -> list[Child]:
    return [Child.of(ref, entry) for ref, entry in subtasks.items()]


def parent_status(children: Iterable[Child]) -> str:
    """§14.4 `deriveParentStatus`, a required child's expiry counted as its failure (§14.3 rule 4) and a dormant
    child as waiting: a `TaskStatus` value, or `NEEDS_EVALUATION` when every child has ended."""
    children = list(children)
    required = [c for c in children if c.requirement is Requirement.REQUIRED]
    blocking = [c for c in children if c.requirement is not Requirement.BEST_EFFORT]
    if any(c.status in FAILED for c in required):
        return S.ESCALATED
    if any(c.status in (S.EXECUTING, S.READY) for c in children):
        return S.EXECUTING
    if any(c.status in (S.WAITING, S.DORMANT) for c in blocking):
        return S.WAITING
    if any(c.status is S.PENDING_REVIEW for c in children):
        return S.PENDING_REVIEW
    if all(c.ended for c in children):
        return NEEDS_EVALUATION
    return S.EXECUTING


def why_derived(derived: str, children: Iterable[Child]) -> str:
    """The children that decided `derived`, in the owner's words."""
    children = list(children)
    if derived == S.ESCALATED:
        failed = [c.ref for c in children if c.requirement is Requirement.REQUIRED and c.status in FAILED]
        return f"required subtask {', '.join(failed)} failed or went to the owner"
    if derived == NEEDS_EVALUATION:
        done = sum(c.status is S.COMPLETED for c in children)
        return f"every subtask has ended ({done} of {len(children)} completed): the parent's goal is to be evaluated"
    deciding = {S.EXECUTING: (S.EXECUTING, S.READY), S.WAITING: (S.WAITING, S.DORMANT)}.get(derived, (derived,))
    named = [c for c in children if c.status in deciding] or [c for c in children if not c.ended]
    return f"subtask {', '.join(f'{c.ref} is {c.status}' for c in named)}"


def open_blockers(child: Child, siblings: Mapping[str, Child]) -> list[str]:
    """The siblings `child` depends on that have not finished (completed or cancelled)."""
    return [ref for ref in child.depends_on if ref not in siblings or siblings[ref].status not in FINISHED]


def check_spawn(*, parent_ref: str, parent_depth: int, spawned_this_evaluation: int, by: str) -> None:
    """Raises `SpawnRefused` for a subtask deeper than allowed (a task without a parent is depth 1) or one more than
    the agent may add before a child of the parent ends (§7.8). The per-parent count is `over_subtask_limit`'s:
    reaching it escalates the parent instead of refusing."""
    if parent_depth + 1 > SUBTASK_DEPTH:
        raise SpawnRefused(f"parent_id: task {parent_ref} is itself a subtask and subtasks nest at most "
                           f"{SUBTASK_DEPTH} deep (subtask_depth); add the step to its parent instead")
    if by == "agent" and spawned_this_evaluation >= SUBTASKS_PER_EVALUATION:
        raise SpawnRefused(f"parent_id: the agent added {spawned_this_evaluation} subtask(s) to task {parent_ref} "
                           f"since its last subtask ended (subtasks_per_evaluation, at most {SUBTASKS_PER_EVALUATION}); "
                           "wait for one to end and evaluate before adding more")


def over_subtask_limit(parent_ref: str, children: int) -> str | None:
    """Why the parent goes to the owner instead of getting one more subtask (§7.8: a planner that keeps adding steps
    without reaching the goal), or None while it has room."""
    if children < SUBTASKS_PER_PARENT:
        return None
    return (f"subtask limit reached: task {parent_ref} has {children} subtasks (subtasks_per_parent, at most "
            f"{SUBTASKS_PER_PARENT}) and its goal is still open")


def family_messages(parent_messages: int, subtasks: Mapping[str, Mapping[str, Any]]) -> int:
    """Messages a parent and its subtasks have sent together, which its budget caps (§14.3 rule 1)."""
    return parent_messages + sum(entry["messages"] for entry in subtasks.values())
