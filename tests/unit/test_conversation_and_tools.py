"""A task's conversation from its events, and the check every model answer passes."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from loopline.domain.conversation import Turn, conversation_of
from loopline.domain.task import Task
from loopline.processors.model.tools import TOOLS, InvalidToolInput, validate
from tests.unit.test_task_lifecycle import make_task

NOW = datetime(2026, 3, 2, 9, 0, tzinfo=timezone.utc)


def test_the_conversation_has_who_wrote_what_and_when_in_order() -> None:
    task: Task = make_task()
    task.record_action(action="send_email", details={"to": "sam@example.com", "subject": "Checking in", "body": "Hey Sam!"},
                       summary="Sent touch 1", performed_by="loopline", now=NOW)
    task.receive_signal(signal_ref="s1", signal_type="email.received", now=NOW + timedelta(days=1),
                        data={"sender": "sam@example.com", "body": "Maybe next week"}, resolved_loops=[])
    task.receive_signal(signal_ref="s2", signal_type="slack.message", data={"text": "unrelated"}, resolved_loops=[],
                        now=NOW + timedelta(days=1))
    task.escalate(reason="vague reply", cause="decision", now=NOW + timedelta(days=2))
    task.give_guidance(text="Offer the Saturday class", now=NOW + timedelta(days=3))
    task.record_action(action="open_pull_request", details={"resource_id": "7"}, summary="PR", performed_by="agent",
                       now=NOW + timedelta(days=3))

    turns = conversation_of(task.collect_events())

    assert turns == (
        Turn("agent", NOW, "Subject: Checking in\n\nHey Sam!"),
        Turn("contact", NOW + timedelta(days=1), "Maybe next week"),
        Turn("system", NOW + timedelta(days=2), "Handed to the owner: vague reply"),
        Turn("owner", NOW + timedelta(days=3), "Offer the Saturday class"),
    )


def test_both_tools_are_object_schemas_named_after_their_decision_point() -> None:
    for point, tool in TOOLS.items():
        assert tool["name"] == point and tool["input_schema"]["type"] == "object"
        assert {"confidence", "reasoning"} <= set(tool["input_schema"]["required"])


@pytest.mark.parametrize(("tool_input", "error"), [
    ({"decision": "shrug", "confidence": 0.5, "reasoning": "r"}, "evaluate_reply.decision 'shrug' is not one of"),
    ({"decision": "wait", "confidence": "high", "reasoning": "r"}, "evaluate_reply.confidence must be a number"),
    ({"decision": "wait", "confidence": True, "reasoning": "r"}, "evaluate_reply.confidence must be a number"),
    ({"decision": "wait", "wait_days": 2.5, "confidence": 0.5, "reasoning": "r"}, "wait_days must be an integer"),
    ({"decision": "reply", "confidence": 0.5, "reasoning": "r"}, "reply_body is missing"),
    ({"decision": "wait", "confidence": 0.5, "reasoning": " "}, "evaluate_reply.reasoning is empty"),
    ({"decision": "wait", "confidence": 0.5, "reasoning": "r", "mood": "x"}, "unknown field(s) mood"),
    (["not", "an", "object"], "must be an object"),
])
def test_an_answer_off_the_schema_is_refused_naming_the_field(tool_input, error: str) -> None:
    with pytest.raises(InvalidToolInput, match=error.replace("(", r"\(").replace(")", r"\)")):
        validate("evaluate_reply", tool_input)


def test_a_well_formed_answer_passes_unchanged() -> None:
    answer = {"decision": "close", "outcome": "verbal_commitment", "confidence": 0.7, "reasoning": "Named Tuesday."}
    assert validate("evaluate_reply", answer) == answer
