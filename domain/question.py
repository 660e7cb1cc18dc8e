"""The Question aggregate: an escalation question to the owner (seed 001 §6), its options, the SLA ladder it climbs
while unanswered, and the answer recorded as the decision."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from eventsourcing.domain import Aggregate

from loopline.domain.base import LooplineAggregate, TenantEvent
from loopline.domain.errors import DomainError
from loopline.domain.question_ladder import LADDER, check_question, next_due, read_answer, rungs_due

PAUSE_ACTION = "pause"


class AlreadyAnswered(DomainError):
    """The question was answered: a second answer would change a decision others already acted on."""


class UnknownQuestion(DomainError):
    """An answer to a question the tenant was never asked."""


class NotAnAnswer(DomainError):
    """An empty reply: the owner is asked a clarifying follow-up instead of a decision being recorded."""


class Question(LooplineAggregate):
    OWNER = {"tenant": "tenant", "question_ref": "ref"}

    class Asked(Aggregate.Created):
        tenant: str
        question_ref: str
        task_ref: str | None
        asker: str
        stuck_on: str
        question: str
        options: list[str]
        blocked_tasks: list[str]

    class Climbed(TenantEvent):
        question_ref: str
        rung: int
        action: str
        urgency: str

        def apply(self, question: Question) -> None:
            question.taken = self.rung + 1
            question.urgency = self.urgency

    class Answered(TenantEvent):
        question_ref: str
        option: str | None
        text: str
        for_review: bool

        def apply(self, question: Question) -> None:
            question.answer = {"option": self.option, "text": self.text, "for_review": self.for_review}

    def __init__(self, tenant: str, question_ref: str, task_ref: str | None, asker: str, stuck_on: str, question: str,
                 options: list[str], blocked_tasks: list[str]) -> None:
        self.tenant = tenant
        self.ref = question_ref
        self.task_ref = task_ref
        self.asker = asker
        self.stuck_on = stuck_on
        self.question = question
        self.options = tuple(options)
        self.blocked_tasks = tuple(blocked_tasks)
        self.taken = 0
        self.urgency = "normal"
        self.answer: dict[str, Any] | None = None

    @classmethod
    def ask(cls, *, id: Any, tenant: str, question_ref: str, task_ref: str | None, asker: str,  # noqa: A002
            stuck_on: str, question: str, options: tuple[str, ...], blocked_tasks: tuple[str, ...],
            now: datetime) -> Question:
        check_question(question, options)
        return cls._create(cls.Asked, id=id, timestamp=now, tenant=tenant, question_ref=question_ref,
                           task_ref=task_ref, asker=asker, stuck_on=stuck_on, question=question,
                           options=list(options), blocked_tasks=list(blocked_tasks))

    @property
    def asked_at(self) -> datetime:
        return self.created_on

    @property
    def is_open(self) -> bool:
        return self.answer is None

    @property
    def is_paused(self) -> bool:
        """The ladder reached its pause: the loop waits for the owner's answer."""
        return self.is_open and any(rung.action == PAUSE_ACTION for rung in LADDER[:self.taken])

    @property
    def next_due(self) -> datetime | None:
        """When its timer next fires: never once it is answered or the ladder is climbed."""
        return next_due(self.asked_at, taken=self.taken) if self.is_open else None

    def climb(self, now: datetime) -> tuple[str, ...]:
        """Takes every rung reached by `now` (a late timer misses none); returns their actions, none once answered,
        so a timer fired twice changes nothing."""
        if not self.is_open:
            return ()
        due = rungs_due(self.asked_at, now, taken=self.taken)
        for rung in due:
            self.trigger_event(self.Climbed, timestamp=now, rung=LADDER.index(rung), action=rung.action,
                               urgency=rung.urgency)
        return tuple(rung.action for rung in due)

    def record_answer(self, reply: str, now: datetime) -> None:
        """The owner's reply as the decision: an option picked by its letter, or free text (logged for review when
        the question offered options)."""
        if not self.is_open:
            raise AlreadyAnswered(f"question {self.ref}: already answered; ask a new question to change the decision")
        answer = read_answer(reply, self.options)
        if answer is None:
            raise NotAnAnswer(f"answer: question {self.ref} needs a reply (an option letter or your own words)")
        self.trigger_event(self.Answered, timestamp=now, option=answer.option, text=answer.text,
                           for_review=answer.for_review)
