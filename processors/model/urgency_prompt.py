"""What the model is asked for the urgency score (seed 004 §3, `domain/task_priority.py`): a decision point asked
for a new task only when the tenant's priority rules read a score (`urgency_at_least`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from loopline.domain.task_priority import SCORE_URGENCY

if TYPE_CHECKING:
    from loopline.processors.model.prompts import Situation


def urgency_ask(s: Situation) -> str:
    """What is asked now: a score from the task as its creator wrote it, nothing sent to anyone."""
    return ("WHAT TO DO NOW: Score how urgent this task is for the business, from 0 (it can wait weeks) to 1 (it "
            "must be handled today), judging only from the task above: its words, its contact and its context. "
            f"Nothing is sent to anyone; the owner's priority rules read your score. Use the {SCORE_URGENCY} tool.")

