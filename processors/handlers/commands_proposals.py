"""The owner's answers to a proposal (seed 001 §7): approve it into a task, or reject it with a type that teaches."""

from __future__ import annotations

from pydantic import Field

from loopline.domain.proposal_rules import DEFAULT_REJECTION, RejectionType
from loopline.processors.handlers.command_fields import Id, Strict, Text


class ProposalApprove(Strict):
    proposal_id: Id = Field(description="a proposal shown to the owner; it becomes the task "
                            "`proposal-<proposal_id>`")


class ProposalReject(Strict):
    proposal_id: Id = Field(description="a proposal shown to the owner")
    rejection_type: RejectionType = Field(
        default=DEFAULT_REJECTION, description="`never`: a similar proposal is never made again; `not_now`: not for 24 h; "
        "`bad_approach`: not for 7 days (each one skipped is recorded as avoided)")
    reason: Text | None = Field(default=None, description="why, kept with the rejection")
