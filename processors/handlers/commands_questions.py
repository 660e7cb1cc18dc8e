"""Escalation questions through the log (seed 001 §6): the command models of `question.ask` (an agent stuck on a
task asks the owner) and `question.answer` (the owner's reply, recorded as the decision)."""

from __future__ import annotations

from pydantic import Field

from loopline.domain.question_ladder import MAX_OPTIONS
from loopline.processors.handlers.command_fields import Id, ShortText, Strict, Text


class QuestionAsk(Strict):
    question_id: Id = Field(description="the question's id, unique in the tenant; asking it again changes nothing")
    task_id: Id = Field(description="the task the asker is stuck on; the owner's notices come on it")
    asker: ShortText = Field(description="who asks (an agent's name), as the owner reads it")
    stuck_on: ShortText = Field(description="what the asker is stuck on, in a line")
    question: Text = Field(description="the question the owner answers")
    options: list[ShortText] = Field(default_factory=list, max_length=MAX_OPTIONS,
                                     description="the answers offered, lettered A, B, … for the owner's reply")
    blocked_tasks: list[Id] = Field(default_factory=list, description="the tasks waiting for the answer")


class QuestionAnswer(Strict):
    question_id: Id = Field(description="a question asked with `question.ask`, not answered yet")
    answer: Text = Field(description="an option's letter, optionally followed by reasoning (`B, lock-in is fine`), "
                         "or free text; free text to a question with options is kept and logged for review")
