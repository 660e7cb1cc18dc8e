"""The Task aggregate: multi-step work an agent tracks across time and channels, its lifecycle and its inbox."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from eventsourcing.domain import Aggregate

from loopline.domain.actions import reaches_contact
from loopline.domain.base import LooplineAggregate, TaskEvent, TaskMoved
from loopline.domain.errors import DomainError
from loopline.domain.status import TERMINAL, TaskStatus, check_transition, parse_status
from loopline.domain.task_actions import TaskActions
from loopline.domain.task_attribution import TaskAttribution
from loopline.domain.task_decisions import TaskDecisions
from loopline.domain.task_escalation import TaskEscalation
from loopline.domain.task_inbox import TaskInbox
from loopline.domain.task_notices import TaskNotices
from loopline.domain.task_outcomes import TaskOutcomes
from loopline.domain.task_outreach import TaskOutreach
from loopline.domain.task_priority import TaskPriority
from loopline.domain.task_progress import TaskProgress
from loopline.domain.task_review import TaskReview
from loopline.domain.task_subtasks import TaskSubtasks, no_subtasks
from loopline.domain.task_timers import TaskTimers


class TaskClosed(DomainError):
    """The task is completed, cancelled or expired; it takes no more work."""


class OwnerDecision(DomainError):
    """A status change only the owner makes (approving, resuming an escalation), asked for by progress notes."""


SENT_BY_LOOPLINE = ("loopline", "owner")
"""Who an action Loopline delivers to a contact is performed by: Loopline, or the owner through `task.reply`."""

OWNER_DECISIONS: dict[tuple[TaskStatus, TaskStatus], str] = {
    (TaskStatus.PENDING_REVIEW, TaskStatus.READY): "only the owner approves: use task.approve",
    (TaskStatus.ESCALATED, TaskStatus.EXECUTING): "only owner guidance resumes: use task.guidance",
}
"""Transitions `task.update` may not make, with the command that makes each."""

AGENT_PROVENANCE: dict[str, Any] = {"trigger_type": "agent", "trigger_event_id": None, "created_by": "agent"}
"""The provenance of a task created without one, and of every task created before provenance was recorded: the
outside agent's `task.create`."""


class Task(
    TaskInbox, TaskReview, TaskEscalation, TaskDecisions, TaskOutreach, TaskTimers, TaskNotices, TaskAttribution,
    TaskOutcomes, TaskActions, TaskProgress, TaskSubtasks, TaskPriority, LooplineAggregate,
):
    """Events carry the business time as their timestamp and every field their `apply` needs.

    The state stays small (counters, not lists of everything that happened; the read models
    keep the history), so snapshots of long-running tasks stay cheap to write and to load.
    Every event names its tenant and task, and every event that moves the task names the
    status it leads to. The inbox, the owner's review, model decisions, outreach, clocks and notices are written
    in the modules beside this one, as the bases above; eventsourcing redefines each event of a
    direct base as `Task.<Name>` in this module, the topic stored events carry.
    """

    OWNER = {"tenant": "tenant", "task_ref": "ref"}

    class_version = 7
    """Version 2 adds the outreach plan and its counters, version 3 when the task last stopped waiting, version 4
    its model calls, version 5 its goal progress and subtasks, version 6 its provenance, version 7 its loops that
    expired (the upcasters give old snapshots their defaults)."""

    class Created(Aggregate.Created):
        tenant: str
        ref: str
        title: str
        description: str
        task_type: str
        status: str
        expires_at: datetime | None
        priority: str | None
        contact: str | None
        confidence: float | None
        context: dict[str, Any]
        reason: str
        trigger_type: str
        trigger_event_id: str | None
        created_by: str

        class_version = 2
        """Version 2 records the task's provenance (`domain/task_provenance.py`)."""

        @staticmethod
        def upcast_v1_v2(state: dict[str, Any]) -> None:
            """Before provenance every task came from a `task.create` the outside agent sent."""
            state.update(AGENT_PROVENANCE)

    class ActionRecorded(TaskEvent):
        action: str
        details: dict[str, Any]
        summary: str
        performed_by: str
        status: str

        def apply(self, task: Task) -> None:
            task.actions_count += 1
            if self.sent_by_loopline and reaches_contact(self.action):
                task.deferred = None  # what a limit held back has gone out (or a newer message replaced it)
                task._hold(None)  # the contact got an answer: a draft held back for the owner is moot
            if "thread" in self.details:
                task._join_thread(self.details.get("subject", ""), f"{self.originator_id}:{self.originator_version}")
            task._moved(self.status, self.timestamp)

        @property
        def sent_by_loopline(self) -> bool:
            """Loopline delivers it: its own message, or the owner's it sends for them (`task.reply`)."""
            return self.performed_by in SENT_BY_LOOPLINE

    class LoopLinked(TaskEvent):
        loop_ref: str

        def apply(self, task: Task) -> None:
            task.open_loops.append(self.loop_ref)

    class LoopClosed(TaskEvent):
        loop_ref: str
        resolved_by: str

        def apply(self, task: Task) -> None:
            task.open_loops.remove(self.loop_ref)
            task.last_wait_ended_at = self.timestamp
            if self.resolved_by == "expired":
                task.loops_expired += 1

    class ProgressNoted(TaskMoved):
        notes: str
        status: str

    class Completed(TaskMoved):
        summary: str
        status: str

    class Cancelled(TaskMoved):
        reason: str
        status: str

    class Expired(TaskMoved):
        reason: str
        status: str

    class WaitEnded(TaskMoved):
        """A waiting task's last open loop closed without an answer and no wake-up is pending: the agent's turn."""

        reason: str
        status: str

    class WaitStarted(TaskMoved):
        """An executing task now waits for something (a loop registered, a wake-up scheduled): it is `waiting`."""

        reason: str
        status: str

    class WorkflowOutputRecorded(TaskEvent):
        workflow: str
        name: str
        output: Any

        def apply(self, task: Task) -> None:
            task.workflows.setdefault(self.workflow, 0)
            task.workflows[self.workflow] += 1
            task._moved(task.status, self.timestamp)

    class ContextMerged(TaskEvent):
        """A second `task.create` for the same contact and type added its context to this active task."""

        context: dict[str, Any]
        source_ref: str

        def apply(self, task: Task) -> None:
            task.context = {**task.context, **self.context}

    def __init__(
        self, tenant: str, ref: str, title: str, description: str, task_type: str, status: str,
        expires_at: datetime | None, priority: str | None, contact: str | None, confidence: float | None,
        context: dict[str, Any], reason: str, trigger_type: str, trigger_event_id: str | None, created_by: str,
    ) -> None:
        self.tenant = tenant
        self.ref = ref
        self.title = title
        self.description = description
        self.task_type = task_type
        self.status = TaskStatus(status)
        self.expires_at = expires_at
        self.priority = priority
        self.contact = contact
        self.confidence = confidence
        self.context = context
        self.trigger_type = trigger_type
        self.trigger_event_id = trigger_event_id
        self.created_by = created_by
        self.last_activity_at: datetime = self.created_on
        self.actions_count = 0
        self.inbox_count = 0
        self.open_loops: list[str] = []
        self.loops_expired = 0
        """Loops of the task whose deadline passed with no answer: discovery proposes from repeated ones."""
        self.notifications = 0
        self.escalation_reason: str | None = None
        self.escalation_cause: str | None = None
        self.workflows: dict[str, int] = {}
        self.wakeups: dict[str, dict[str, Any]] = {}
        self.stalled_since: datetime | None = None
        self.last_wait_ended_at: datetime | None = None
        """When a loop of the task last closed: until then it waited on something, so it was not idle."""
        self.next_stall_check: datetime | None = None
        self.outreach: dict[str, Any] | None = None
        """The plan of an acting task (`OutreachPlanned`); None for a follow-through task."""
        self.messages_used = 0
        self.turns_used = 0
        self.touch = 0
        self.next_touch_at: datetime | None = None
        """When the cadence's next step is due; None after a reply, until an evaluation says wait."""
        self.dormant_until: datetime | None = None
        self.pending_decisions: dict[str, dict[str, Any]] = {}
        """Model decisions asked for and not yet recorded, by request ref (`processors/followers/agent.py` reads them)."""
        self.model_calls = 0
        self.deferred: dict[str, Any] | None = None
        """A send a limit deferred, with its draft, sent as is when the limit frees up."""
        self.outcome: str | None = None
        self.progress: dict[str, Any] | None = None
        self.__dict__.update(no_subtasks())

    @staticmethod
    def upcast_v1_v2(state: dict[str, Any]) -> None:
        """A version-1 snapshot is of a task that never planned outreach."""
        state.update(outreach=None, messages_used=0, turns_used=0, touch=0, next_touch_at=None, dormant_until=None,
                     pending_decisions={}, deferred=None, outcome=None)

    @staticmethod
    def upcast_v2_v3(state: dict[str, Any]) -> None:
        """A version-2 snapshot has not seen a wait end since: the stall check reads its last activity."""
        state.update(last_wait_ended_at=None)

    @staticmethod
    def upcast_v3_v4(state: dict[str, Any]) -> None:
        """A version-3 snapshot's model calls were not counted: its task limit counts from the snapshot on."""
        state.update(model_calls=0)

    @staticmethod
    def upcast_v4_v5(state: dict[str, Any]) -> None:
        """A version-4 snapshot recorded no goal progress, and is of a task that is nobody's subtask and has none."""
        state.update(progress=None, **no_subtasks())

    @staticmethod
    def upcast_v5_v6(state: dict[str, Any]) -> None:
        """A version-5 snapshot is of a task created before provenance was recorded."""
        state.update(AGENT_PROVENANCE)

    @staticmethod
    def upcast_v6_v7(state: dict[str, Any]) -> None:
        """A version-6 snapshot's expired loops were not counted: they count from the snapshot on."""
        state.update(loops_expired=0)

    @classmethod
    def create(cls, *, id: Any, now: datetime, **fields: Any) -> Task:  # noqa: A002
        return cls._create(cls.Created, id=id, timestamp=now, **{**AGENT_PROVENANCE, **fields})

    def merge_context(self, context: dict[str, Any], *, source_ref: str, now: datetime) -> None:
        """Later values win key by key; the task's status and plan are unchanged."""
        self.check_open()
        self.trigger_event(self.ContextMerged, timestamp=now, context=dict(context), source_ref=source_ref)

    @property
    def status(self) -> TaskStatus:
        # Stored as a plain string, so a snapshot (JSON) restores it like every other field.
        return TaskStatus(self.__dict__["status"])

    @status.setter
    def status(self, value: str) -> None:
        self.__dict__["status"] = str(TaskStatus(value))

    def _moved(self, status: str, at: datetime) -> None:
        """Every change of state is activity: it also clears a stalled flag."""
        self.status = TaskStatus(status)
        # A reply kept for a loop registered late is stamped with its own, later time: never go back.
        self.last_activity_at = max(self.last_activity_at, at)
        self.stalled_since = None

    @property
    def is_closed(self) -> bool:
        return self.status in TERMINAL

    def check_open(self) -> None:
        if self.is_closed:
            raise TaskClosed(f"task {self.ref} is {self.status}; it takes no more work")

    def _target(self, target: TaskStatus) -> TaskStatus:
        check_transition(self.status, target)
        return target

    def _after_action(self, awaits: bool) -> TaskStatus:
        """An action that awaits an answer leaves the task waiting on it; one that awaits nothing leaves
        it executing (an escalated task stays with the owner, a waiting one keeps waiting)."""
        if self.status in (TaskStatus.WAITING, TaskStatus.ESCALATED):
            return self.status
        if self.status is not TaskStatus.EXECUTING:
            check_transition(self.status, TaskStatus.EXECUTING)
        if not awaits:
            return TaskStatus.EXECUTING
        check_transition(TaskStatus.EXECUTING, TaskStatus.WAITING)
        return TaskStatus.WAITING

    def record_action(
        self, *, action: str, details: dict[str, Any], summary: str, performed_by: str, now: datetime, awaits: bool = True
    ) -> None:
        """`awaits` says whether a loop for the action's answer is registered with it (a task waits only on something)."""
        self.check_open()
        self.trigger_event(
            self.ActionRecorded, timestamp=now, action=action, details=details, summary=summary,
            performed_by=performed_by, status=self._after_action(awaits),
        )

    def check_may_act(self) -> None:
        """Raises what recording an action would raise now (a task not yet approved cannot act), so a send is
        refused before the model is asked to write it."""
        self.check_open()
        self._after_action(True)

    def end_wait(self, *, reason: str, now: datetime) -> None:
        """A task is `waiting` only while a loop is open, a wake-up or a decision is pending; with none left (a loop
        passed its deadline or was resolved by hand), it goes back to `executing`: the agent's turn."""
        pending = any(w["loop_ref"] is None or w["loop_ref"] in self.open_loops for w in self.wakeups.values())
        pending = pending or bool(self.pending_decisions)  # the model is writing what comes next
        if self.status is TaskStatus.WAITING and not self.open_loops and not pending:
            self.trigger_event(self.WaitEnded, timestamp=now, reason=reason, status=self._target(TaskStatus.EXECUTING))

    def start_waiting(self, *, reason: str, now: datetime) -> None:
        """The counterpart of `end_wait`: an executing task given a loop or a wake-up to wait on moves to `waiting`;
        any other status stays (a task not approved, with the owner or already waiting)."""
        if self.status is TaskStatus.EXECUTING:
            self.trigger_event(self.WaitStarted, timestamp=now, reason=reason, status=self._target(TaskStatus.WAITING))

    def link_loop(self, loop_ref: str, *, now: datetime) -> None:
        self.check_open()
        self.trigger_event(self.LoopLinked, timestamp=now, loop_ref=loop_ref)

    def close_loop(self, loop_ref: str, *, resolved_by: str, now: datetime) -> None:
        if loop_ref in self.open_loops:
            self.trigger_event(self.LoopClosed, timestamp=now, loop_ref=loop_ref, resolved_by=resolved_by)

    def note_progress(self, *, notes: str, status: str | None, now: datetime) -> None:
        self.check_open()
        target = parse_status(status) if status else self.status
        if target != self.status:
            check_transition(self.status, target)
        if target in TERMINAL:
            raise TaskClosed(f"use task.complete or task.cancel to close task {self.ref}, not task.update")
        owner_decision = OWNER_DECISIONS.get((self.status, target))
        if owner_decision:
            raise OwnerDecision(f"task.update cannot move task {self.ref} from {self.status} to {target}; {owner_decision}")
        self.trigger_event(self.ProgressNoted, timestamp=now, notes=notes, status=target)

    def record_workflow_output(self, *, workflow: str, output: Any, now: datetime) -> str:
        """Stores one output of a workflow the task owns, under a file name unique within the task."""
        self.check_open()
        number = self.workflows.get(workflow, 0) + 1
        extension = "md" if isinstance(output, str) else "json"
        name = f"{workflow}_{now.astimezone(timezone.utc):%Y-%m-%dT%H%M%SZ}_{number}.{extension}"
        self.trigger_event(self.WorkflowOutputRecorded, timestamp=now, workflow=workflow, name=name, output=output)
        return name
