"""The debate's prompts and its answer tool (seed 001 §4): each role sees the proposal and what the roles before it
said, and answers through one tool; the offline policy answers with `adapters/offline_debate.offline_answer`."""

from __future__ import annotations

from typing import Any

from loopline.domain.proposal import Proposal
from loopline.domain.proposal_rules import VERDICTS

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


def debate_prompt(proposal: Proposal, request: dict[str, Any]) -> tuple[str, str]:
    """The system prompt of the role asked for, and the proposal with the debate so far."""
    lines = [f"Proposal: {proposal.title} ({proposal.impact} impact, gap: {proposal.theme})", proposal.summary]
    for past in proposal.rounds:
        lines.append(f"Round {past['round']}: proposer: {past['proposer']} | critic: {past['critic']} | "
                     f"arbiter ({past['verdict']}): {past['arbiter']}")
    lines += [f"This round's {role}: {text}" for role, text in proposal.round_answers.items()]
    return ROLE_BRIEFS[request["role"]], "\n".join(lines)



def debate_facts(proposal: Proposal, request: dict[str, Any]) -> dict[str, Any]:
    """What the offline policy decides from (it reads no prompt): the proposal, the round and the role asked."""
    return {"title": proposal.title, "impact": proposal.impact, "round": request["round"], "role": request["role"]}
