"""The owner's answers (seed 002 §17.2, Agent Inbox's accept / edit / respond / ignore): approve a draft as it is
or edited, write to the contact in their own words, or take the task over."""

from __future__ import annotations

from loopline.domain.errors import DomainError
from loopline.domain.reply_routing import unanswered_replies
from loopline.domain.status import TaskStatus
from loopline.domain.task import Task
from loopline.domain.task_review import NothingToAnswer
from loopline.domain.task_types import OWNER_HANDLED, task_type
from loopline.processors.application import UnitOfWork
from loopline.processors.handlers.commands_types import TaskApprove, TaskReply, TaskTakeover
from loopline.processors.handlers.loops_and_timers import close_task_loops, hand_back_actions, load_task, task_history
from loopline.processors.handlers.outreach import OWNER, on_reply, send_message
from loopline.processors.handlers.readiness import on_ready
from loopline.processors.handlers.subtasks import subtask_hold
from loopline.processors.handlers.suppression import check_owner_may_email
from loopline.processors.messages import Message


class NotStarted(DomainError):
    """The agent has not started the task: there is nothing of its to take over."""


def approve_task(uow: UnitOfWork, msg: Message, cmd: TaskApprove) -> str:
    """A proposal becomes ready (with the owner's first message, if edited); an escalated task's held-back
    draft goes to the contact at once."""
    task = load_task(uow, msg.tenant, cmd.task_id)
    if task.status is TaskStatus.ESCALATED:
        check_owner_may_email(uow, task)
        return _send_held_draft(uow, msg, task, cmd)
    task.approve(reason=cmd.reason or "approved by owner", now=msg.at)
    if cmd.draft is not None:
        task.edit_first_draft(subject=cmd.draft.subject, body=cmd.draft.body, now=msg.at)
    elif task.is_acting and (waiting := unanswered_replies(task_history(uow, task))):
        # The contact wrote during the review: answer them first.
        on_reply(uow, task, signal_ref=waiting[-1].signal_ref, data=waiting[-1].data, now=msg.at)
    # A subtask Loopline starts by itself (a webhook, a to-do, a report) acts as it starts, so while its start, a
    # sibling or its parent holds it, it stays ready: `processors/handlers/subtasks.py` starts it once nothing does.
    # One Loopline works has its every step held by `subtask_hold` instead.
    held = None if task.is_acting else subtask_hold(uow, task, msg.at)
    if held is None:
        on_ready(uow, task, msg.at)
    return (f"approved {task.ref}" + (f"; {held}" if held else "")
            + ("; your draft is its first message, sent at the next tick" if cmd.draft else ""))


def _send_held_draft(uow: UnitOfWork, msg: Message, task: Task, cmd: TaskApprove) -> str:
    held = task.held_draft
    if held is None:
        raise NothingToAnswer(
            f"task {task.ref} is escalated with no draft held back to approve: write to the contact with task.reply, "
            "let the agent go on with task.guidance, or close it with task.takeover")
    if cmd.draft is None:
        # Marked approved: should a send limit defer it, it still goes out when the limit frees up, in any mode.
        draft = {**held, "decided_by": f"{held.get('decided_by') or 'the agent'}, approved by the owner",
                 "approved": True}
    else:
        draft = {**held, "subject": cmd.draft.subject, "body": cmd.draft.body, "decided_by": OWNER, "by": OWNER}
    task.answer_for_owner(how="approved" if cmd.draft is None else "edited",
                          reason=cmd.reason or "approved by owner", now=msg.at)
    hand_back_actions(uow, task, msg.at)
    return send_message(uow, task, draft=draft, touch=held.get("touch") or max(task.touch, 1), now=msg.at,
                        reply=bool(held.get("reply")))


def reply_to_contact(uow: UnitOfWork, msg: Message, cmd: TaskReply) -> str:
    """The owner's words go to the contact: an answer once the contact has written (the cadence stays stopped),
    else the cadence's next touch in the agent's place (the touches after it follow as planned)."""
    task = load_task(uow, msg.tenant, cmd.task_id)
    check_owner_may_email(uow, task)
    task.answer_for_owner(how="wrote", reason="the owner wrote to the contact", now=msg.at)
    hand_back_actions(uow, task, msg.at)
    answer = task.touch > 0 and task.next_touch_at is None  # a reply stopped the cadence
    draft = {"subject": cmd.subject or "", "body": cmd.body, "decided_by": OWNER, "by": OWNER}
    return send_message(uow, task, draft=draft, touch=task.touch if answer else task.touch + 1, now=msg.at,
                        reply=answer)


def take_over(uow: UnitOfWork, msg: Message, cmd: TaskTakeover) -> str:
    """The agent's part ends: loops close and the task completes with outcome `owner_handled`."""
    task = load_task(uow, msg.tenant, cmd.task_id)
    task.check_open()
    if task.status in (TaskStatus.PENDING_REVIEW, TaskStatus.READY):
        raise NotStarted(f"task {task.ref} is {task.status}: the agent has not started it; stop it with "
                         + ("task.reject" if task.status is TaskStatus.PENDING_REVIEW else "task.cancel"))
    reason = cmd.reason or "the owner took over"
    close_task_loops(uow, task, resolved_by="task_completed", reason=f"the owner took over: {reason}", now=msg.at)
    outcome = task_type(task.task_type).outcome(OWNER_HANDLED.code) or OWNER_HANDLED
    task.set_outcome(code=outcome.code, kind=outcome.kind, provisional=False, reason=reason, now=msg.at)
    task.complete(summary=f"{outcome.code}: {reason}", now=msg.at)
    return f"took over {task.ref}: closed as {outcome.code}"
