"""The offline policy's answers to the brain's calls (processors/handlers/brain_calls.py), one function per call
kind: deterministic, so the same request always gets the same answer and everything works without a key.

The synthesis run (seed 000 Part 3) is a morning brief (`domain/synthesis_context.morning_brief`: expired loops,
due-soon items, stalled tasks) through `send_brief`, then one decision per waiting escalation while the run's
budget lasts (a loop's escalation is extended: the task gets another turn; any other goes to the owner with
`notify`), and `schedule_next_run` in 24 hours, all in one turn.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from loopline.adapters.offline_debate import offline_answer
from loopline.domain.safety_limits import SYNTHESIS_ACTIONS_PER_RUN
from loopline.domain.synthesis_context import morning_brief
from loopline.processors.ports import Conversation

NEXT_RUN_HOURS = 24


def _call(request: Conversation, place: int, name: str, **tool_input: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": f"{request.request_ref}/{place}", "name": name, "input": tool_input}


def synthesis(request: Conversation) -> list[dict[str, Any]]:
    facts = request.facts
    wanted: list[tuple[str, dict[str, Any]]] = []
    brief = morning_brief(facts["snapshot"])
    if brief is not None:
        wanted.append(("send_brief", {"text": brief}))
    for escalation in facts["escalations"]:
        decision = "extend" if escalation.get("loop_ref") else "notify"
        wanted.append(("decide_escalation", {"task_ref": escalation["task_ref"], "decision": decision,
                                             "note": escalation["reason"]}))
    budget = SYNTHESIS_ACTIONS_PER_RUN - facts["actions_taken"]
    calls = [_call(request, place, name, **args) for place, (name, args) in enumerate(wanted[:budget])]
    calls.append(_call(request, len(calls), "schedule_next_run", in_hours=NEXT_RUN_HOURS,
                       reason="the offline policy looks again in a day"))
    return calls


def debate(request: Conversation) -> list[dict[str, Any]]:
    """One debate role's answer (adapters/offline_debate.py): the same proposal, round and role, the same answer."""
    return [_call(request, 0, "debate_answer", **offline_answer(request.facts))]


OFFLINE_ANSWERS: dict[str, Callable[[Conversation], list[dict[str, Any]]]] = {"synthesis": synthesis, "debate": debate}
"""Each brain call kind's deterministic answer: its content blocks."""
