"""A task's place in a plan (seed 002 §14): a subtask's link to its parent and mini-budget, a parent's record of its
children, and the status a parent takes from them."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from loopline.domain.base import TaskEvent, TaskMoved
from loopline.domain.status import TERMINAL, TaskStatus

if TYPE_CHECKING:
    from loopline.domain.task import Task


def no_subtasks() -> dict[str, Any]:
    """The state of a task that is nobody's subtask and has none: its defaults, and an older snapshot's."""
    return {"subtask_of": None, "subtasks": {}, "subtasks_derived": None, "spawned_since_evaluation": 0}


class TaskSubtasks:
    """A direct base of `Task`, keeping `subtask_of` (a subtask's parent), `subtasks` (a parent's children),
    `subtasks_derived` and `spawned_since_evaluation`; eventsourcing redefines its events as `Task.<Name>`."""

    class SubtaskLinked(TaskEvent):
        """This task is a step of `parent_ref`'s plan, with its own mini-budget (§14.3 rule 2): for a task Loopline
        works, the lower of it and its type's budgets."""

        parent_ref: str
        requirement: str
        depends_on: list[str]
        depth: int
        starts_at: datetime | None
        budget_messages: int
        budget_turns: int
        acting: bool
        """Loopline works it: its outreach plan's budgets become `budget_messages` and `budget_turns`."""

        def apply(self, task: Task) -> None:
            task.subtask_of = {"ref": self.parent_ref, "requirement": self.requirement,
                               "depends_on": list(self.depends_on), "depth": self.depth, "starts_at": self.starts_at}
            if self.acting:
                task.outreach.update(budget_messages=self.budget_messages, budget_turns=self.budget_turns)

    class SubtaskHeld(TaskMoved):
        """The started subtask waits: for the siblings it depends on (`blockers`), or, none named, for its parent to
        be back from the owner (seed 002 §17.2)."""

        blockers: list[str]
        reason: str
        status: str

    class SubtaskAdded(TaskEvent):
        """A step added to this task's plan, by the agent or the owner (`by`), starting in `subtask_status`."""

        subtask_ref: str
        requirement: str
        depends_on: list[str]
        subtask_status: str
        by: str

        def apply(self, task: Task) -> None:
            task.subtasks[self.subtask_ref] = {"requirement": self.requirement, "depends_on": list(self.depends_on),
                                               "status": self.subtask_status, "messages": 0, "paused": False}
            if self.by == "agent":
                task.spawned_since_evaluation += 1

    class SubtaskMoved(TaskEvent):
        """A subtask's status or messages changed; an ended one starts the agent's next evaluation (§14.5). `note`
        is what the owner is told of it (an optional step that failed), empty when nothing."""

        subtask_ref: str
        subtask_status: str
        messages: int
        note: str

        def apply(self, task: Task) -> None:
            entry = task.subtasks[self.subtask_ref]
            entry.update(status=self.subtask_status, messages=self.messages)
            if TaskStatus(self.subtask_status) in TERMINAL:
                task.spawned_since_evaluation = 0

    class SubtaskPaused(TaskEvent):
        """A step of the subtask was held because this task is with the owner (§17.2): it goes on at the resume."""

        subtask_ref: str
        reason: str

        def apply(self, task: Task) -> None:
            task.subtasks[self.subtask_ref]["paused"] = True

    class SubtasksResumed(TaskEvent):
        """This task is no longer with the owner: the subtasks whose steps it held go on."""

        subtask_refs: list[str]

        def apply(self, task: Task) -> None:
            for ref in self.subtask_refs:
                task.subtasks[ref]["paused"] = False

    class SubtasksDerived(TaskMoved):
        """The parent's status follows its children's (§14.4): `derived` is the seed's word for it (a status, or
        `needs_evaluation`), `status` the one the parent takes."""

        derived: str
        reason: str
        status: str

        def apply(self, task: Task) -> None:
            task.subtasks_derived = self.derived
            task._moved(self.status, self.timestamp)

    @property
    def subtask_depth(self) -> int:
        """Tasks in the chain of parents ending with this one: 1 for a task that is nobody's subtask."""
        return self.subtask_of["depth"] if self.subtask_of else 1

    def link_to_parent(
        self, *, parent_ref: str, requirement: str, depends_on: list[str], depth: int,
        starts_at: datetime | None, budget_messages: int, budget_turns: int, now: datetime,
    ) -> None:
        plan = self.outreach
        self.trigger_event(
            self.SubtaskLinked, timestamp=now, parent_ref=parent_ref, requirement=requirement,
            depends_on=list(depends_on), depth=depth, starts_at=starts_at, acting=plan is not None,
            budget_messages=min(budget_messages, plan["budget_messages"]) if plan else budget_messages,
            budget_turns=min(budget_turns, plan["budget_turns"]) if plan else budget_turns,
        )

    def hold_subtask(self, *, blockers: list[str], reason: str, now: datetime) -> None:
        """A started subtask waits (a task Loopline works has its step held instead, `processors/handlers/subtasks.py`
        `subtask_hold`)."""
        if self.status is TaskStatus.EXECUTING:
            self.trigger_event(self.SubtaskHeld, timestamp=now, blockers=list(blockers), reason=reason,
                               status=self._target(TaskStatus.WAITING))

    def add_subtask(self, subtask: Task, *, requirement: str, depends_on: list[str], by: str,
                    now: datetime) -> None:
        self.check_open()
        self.trigger_event(self.SubtaskAdded, timestamp=now, subtask_ref=subtask.ref, requirement=requirement,
                           depends_on=list(depends_on), subtask_status=subtask.status, by=by)

    def note_subtask(self, subtask: Task, *, note: str, now: datetime) -> bool:
        """Records the subtask's status and messages when they changed since last recorded; says whether they had."""
        entry = self.subtasks[subtask.ref]
        if entry["status"] == subtask.status and entry["messages"] == subtask.messages_used:
            return False
        self.trigger_event(self.SubtaskMoved, timestamp=now, subtask_ref=subtask.ref, subtask_status=subtask.status,
                           messages=subtask.messages_used, note=note)
        return True

    def pause_subtask(self, subtask_ref: str, *, reason: str, now: datetime) -> None:
        if not self.subtasks[subtask_ref]["paused"]:
            self.trigger_event(self.SubtaskPaused, timestamp=now, subtask_ref=subtask_ref, reason=reason)

    def resume_subtasks(self, *, now: datetime) -> list[str]:
        """The subtasks whose steps were held while this task was with the owner, no longer held."""
        paused = [ref for ref, entry in self.subtasks.items() if entry["paused"]]
        if paused:
            self.trigger_event(self.SubtasksResumed, timestamp=now, subtask_refs=paused)
        return paused

    def follow_subtasks(self, *, derived: str, status: TaskStatus, reason: str, now: datetime) -> None:
        """Takes `status` for its children's `derived` one; a parent that already has both records nothing."""
        if status is self.status and derived == self.subtasks_derived:
            return
        self.trigger_event(self.SubtasksDerived, timestamp=now, derived=derived, reason=reason,
                           status=self.status if status is self.status else self._target(status))
