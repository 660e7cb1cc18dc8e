"""The owner's notice of a batch of proposals (seed 001 §5's format): each numbered with its impact and gap, and
the two commands that decide it, so the owner can answer from the notice alone."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from loopline.domain.proposal_rules import REJECTION_TYPES

FLAGS = {"uncertain": "the debate could not decide", "debate_unsettled": "three rounds did not settle it"}
"""What a proposal the debate handed to the owner undecided says about it."""


@dataclass(frozen=True)
class ShownProposal:
    proposal_ref: str
    title: str
    summary: str
    impact: str
    flag: str | None = None


def render_batch(tenant: str, shown: Sequence[ShownProposal]) -> str:
    """One notification: at most five proposals, each with how to approve or reject it."""
    noun = "item" if len(shown) == 1 else "items"
    lines = [f"Loopline proposals ({len(shown)} {noun})", ""]
    for number, proposal in enumerate(shown, start=1):
        note = f" ({FLAGS[proposal.flag]})" if proposal.flag in FLAGS else ""
        lines += [
            f"{number}. {proposal.title} [{proposal.impact.upper()}]{note}",
            f"Gap: {proposal.summary}",
            f"-> loopline review approve {proposal.proposal_ref} --tenant {tenant}"
            f"  or  loopline review reject {proposal.proposal_ref} --tenant {tenant}",
            "",
        ]
    lines.append(f"Reject with --type {'|'.join(REJECTION_TYPES)} (not_now when none is given).")
    return "\n".join(lines)
