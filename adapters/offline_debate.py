"""The offline policy's proposer, critic and arbiter (used when no ANTHROPIC_API_KEY is set): the same
proposal in the same round always gets the same debate, so proposals work without a key.

| impact | round 1      | round 2 and later | why                                                     |
|--------|--------------|-------------------|---------------------------------------------------------|
| high   | strong_pass  | strong_pass       | a severe gap is worth the owner's attention              |
| medium | weak_pass    | strong_pass       | strengthened once (seed 001 §4 "re-debate once"), shown  |
| low    | fail         | fail              | not worth interrupting the owner for                    |
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from loopline.domain.proposal_rules import Verdict


@dataclass(frozen=True)
class DebateRound:
    """One round's three answers, as `Proposal.record_round` records them."""

    proposer: str
    critic: str
    verdict: Verdict
    arbiter: str


def offline_round(*, title: str, impact: str, round_number: int) -> DebateRound:
    if impact == "high":
        verdict: Verdict = "strong_pass"
    elif impact == "medium":
        verdict = "weak_pass" if round_number == 1 else "strong_pass"
    else:
        verdict = "fail"
    return DebateRound(
        proposer=f"'{title}' closes a gap of {impact} impact",
        critic="a low-impact idea interrupts the owner for little" if impact == "low" else
        f"is '{title}' worth the owner's attention now?",
        verdict=verdict,
        arbiter={
            "strong_pass": f"show it: {impact} impact",
            "weak_pass": "strengthen it and debate once more",
            "fail": "drop it: too little impact to show",
        }[verdict],
    )



def offline_answer(facts: dict[str, Any]) -> dict[str, Any]:
    """The `debate_answer` tool input for the role asked (`processors/model/debate.debate_facts`): the same always."""
    answers = offline_round(title=facts["title"], impact=facts["impact"], round_number=facts["round"])
    if facts["role"] == "arbiter":
        return {"argument": answers.arbiter, "verdict": answers.verdict}
    return {"argument": answers.proposer if facts["role"] == "proposer" else answers.critic}
