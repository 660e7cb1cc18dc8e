"""Escalation questions to the owner (seed 001 §6): asked on a task, climbed up the SLA ladder by their timer while
unanswered (the owner is asked at 30 min, urgently at 2 h and 24 h; at 8 h the question's tasks are paused until it
is answered), answered once."""

from __future__ import annotations

from datetime import datetime

from loopline.domain import ids
from loopline.domain.question import PAUSE_ACTION, Question, UnknownQuestion
from loopline.domain.question_ladder import render_question
from loopline.domain.task import Task
from loopline.domain.timers import TimerKind
from loopline.domain.wording import when
from loopline.processors.application import UnitOfWork
from loopline.processors.handlers.loops_and_timers import load_task, set_timer
from loopline.processors.handlers.commands_questions import QuestionAnswer, QuestionAsk
from loopline.processors.handlers.task_controls import pause_task_now, resume_task_now
from loopline.processors.messages import Message, TimerFired
from loopline.processors.ports import Drafter

OWNER_ASKED = {"ask": "question", "resend_urgent": "question_urgent", "re_escalate": "question_re_escalated"}
"""The rungs that put the question before the owner, and the kind of the notice each sends."""


def ask_question(uow: UnitOfWork, *, tenant: str, question_ref: str, task_ref: str, asker: str, stuck_on: str,
                 question: str, options: tuple[str, ...], blocked_tasks: tuple[str, ...], now: datetime) -> Question:
    """The question, asked once (asking it again returns it unchanged), with the timer of its first rung."""
    question_id = ids.question_id(tenant, question_ref)
    found = uow.get(question_id, Question)
    if found is not None:
        return found
    load_task(uow, tenant, task_ref)
    asked = uow.add(Question.ask(id=question_id, tenant=tenant, question_ref=question_ref, task_ref=task_ref,
                                 asker=asker, stuck_on=stuck_on, question=question, options=options,
                                 blocked_tasks=blocked_tasks, now=now))
    set_timer(uow, kind=TimerKind.QUESTION_LADDER, target_id=question_id, due=asked.next_due, now=now)
    return asked


def _waiting_tasks(uow: UnitOfWork, question: Question) -> list[Task]:
    """The open tasks that wait for the answer: the one it was asked on and the blocked ones Loopline knows."""
    refs = dict.fromkeys(ref for ref in (question.task_ref, *question.blocked_tasks) if ref is not None)
    found = (uow.get(ids.task_id(question.tenant, ref), Task) for ref in refs)
    return [task for task in found if task is not None and not task.is_closed]


def _paused_by(question: Question) -> str:
    return f"question {question.ref}"


def climb_question(uow: UnitOfWork, timer: TimerFired, drafter: Drafter) -> str | None:
    """Takes the rungs due; the owner reads the question at the rungs that ask them, and the next rung's timer is
    filed. Nothing once it is answered, so a timer fired twice does nothing more."""
    question = uow.get(timer.target_id, Question)
    if question is None:
        return None
    taken = question.climb(timer.now)
    if not taken:
        return None
    task = load_task(uow, question.tenant, question.task_ref)
    for action in taken:
        if action in OWNER_ASKED:
            task.notify_user(kind=OWNER_ASKED[action], message=render_question(
                asker=question.asker, task_title=task.title, stuck_on=question.stuck_on, question=question.question,
                options=question.options, blocked=len(question.blocked_tasks), urgency=question.urgency),
                now=timer.now, question_ref=question.ref)
    if PAUSE_ACTION in taken:
        for waiting in _waiting_tasks(uow, question):
            pause_task_now(uow, question.tenant, waiting.ref, by=_paused_by(question), now=timer.now,
                           reason=f"question {question.ref} unanswered for 8 h: the task waits for the owner's answer")
    if question.next_due is not None:
        set_timer(uow, kind=TimerKind.QUESTION_LADDER, target_id=question.id, due=question.next_due, now=timer.now)
    return f"question {question.ref}: {', '.join(taken)}"


def answer_question(uow: UnitOfWork, *, tenant: str, question_ref: str, reply: str, now: datetime) -> str:
    """Records the owner's reply as the question's decision."""
    question = uow.get(ids.question_id(tenant, question_ref), Question)
    if question is None:
        raise UnknownQuestion(f"question_id: tenant {tenant!r} has no question {question_ref!r}")
    question.record_answer(reply, now)
    answer = question.answer
    picked = answer["option"] or ("free text, logged for review" if answer["for_review"] else "free text")
    resumed = [task.ref for task in _waiting_tasks(uow, question)
               if resume_task_now(uow, tenant, task.ref, reason=f"question {question_ref} answered", by="owner",
                                  now=now, paused_by=_paused_by(question)) is not None]
    return f"question {question_ref}: answered ({picked})" + (f"; resumed {', '.join(resumed)}" if resumed else "")


def ask(uow: UnitOfWork, msg: Message, cmd: QuestionAsk) -> str:
    asked = ask_question(uow, tenant=msg.tenant, question_ref=cmd.question_id, task_ref=cmd.task_id, asker=cmd.asker,
                         stuck_on=cmd.stuck_on, question=cmd.question, options=tuple(cmd.options),
                         blocked_tasks=tuple(cmd.blocked_tasks), now=msg.at)
    if asked.next_due is None:
        return f"question {asked.ref}: already answered or its ladder climbed; nothing asked again"
    return (f"question {asked.ref}: asked on {asked.task_ref}; unanswered, it climbs its ladder from "
            f"{when(asked.next_due)}")


def answer(uow: UnitOfWork, msg: Message, cmd: QuestionAnswer) -> str:
    return answer_question(uow, tenant=msg.tenant, question_ref=cmd.question_id, reply=cmd.answer, now=msg.at)
