"""The tenant's proposals between debate and owner: the `ProposalBook`, and the batches of survivors (seed 001 §5),
sent through the owner's notification hold once every open debate has settled."""

from __future__ import annotations

from datetime import datetime

from loopline.domain import ids
from loopline.domain.proposal import Proposal, ProposalBook, ProposalError
from loopline.domain.proposal_notice import ShownProposal, render_batch
from loopline.domain.proposal_rules import Candidate, batches
from loopline.processors.application import UnitOfWork
from loopline.processors.handlers.owner_notices import notify_owner


def proposal_book(uow: UnitOfWork, tenant: str, now: datetime) -> ProposalBook:
    return uow.get_or_create(
        ids.proposal_book_id(tenant), ProposalBook,
        lambda: ProposalBook.open(id=ids.proposal_book_id(tenant), tenant=tenant, now=now),
    )


def load_proposal(uow: UnitOfWork, tenant: str, proposal_ref: str) -> Proposal:
    proposal = uow.get(ids.proposal_id(tenant, proposal_ref), Proposal)
    if proposal is None:
        raise ProposalError(f"no proposal {proposal_ref} for tenant {tenant}; name one that was shown to the owner")
    return proposal


def settle_debate(uow: UnitOfWork, proposal: Proposal, now: datetime) -> None:
    """After a debate step: a debate that ended leaves the book's open debates; when none is left, the survivors go
    to the owner in batches."""
    book = proposal_book(uow, proposal.tenant, now)
    book.settle(proposal, now)
    if not book.debating and book.awaiting:
        show_ready(uow, tenant=proposal.tenant, book=book, now=now)


def show_ready(uow: UnitOfWork, *, tenant: str, book: ProposalBook, now: datetime) -> None:
    """Shows the survivors waiting in the book, grouped by theme and impact, ≤ 5 a notice, each notice through the
    owner's notification hold."""
    ready = [p for p in (load_proposal(uow, tenant, ref) for ref in book.awaiting) if p.status == "ready"]
    by_ref = {p.proposal_ref: p for p in ready}
    candidates = [Candidate(p.proposal_ref, p.theme, p.impact) for p in ready]  # type: ignore[arg-type]
    grouped = [[candidate.proposal_ref for candidate in batch] for batch in batches(candidates)]
    for number, refs in enumerate(grouped, start=book.batches_shown + 1):
        for position, ref in enumerate(refs, start=1):
            by_ref[ref].show(batch_ref=f"batch-{number}", position=position, now=now)
        shown = [ShownProposal(ref, by_ref[ref].title, by_ref[ref].summary, by_ref[ref].impact, by_ref[ref].flag)
                 for ref in refs]
        notify_owner(uow, tenant, render_batch(tenant, shown), now=now)
    book.record_batches(grouped, now)
