"""The proposals and reflections read models on SQLite in memory: the review queue lists the survivors waiting for
the owner, and the owner's answers to proposals land in the reflection log."""

from __future__ import annotations

from datetime import datetime, timezone

from sqlalchemy import create_engine

from loopline.domain import ids
from loopline.domain.proposal import Proposal
from loopline.domain.proposal_rules import PastRejection, Verdict
from loopline.projections import proposals, reflections, writes
from loopline.projections.proposals import list_proposals
from loopline.projections.reflections import reflection_log
from loopline.projections.runner import metadata

NOW = datetime(2026, 5, 4, 9, 0, tzinfo=timezone.utc)


def debated(ref: str, verdict: Verdict) -> Proposal:
    proposal = Proposal.propose(id=ids.proposal_id("gym", ref), tenant="gym", proposal_ref=ref, title=f"idea {ref}",
                                summary="a gap", theme="stalled_task", impact="high", source="discovery", now=NOW)
    proposal.record_round(proposer="p", critic="c", verdict=verdict, arbiter="a", now=NOW)
    return proposal


def test_the_queue_lists_ready_and_shown_proposals_and_the_log_keeps_the_owners_answers() -> None:
    ready, shown, failed, approved, rejected = (debated("p1", "strong_pass"), debated("p2", "strong_pass"),
                                                 debated("p3", "fail"), debated("p4", "strong_pass"),
                                                 debated("p5", "strong_pass"))
    shown.show(batch_ref="batch-1", position=1, now=NOW)
    approved.approve(task_ref="proposal-p4", now=NOW)
    rejected.reject(rejection_type="never", reason="not for us", now=NOW)
    avoided = Proposal.avoid(id=ids.proposal_id("gym", "p6"), tenant="gym", proposal_ref="p6", title="idea p5",
                             summary="a gap", theme="stalled_task", impact="high", source="discovery",
                             blocked_by=PastRejection("p5", "idea p5 a gap", "never", NOW), now=NOW)
    engine = create_engine("sqlite://")
    metadata.create_all(engine, tables=[*proposals.tables, *reflections.tables])
    with engine.begin() as conn:
        position = 0
        for aggregate in (ready, shown, failed, approved, rejected, avoided):
            for event in aggregate.collect_events():
                position += 1
                for model in (proposals, reflections):
                    if type(event) in model.handlers:
                        model.handlers[type(event)](conn, event, position)
        writes.flush(conn)

        waiting = [(row["proposal_id"], row["status"], row["batch_ref"]) for row in list_proposals(conn, "gym")]
        [avoided_row] = list_proposals(conn, "gym", statuses=("avoided",))
        log = [(row["subject"], row["decision"], row["rejection_type"], row["detail"]) for row in reflection_log(conn)]

    assert waiting == [("p1", "ready", None), ("p2", "shown", "batch-1")]
    assert (avoided_row["similar_to"], avoided_row["rejection_type"]) == ("p5", "never")
    assert log == [("p4", "approved", None, "became task proposal-p4"), ("p5", "rejected", "never", "not for us")]
