"""The debate's prompts and its answer tool (seed 001 §4): each role sees the proposal and what the roles before it
said, and answers through one tool; the offline policy answers with `adapters/offline_debate.offline_answer`."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from loopline.domain.proposal import Proposal
from loopline.domain.proposal_rules import VERDICTS
from loopline.processors.ports import Prompt

ROLE_BRIEFS = {
    "proposer": "You propose this idea to a busy owner. Make the strongest honest case for it in two sentences.",
    "critic": "You are the red team. Challenge the idea: what would make it a waste of the owner's attention?",
    "arbiter": "You decide. Weigh the case and the challenge and give a verdict: strong_pass (show the owner), "
               "weak_pass (strengthen it and debate once more), fail (drop it) or undecided.",
}

DEBATE_TOOL: dict[str, Any] = {
    "name": "debate_answer",
    "description": "Your part in the debate of one proposal.",
    "input_schema": {
        "type": "object",
        "properties": {
            "argument": {"type": "string", "minLength": 1, "description": "What you say, two or three sentences."},
            "verdict": {"type": "string", "enum": list(VERDICTS), "description": "The arbiter's verdict only."},
        },
        "required": ["argument"],
    },
}


def debate_prompt(proposal: Proposal, request: dict[str, Any]) -> Prompt:
    """The role's brief as the system prompt; the proposal and the debate so far as the one user message."""
    lines = [f"Proposal: {proposal.title} ({proposal.impact} impact, gap: {proposal.theme})", proposal.summary]
    for past in proposal.rounds:
        lines.append(f"Round {past['round']}: proposer: {past['proposer']} | critic: {past['critic']} | "
                     f"arbiter ({past['verdict']}): {past['arbiter']}")
    lines += [f"This round's {role}: {text}" for role, text in proposal.round_answers.items()]
    system = ROLE_BRIEFS[request["role"]]
    messages = ({"role": "user", "content": "\n".join(lines)},)
    digest = hashlib.sha256((system + json.dumps(messages, sort_keys=True)).encode("utf-8")).hexdigest()
    return Prompt(system=system, messages=messages, digest=digest)


def debate_answer(content: list[dict[str, Any]]) -> tuple[str, str | None] | str:
    """The argument and verdict of the reply's `debate_answer` call, or why the reply cannot count as one (then the
    call is failed and asked again)."""
    calls = [block for block in content if block.get("type") == "tool_use" and block.get("name") == DEBATE_TOOL["name"]]
    if not calls:
        return "the model answered without the debate_answer tool"
    given = calls[0].get("input") or {}
    argument, verdict = given.get("argument"), given.get("verdict")
    if not isinstance(argument, str) or not argument.strip():
        return "the debate_answer has no argument"
    return argument, verdict if verdict in VERDICTS else None



def debate_facts(proposal: Proposal, request: dict[str, Any]) -> dict[str, Any]:
    """What the offline policy decides from (it reads no prompt): the proposal, the round and the role asked."""
    return {"title": proposal.title, "impact": proposal.impact, "round": request["round"], "role": request["role"]}
