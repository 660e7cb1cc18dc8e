"""The offline policy's urgency score (the `score_urgency` decision point): deterministic, from the words of the task
as its creator wrote them (its title and description, as the prompt gives them to a model). Each distinct urgent word
found adds to a base score, so the same task always gets the same score:

| urgent words found | urgency |
|--------------------|---------|
| none               | 0.2     |
| one                | 0.55    |
| two or more        | 0.9     |
"""

from __future__ import annotations

import re
from typing import Any

from loopline.processors.ports import DecisionRequest

URGENT_WORDS = ("urgent", "asap", "immediately", "today", "overdue", "deadline", "final notice", "emergency")
SCORES = (0.2, 0.55, 0.9)
_TASK_LINES = ("- Title: ", "- Description: ")


def score_urgency(request: DecisionRequest) -> dict[str, Any]:
    """The score and why, as the `score_urgency` tool's input."""
    words = " ".join(line.removeprefix(prefix) for line in _user_text(request).splitlines()
                     for prefix in _TASK_LINES if line.startswith(prefix)).lower()
    found = [word for word in URGENT_WORDS if re.search(rf"\b{re.escape(word)}\b", words)]
    urgency = SCORES[min(len(found), len(SCORES) - 1)]
    because = f"the task says {', '.join(repr(word) for word in found)}" if found else "the task names nothing urgent"
    return {"urgency": urgency, "confidence": 0.6,
            "reasoning": f"Offline urgency score: {because}; no model was asked."}


def _user_text(request: DecisionRequest) -> str:
    return "\n".join(str(message["content"]) for message in request.prompt.messages if message["role"] == "user")
