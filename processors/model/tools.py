"""The decision points a model answers, one tool each (seed 002 §6.5, §18): their JSON schemas, which
the Anthropic adapter forces the model to call, and the check every answer passes before it is used.

The schemas are the one statement of each answer's shape: `validate` reads them, so a field added
here is asked for and checked at once.
"""

from __future__ import annotations

import math
import re
from typing import Any

from loopline.domain.safety_limits import DRAFT_BODY_CHARS, DRAFT_SUBJECT_CHARS, REPORT_CHARS

_CONFIDENCE = {"type": "number", "minimum": 0, "maximum": 1,
               "description": "How sure you are of this decision, from 0 to 1; below 0.5 the owner reviews it."}
_REASONING = {"type": "string", "minLength": 1,
              "description": "Two or three sentences on what you observed and why you decided this."}

_SUBJECT = {"type": "string", "minLength": 1, "maxLength": DRAFT_SUBJECT_CHARS, "pattern": r"^[^\r\n]*$",
            "description": "The email's subject line: one line."}
_BODY = {"type": "string", "minLength": 1, "maxLength": DRAFT_BODY_CHARS}
BOUNDED = ("subject", "body", "reply_body", "title", "content")
"""The fields a message or a report is made of: their bounds hold whichever adapter answered (`check_bounds`)."""

DECISIONS = ("reply", "close", "escalate", "wait", "dont_know")

TOOLS: dict[str, dict[str, Any]] = {
    "draft_message": {
        "name": "draft_message",
        "description": "Write the next message to the contact: plain text, as a real person at the business writes it.",
        "input_schema": {
            "type": "object",
            "properties": {
                "subject": _SUBJECT,
                "body": {**_BODY, "description": "The email's text, greeting and sign-off included; no task title or id."},
                "confidence": _CONFIDENCE,
                "reasoning": _REASONING,
            },
            "required": ["subject", "body", "confidence", "reasoning"],
            "additionalProperties": False,
        },
    },
    "evaluate_reply": {
        "name": "evaluate_reply",
        "description": "Decide what to do about the contact's reply: answer it, close the task with an outcome, "
                       "hand it to the owner, or wait. When unsure, escalate.",
        "input_schema": {
            "type": "object",
            "properties": {
                "decision": {"type": "string", "enum": list(DECISIONS),
                             "description": "reply: answer with reply_body; close: the goal is settled, give outcome; "
                                            "escalate: the owner must decide; wait: follow up after wait_days; "
                                            "dont_know: you cannot tell, ask the owner your question."},
                "outcome": {"type": "string", "minLength": 1,
                            "description": "With close: one of the outcome codes listed in the prompt."},
                "reply_body": {**_BODY, "description": "With reply: the text to send, greeting and sign-off included."},
                "wait_days": {"type": "integer", "minimum": 1, "maximum": 60,
                              "description": "With wait: days until the next follow-up (3 if not given)."},
                "question": {"type": "string", "minLength": 1, "maxLength": 500,
                             "description": "With dont_know: what you would need the owner to tell you."},
                "goal_progress": {"type": "integer", "minimum": 0, "maximum": 100,
                                  "description": "How far the goal is reached now, 0 to 100, judged against the "
                                                 "evaluation rules (a progressive goal: the share of its milestones)."},
                "confidence": _CONFIDENCE,
                "reasoning": _REASONING,
            },
            "required": ["decision", "confidence", "reasoning"],
            "additionalProperties": False,
        },
    },
    "write_report": {
        "name": "write_report",
        "description": "Produce the task's deliverable (a research task, seed 002 §31.4): a report in markdown, and the "
                       "outcome it reaches.",
        "input_schema": {
            "type": "object",
            "properties": {
                "title": {**_SUBJECT, "description": "The report's title: one line."},
                "content": {"type": "string", "minLength": 1, "maxLength": REPORT_CHARS,
                            "description": "The report in markdown, as the deliverable spec in the prompt asks."},
                "outcome": {"type": "string", "minLength": 1,
                            "description": "One of the outcome codes listed in the prompt (too little data: say so)."},
                "confidence": _CONFIDENCE,
                "reasoning": _REASONING,
            },
            "required": ["title", "content", "outcome", "confidence", "reasoning"],
            "additionalProperties": False,
        },
    },
    "score_urgency": {
        "name": "score_urgency",
        "description": "Score how urgent the task is for the business, from its title, description, contact and "
                       "context: the owner's priority rules read the score to set the task's priority.",
        "input_schema": {
            "type": "object",
            "properties": {
                "urgency": {"type": "number", "minimum": 0, "maximum": 1,
                            "description": "0: it can wait weeks; 0.5: this week; 1: it must be handled today."},
                "confidence": _CONFIDENCE,
                "reasoning": _REASONING,
            },
            "required": ["urgency", "confidence", "reasoning"],
            "additionalProperties": False,
        },
    },
}

REQUIRED_WITH: dict[str, dict[str, str]] = {
    "evaluate_reply": {"reply": "reply_body", "close": "outcome", "dont_know": "question"},
}
"""Fields a decision needs beyond the schema's own `required`: decision value -> the field it needs."""


class InvalidToolInput(ValueError):
    """A model's answer does not fit its tool's schema; the text names the field."""


_TYPES: dict[str, tuple[type, ...]] = {"string": (str,), "number": (int, float), "integer": (int,), "object": (dict,)}


def _check(name: str, value: Any, schema: dict[str, Any]) -> None:
    expected = schema["type"]
    if isinstance(value, bool) or not isinstance(value, _TYPES[expected]):
        article = "an" if expected[0] in "aeiou" else "a"
        raise InvalidToolInput(f"{name} must be {article} {expected}, not {type(value).__name__} {value!r:.80}")
    if isinstance(value, float) and not math.isfinite(value):  # NaN passes every bound: refuse it before they are read
        raise InvalidToolInput(f"{name} {value!r} is not a finite number")
    if "enum" in schema and value not in schema["enum"]:
        raise InvalidToolInput(f"{name} {value!r:.80} is not one of {', '.join(schema['enum'])}")
    if "minLength" in schema and len(value.strip()) < schema["minLength"]:
        raise InvalidToolInput(f"{name} is empty")
    if "maxLength" in schema and len(value) > schema["maxLength"]:
        raise InvalidToolInput(f"{name} is {len(value)} characters, more than {schema['maxLength']}")
    if "pattern" in schema and not re.fullmatch(schema["pattern"], value):
        raise InvalidToolInput(f"{name} holds a line break: it must be one line")
    if "minimum" in schema and value < schema["minimum"] or "maximum" in schema and value > schema["maximum"]:
        raise InvalidToolInput(f"{name} {value!r} is outside {schema.get('minimum')}–{schema.get('maximum')}")


def validate(point: str, tool_input: Any) -> dict[str, Any]:
    """The tool input as a plain dict if it fits `point`'s schema; InvalidToolInput naming the field otherwise."""
    if point not in TOOLS:
        raise InvalidToolInput(f"unknown decision point {point!r}; known: {', '.join(TOOLS)}")
    schema = TOOLS[point]["input_schema"]
    if not isinstance(tool_input, dict):
        raise InvalidToolInput(f"{point} input must be an object, not {type(tool_input).__name__}")
    unknown = sorted(set(tool_input) - set(schema["properties"]))
    if unknown:
        raise InvalidToolInput(f"{point}: unknown field(s) {', '.join(unknown)}")
    for field in schema["required"]:
        if field not in tool_input:
            raise InvalidToolInput(f"{point}: {field} is missing")
    for field, value in tool_input.items():
        _check(f"{point}.{field}", value, schema["properties"][field])
    needed = REQUIRED_WITH.get(point, {}).get(tool_input.get("decision", ""))
    if needed and needed not in tool_input:
        raise InvalidToolInput(f"{point}: {needed} is missing (decision {tool_input['decision']} needs it)")
    return dict(tool_input)


def check_bounds(point: str, output: dict[str, Any]) -> None:
    """The message an answer writes within its tool's bounds (length, a one-line subject), InvalidToolInput naming
    the field otherwise: checked again where any adapter's answer is used, fakes and future adapters included."""
    properties = TOOLS[point]["input_schema"]["properties"] if point in TOOLS else {}
    for field in BOUNDED:
        if field in properties and field in output:
            _check(f"{point}.{field}", output[field], properties[field])


def is_confidence(value: Any) -> bool:
    """A confidence the pipeline may act on: a number from 0 to 1, as the tools' schema says (NaN is in no range)."""
    return isinstance(value, int | float) and not isinstance(value, bool) and 0 <= value <= 1
