"""Subtasks inside a step (seed 002 §14): `task.add_subtask` under the spawn limits, what holds a subtask back (its
start, its blockers, a parent with the owner), and the parent following its children after every step that moved one.

`settle_subtasks` runs at the end of every step the bus applies (`processors/handlers/table.py`), so whatever moved a
subtask (a command, a signal, a timer, a model's answer, a close) updates its parent in the same unit of work.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from math import ceil
from typing import Any

from loopline.domain import ids
from loopline.domain.outreach import Escalate
from loopline.domain.safety_limits import SUBTASKS_PER_PARENT
from loopline.domain.status import TERMINAL, TRANSITIONS, TaskStatus
from loopline.domain.subtasks import (
    FINISHED,
    TAKEN_BY_PARENT,
    Child,
    Requirement,
    SpawnRefused,
    check_spawn,
    children_of,
    family_messages,
    open_blockers,
    over_subtask_limit,
    parent_status,
    why_derived,
)
from loopline.domain.task import Task
from loopline.domain.task_escalation import pipeline_paused
from loopline.domain.timers import TimerKind
from loopline.domain.timeutil import format_time
from loopline.processors.application import UnitOfWork
from loopline.processors.bus import Notice
from loopline.processors.handlers.commands_subtasks import TaskAddSubtask
from loopline.processors.handlers.escalation import escalate
from loopline.processors.handlers.loops_and_timers import close_task_loops, hand_back_actions, load_task, set_timer
from loopline.processors.handlers.model_calls import awaits_decision
from loopline.processors.messages import Message

CreateTask = Callable[[UnitOfWork, Message, Any], str]
Start = Callable[[UnitOfWork, Task, datetime], None]
"""`processors/handlers/readiness.py` `on_ready`: what starts a task (given, since that module imports this one)."""


def add_subtask(uow: UnitOfWork, msg: Message, cmd: TaskAddSubtask, *, create: CreateTask, start: Start) -> str:
    """Creates the subtask with `create` (`task.create`'s handler, every creation limit included, without starting
    it), links it to its parent, and starts it unless its start, a sibling or its parent holds it; a parent at its
    subtask limit goes to the owner instead."""
    if uow.get(ids.task_id(msg.tenant, cmd.task_id), Task) is not None:
        return f"task {cmd.task_id} already exists; nothing changed"
    parent = load_task(uow, msg.tenant, cmd.parent_id)
    parent.check_open()
    if parent.status is TaskStatus.PENDING_REVIEW:
        raise SpawnRefused(f"parent_id: task {parent.ref} waits for the owner's review; approve it before adding steps")
    check_spawn(parent_ref=parent.ref, parent_depth=parent.subtask_depth,
                spawned_this_evaluation=parent.spawned_since_evaluation, by=cmd.by)
    unknown = [ref for ref in cmd.depends_on if ref not in parent.subtasks]
    if unknown:
        raise SpawnRefused(f"depends_on: {', '.join(unknown)} is not a subtask of task {parent.ref}; name its subtasks")
    over = over_subtask_limit(parent.ref, len(parent.subtasks))
    if over is not None:
        escalate(uow, parent, Escalate(over, "subtasks_per_parent"), msg.at)
        return Notice(f"task {cmd.task_id} was not created: {over}; task {parent.ref} went to the owner")
    starts_at = cmd.starts_at if cmd.starts_at is not None and cmd.starts_at > msg.at else None
    lives = cmd.budget.days + (ceil((starts_at - msg.at) / timedelta(days=1)) if starts_at else 0)
    created = create(uow, msg, cmd.subtask(expires_in_days=min(lives, cmd.expires_in_days or lives)))
    child = uow.get(ids.task_id(msg.tenant, cmd.task_id), Task)
    if child is None:  # a creation limit held it, or the contact's open task of its type took its context
        return created
    child.link_to_parent(parent_ref=parent.ref, requirement=cmd.requirement, depends_on=list(cmd.depends_on),
                         depth=parent.subtask_depth + 1, starts_at=starts_at, budget_messages=cmd.budget.messages,
                         budget_turns=cmd.budget.turns, now=msg.at)
    if starts_at is not None and not child.is_acting:
        child.schedule_wakeup(f"{child.ref}/start", at=starts_at, loop_ref=None,
                              reason="a deferred subtask starts", now=msg.at)
        set_timer(uow, kind=TimerKind.TASK_WAKEUP, target_id=child.id, due=starts_at, now=msg.at)
        child.start_waiting(reason=f"a deferred subtask: it starts at {format_time(starts_at)}", now=msg.at)
    _hold_if_blocked(parent, child, tuple(cmd.depends_on), msg.at)
    parent.add_subtask(child, requirement=cmd.requirement, depends_on=list(cmd.depends_on), by=cmd.by, now=msg.at)
    # One Loopline works has its every step held by `subtask_hold`; one it starts by itself (a webhook, a to-do, a
    # report) acts in `start`, so it starts only when nothing holds it: else when its blockers finish or its parent is
    # back from the owner (`_start`), or at its deferred start's wake-up (`_settle_pass`).
    if child.status in (TaskStatus.READY, TaskStatus.EXECUTING) and (
            child.is_acting or subtask_hold(uow, child, msg.at) is None):
        start(uow, child, msg.at)
    follow_children(uow, parent, msg.at)
    return f"{created}: a {cmd.requirement} subtask of {parent.ref}"


SETTLE_PASSES = 4 + SUBTASKS_PER_PARENT
"""A step's effects on a family settle within these passes: a subtask that fails escalates its parent, which pauses its
other started subtasks, whose pauses the parent records (the fourth finds nothing); subtasks have none of their own.
A subtask that ends as it starts (an automation) lets the next in a chain start in the pass that records it: one
pass more for each of a parent's subtasks."""


def settle_subtasks(uow: UnitOfWork, *, start: Start) -> None:
    """After a step: every subtask the step changed is recorded on its parent, a finished one lets the siblings that
    waited for it start, the parent takes the status its children give it, a parent back from the owner lets the
    subtasks it held go on, and a closed one cancels those still open."""
    for _ in range(SETTLE_PASSES):
        if not _settle_pass(uow, start):
            return


def _settle_pass(uow: UnitOfWork, start: Start) -> bool:
    """One pass over the step's tasks; says whether it recorded anything (then the tasks it changed are looked at)."""
    tasks = [each for each in uow.stepped() if isinstance(each, Task) and each.pending_events]
    before = sum(len(task.pending_events) for task in tasks)
    parents: dict[Any, tuple[Task, datetime]] = {}
    ended: dict[Any, list[str]] = {}
    for task in tasks:
        now = task.pending_events[-1].timestamp
        if task.subtasks and task.is_closed:
            _cancel_open_subtasks(uow, task, now)
        elif task.subtasks and pipeline_paused(task):
            _pause_started(uow, task, now)
        elif task.subtasks:
            _resume_held(uow, task, now, start)
        if task.subtask_of is None:
            continue
        if (_woken_at_its_start(task, TaskStatus.READY) and _approved_unstarted(task)
                and subtask_hold(uow, task, now) is None):
            start(uow, task, now)
        parent = uow.get(ids.task_id(task.tenant, task.subtask_of["ref"]), Task)
        if parent is None or task.ref not in parent.subtasks or not parent.note_subtask(task, note=_note(task), now=now):
            continue
        parents[parent.id] = (parent, now)
        if task.is_closed:
            ended.setdefault(parent.id, []).append(f"{task.ref} {task.status}")
        if task.status in FINISHED:
            _release_dependents(uow, parent, task.ref, now, start)
        elif task.status is TaskStatus.EXECUTING:
            _hold_if_blocked(parent, task, tuple(task.subtask_of["depends_on"]), now)
            _pause_if_parent_escalated(parent, task, now)
            if task.status is TaskStatus.EXECUTING and _woken_at_its_start(task, TaskStatus.EXECUTING):
                start(uow, task, now)
    for parent, now in parents.values():
        follow_children(uow, parent, now)
        if parent.id in ended and parent.status is TaskStatus.EXECUTING:
            # §14.5: whoever plans the parent evaluates after every step that ends, when its plan is its turn (not
            # waiting on a step, nor with the owner); the wake-up tells its agent.
            parent.wake(f"{parent.ref}/subtasks/{parent.version}", cause="subtask_ended", now=now,
                        reason=f"subtask {', '.join(ended[parent.id])}; its subtasks make it {parent.subtasks_derived}")
    after = [each for each in uow.stepped() if isinstance(each, Task) and each.pending_events]
    return sum(len(task.pending_events) for task in after) > before


def follow_children(uow: UnitOfWork, parent: Task, now: datetime) -> None:
    """The parent takes the status §14.4 derives from its children; one with the owner stays there until the owner
    resumes it, a closed one stays closed, and one that cannot move there (a dormant parent cannot be escalated)
    keeps its own."""
    if parent.is_closed or parent.status is TaskStatus.ESCALATED or not parent.subtasks:
        return
    children = children_of(parent.subtasks)
    derived = parent_status(children)
    status = TAKEN_BY_PARENT[derived]
    if status is not parent.status and status not in TRANSITIONS[parent.status]:
        return
    reason = why_derived(derived, children)
    if status is TaskStatus.ESCALATED:
        escalate(uow, parent, Escalate(reason, "subtask_failed"), now)
    parent.follow_subtasks(derived=derived, status=status, reason=reason, now=now)


def subtask_hold(uow: UnitOfWork, task: Task, now: datetime) -> str | None:
    """Why a subtask Loopline works takes no step now: before its start (its step is filed for then), while a sibling
    it depends on has not finished, or while its parent is with the owner (each lets it go on); None when it may."""
    link = task.subtask_of
    if link is None:
        return None
    if link["starts_at"] is not None and link["starts_at"] > now:
        set_timer(uow, kind=TimerKind.TASK_STEP, target_id=task.id, due=link["starts_at"], now=now)
        return f"'{task.title}': a deferred subtask, it starts at {format_time(link['starts_at'])}"
    parent = uow.get(ids.task_id(task.tenant, link["ref"]), Task)
    if parent is None or task.ref not in parent.subtasks:
        return None
    if pipeline_paused(task, parent) is parent:
        parent.pause_subtask(task.ref, reason=f"{parent.ref} is with the owner", now=now)
        return f"'{task.title}': held while its parent {parent.ref} is with the owner"
    blockers = open_blockers(Child.of(task.ref, parent.subtasks[task.ref]), _siblings(parent))
    return f"'{task.title}': waits for subtask {', '.join(blockers)} to finish" if blockers else None


def family_budget(uow: UnitOfWork, task: Task) -> tuple[int, int] | None:
    """(Emails a parent and all its subtasks sent, the parent's budget) for the parent or one of its subtasks; None
    for a task in no family, or one whose parent has no budget (the agent works it)."""
    head = task if task.subtask_of is None else uow.get(ids.task_id(task.tenant, task.subtask_of["ref"]), Task)
    if head is None or head.outreach is None or not head.subtasks:
        return None
    return family_messages(head.messages_used, head.subtasks), head.outreach["budget_messages"]


def _siblings(parent: Task) -> dict[str, Child]:
    return {child.ref: child for child in children_of(parent.subtasks)}


def _note(task: Task) -> str:
    """What the owner is told of an optional step that failed (§14.6); a best-effort one fails silently."""
    assert task.subtask_of is not None
    if task.subtask_of["requirement"] == Requirement.OPTIONAL and task.status in (TaskStatus.ESCALATED,
                                                                                   TaskStatus.EXPIRED):
        return f"optional subtask {task.ref} {task.status}: the parent goes on without it"
    return ""


def _hold_if_blocked(parent: Task, child: Task, depends_on: tuple[str, ...], now: datetime) -> None:
    """A started subtask the agent works waits while a sibling it depends on has not finished (one Loopline works has
    its step held instead, `subtask_hold`)."""
    blockers = [ref for ref in depends_on if ref not in parent.subtasks or parent.subtasks[ref]["status"] not in FINISHED]
    if blockers and not child.is_acting:
        child.hold_subtask(blockers=blockers, reason=f"waits for subtask {', '.join(blockers)} to finish", now=now)


def _pause_if_parent_escalated(parent: Task, child: Task, now: datetime) -> None:
    """A started subtask the agent works waits while its parent is with the owner (§17.2: the whole pipeline pauses),
    and is woken at the owner's answer."""
    if pipeline_paused(child, parent) is parent and child.status is TaskStatus.EXECUTING and not child.is_acting:
        reason = f"its parent {parent.ref} is with the owner"
        child.hold_subtask(blockers=[], reason=reason, now=now)
        parent.pause_subtask(child.ref, reason=reason, now=now)


def _pause_started(uow: UnitOfWork, parent: Task, now: datetime) -> None:
    for ref, entry in parent.subtasks.items():
        if entry["status"] == TaskStatus.EXECUTING and not entry["paused"]:
            child = uow.get(ids.task_id(parent.tenant, ref), Task)
            assert child is not None
            _pause_if_parent_escalated(parent, child, now)


def _release_dependents(uow: UnitOfWork, parent: Task, finished: str, now: datetime, start: Start) -> None:
    """The subtasks that waited for `finished` start once nothing else holds them, or at the owner's answer while
    their parent is with the owner (§17.2)."""
    siblings = _siblings(parent)
    for child in siblings.values():
        if finished not in child.depends_on or child.status in TERMINAL or open_blockers(child, siblings):
            continue
        if pipeline_paused(parent):
            parent.pause_subtask(child.ref, reason=f"{parent.ref} is with the owner", now=now)
        else:
            _start(uow, parent, child.ref, f"subtask {', '.join(child.depends_on)} finished", now, start)


def _start(uow: UnitOfWork, parent: Task, ref: str, reason: str, now: datetime, start: Start) -> None:
    """A subtask free to go on: one Loopline works steps at once, one the agent works waiting only for its blockers is
    woken (the agent is told) and, of a kind Loopline starts by itself (a webhook, a to-do, a report), started."""
    task = uow.get(ids.task_id(parent.tenant, ref), Task)
    assert task is not None
    hand_back_actions(uow, task, now)
    if task.is_acting:
        set_timer(uow, kind=TimerKind.TASK_STEP, target_id=task.id, due=now, now=now)
    elif _waits_only_for_blockers(task, now):
        task.wake(f"{task.ref}/blockers", cause="subtask_unblocked", reason=reason, now=now)
        start(uow, task, now)
    elif _approved_unstarted(task) and subtask_hold(uow, task, now) is None:
        start(uow, task, now)


def _waits_only_for_blockers(task: Task, now: datetime) -> bool:
    starts_at = task.subtask_of["starts_at"] if task.subtask_of else None
    return (task.status is TaskStatus.WAITING and not task.open_loops and not task.wakeups
            and not awaits_decision(task.pending_decisions) and (starts_at is None or starts_at <= now))


def _approved_unstarted(task: Task) -> bool:
    """Approved while something held it (`owner.py` `approve_task`): still ready, and nothing Loopline starts by itself
    (a webhook, a to-do, a report) was asked for yet."""
    return (task.status is TaskStatus.READY and not task.is_acting and not task.open_loops
            and not awaits_decision(task.pending_decisions))


def _woken_at_its_start(task: Task, status: TaskStatus) -> bool:
    """Its deferred start's wake-up (filed by `add_subtask`) fired in this step and left it `status`: executing when
    it was waiting (created held), ready when the owner approved it before its start."""
    return any(isinstance(event, Task.WokenUp) and event.wake_ref == f"{task.ref}/start" and event.status == status
               for event in task.pending_events)


def _resume_held(uow: UnitOfWork, parent: Task, now: datetime, start: Start) -> None:
    for ref in parent.resume_subtasks(now=now):
        _start(uow, parent, ref, f"its parent {parent.ref} is back from the owner", now, start)


def _cancel_open_subtasks(uow: UnitOfWork, parent: Task, now: datetime) -> None:
    """A closed parent's goal is settled (met, given up or out of time): its steps still open are cancelled, so none
    acts for it any more."""
    for ref, entry in parent.subtasks.items():
        if TaskStatus(entry["status"]) in TERMINAL:
            continue
        child = uow.get(ids.task_id(parent.tenant, ref), Task)
        assert child is not None
        if not child.is_closed:
            reason = f"its parent {parent.ref} is {parent.status}"
            close_task_loops(uow, child, resolved_by="cancelled", reason=f"task cancelled: {reason}", now=now)
            child.cancel(reason=reason, now=now)
        parent.note_subtask(child, note="", now=now)

