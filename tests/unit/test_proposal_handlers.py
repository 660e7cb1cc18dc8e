"""Proposal handlers on the in-memory store: approval makes a task, a `never` rejection keeps similar ones away, and a
gap whose proposal died in debate cools down before it is proposed again."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import datetime, timedelta, timezone

import pytest

from loopline.domain.notification_hold import NotificationHold
from loopline.domain.proposal import Proposal, ProposalError
from loopline.domain.proposal_gaps import TaskView, find_gaps
from loopline.domain.proposal_rules import Verdict
from loopline.domain.timeutil import format_time
from loopline.processors.application import UnitOfWork
from loopline.processors.handlers.commands import create_task
from loopline.processors.handlers.commands_proposals import ProposalApprove, ProposalReject
from loopline.processors.handlers.proposal_debate import record_debate_answer
from loopline.processors.handlers.proposals import (
    approve_proposal,
    load_proposal,
    offer,
    propose_from_gaps,
    reject_proposal,
)
from loopline.processors.messages import Message
from loopline.projections.timeline import DESCRIPTIONS, _subject
from tests.conftest import command
from tests.unit.in_memory import InMemoryLoopline

NOW = datetime(2026, 3, 2, 9, 0, tzinfo=timezone.utc)
TENANT = "acme"


@pytest.fixture
def loopline() -> Iterator[InMemoryLoopline]:
    system = InMemoryLoopline()
    yield system
    system.close()


def debate(uow: UnitOfWork, ref: str, verdict: Verdict, at: datetime = NOW) -> None:
    """One round: the proposer's, the critic's and the arbiter's answers, as the brain follower records them."""
    for text in ("do it", "is it worth it?", f"the arbiter says {verdict}"):
        request = load_proposal(uow, TENANT, ref).debate_request
        assert request is not None
        record_debate_answer(uow, tenant=TENANT, proposal_ref=ref, request_ref=request["request_ref"], text=text,
                             verdict=verdict if request["role"] == "arbiter" else None, adapter="scripted",
                             model="m", prompt_digest="d", input_tokens=1, output_tokens=1, now=at)


def owner_says(at: datetime) -> Message:
    return Message(kind="command", ref="m1", type="proposal.review", tenant=TENANT, at=at)


def offered_and_shown(loopline: InMemoryLoopline, ref: str, title: str, at: datetime = NOW) -> str:
    uow = UnitOfWork(loopline.app)
    proposal = offer(uow, tenant=TENANT, proposal_ref=ref, title=title, summary="the invoice is 30 days late",
                     theme="stalled_task", impact="high", source="gap", now=at)
    status = proposal.status
    if status == "debating":
        debate(uow, ref, "strong_pass", at)
    uow.end_step()
    uow.commit()
    return status


def test_an_approved_proposal_becomes_a_task_that_names_it(loopline):
    offered_and_shown(loopline, "p1", "Chase the Acme invoice")
    uow = UnitOfWork(loopline.app)
    answer = approve_proposal(uow, owner_says(NOW), ProposalApprove(proposal_id="p1"), create=create_task)
    uow.end_step()
    uow.commit()

    assert answer.startswith("approved proposal p1: created task proposal-p1")
    task = loopline.task(TENANT, "proposal-p1")
    assert (task.title, task.context["proposal"]) == ("Chase the Acme invoice", "p1")
    assert (task.trigger_type, task.trigger_event_id, task.created_by) == ("proposal", "p1", "owner")
    assert load_proposal(UnitOfWork(loopline.app), TENANT, "p1").status == "approved"


def test_a_proposal_like_one_rejected_never_is_recorded_as_avoided_a_year_later(loopline):
    offered_and_shown(loopline, "p1", "Chase the Acme invoice")
    uow = UnitOfWork(loopline.app)
    reject_proposal(uow, owner_says(NOW), ProposalReject(proposal_id="p1", rejection_type="never",
                                                     reason="I handle Acme myself"))
    uow.end_step()
    uow.commit()

    assert offered_and_shown(loopline, "p2", "Chase the Acme invoice", NOW + timedelta(days=365)) == "avoided"
    avoided = load_proposal(UnitOfWork(loopline.app), TENANT, "p2")
    assert (avoided.similar_to, avoided.avoided_because) == ("p1", "never")


def test_approving_an_unknown_proposal_says_where_to_look(loopline):
    with pytest.raises(ProposalError, match="no proposal p9 .*shown to the owner"):
        approve_proposal(UnitOfWork(loopline.app), owner_says(NOW), ProposalApprove(proposal_id="p9"),
                         create=create_task)


def test_the_owners_never_through_the_log_and_the_avoided_offer_read_in_the_audit(loopline):
    offered_and_shown(loopline, "p1", "Chase the Acme invoice")
    [answer] = loopline.publish(command("m2", "proposal.reject", format_time(NOW), TENANT, proposal_id="p1",
                                        rejection_type="never", reason="I handle Acme myself"))
    offered_and_shown(loopline, "p2", "Chase the Acme invoice", NOW + timedelta(days=2))

    assert answer.detail == "rejected proposal p1 (never)"
    audit = [(_subject(e)[2], DESCRIPTIONS[type(e)](e)[0]) for e in loopline.events() if type(e) in DESCRIPTIONS
             and isinstance(e, (Proposal.Proposed, Proposal.Event))]
    assert audit == [
        ("proposal p1", "proposed 'Chase the Acme invoice' (high impact, stalled_task); debate starts"),
        ("proposal p1", "debate round 1: the proposer asked"),
        ("proposal p1", "the proposer answered (scripted m)"),
        ("proposal p1", "debate round 1: the critic asked"),
        ("proposal p1", "the critic answered (scripted m)"),
        ("proposal p1", "debate round 1: the arbiter asked"),
        ("proposal p1", "the arbiter answered: strong_pass (scripted m)"),
        ("proposal p1", "debate round 1: strong_pass -> ready"),
        ("proposal p1", "shown to the owner in batch batch-1 as item 1"),
        ("proposal p1", "owner rejected the proposal (never)"),
        ("proposal p2", "avoided 'Chase the Acme invoice': like proposal p1, rejected never"),
    ]


def discovery_of_a_stalled_lease(loopline: InMemoryLoopline) -> Callable[[datetime], list[tuple[str, str]]]:
    """Discovery at a given time over one gap, the lease stalled 9 days: what it offered, with each status."""
    gaps = find_gaps(tasks=[TaskView("t1", "Get the lease signed", NOW - timedelta(days=9), 0)], now=NOW)

    def discover(at: datetime) -> list[tuple[str, str]]:
        uow = UnitOfWork(loopline.app)
        offered = propose_from_gaps(uow, tenant=TENANT, gaps=gaps, last_seen_at=at, now=at)
        uow.end_step()
        uow.commit()
        return [(p.proposal_ref, p.status) for p in offered]

    return discover


def test_discovery_proposes_each_gap_once_while_open_and_again_after_a_not_now_cools(loopline):
    discover = discovery_of_a_stalled_lease(loopline)
    assert discover(NOW) == [("gap:stalled_task:t1:1", "debating")]
    assert discover(NOW + timedelta(hours=1)) == []
    uow = UnitOfWork(loopline.app)
    debate(uow, "gap:stalled_task:t1:1", "strong_pass")
    reject_proposal(uow, owner_says(NOW), ProposalReject(proposal_id="gap:stalled_task:t1:1"))
    uow.end_step()
    uow.commit()
    assert discover(NOW + timedelta(hours=2)) == [("gap:stalled_task:t1:2", "avoided")]
    assert discover(NOW + timedelta(hours=30)) == [("gap:stalled_task:t1:3", "debating")]


def fail_in_debate(uow: UnitOfWork, ref: str) -> None:
    debate(uow, ref, "fail")


def abandon_the_debate(uow: UnitOfWork, ref: str) -> None:
    load_proposal(uow, TENANT, ref).abandon_debate(reason="the proposer's model call failed 3 times", now=NOW)


@pytest.mark.parametrize("end_debate", [fail_in_debate, abandon_the_debate])
def test_a_gap_whose_proposal_died_in_debate_is_proposed_again_only_after_a_not_now_cools(loopline, end_debate):
    discover = discovery_of_a_stalled_lease(loopline)
    assert discover(NOW) == [("gap:stalled_task:t1:1", "debating")]
    uow = UnitOfWork(loopline.app)
    end_debate(uow, "gap:stalled_task:t1:1")
    uow.end_step()
    uow.commit()
    assert load_proposal(UnitOfWork(loopline.app), TENANT, "gap:stalled_task:t1:1").status in {"failed", "skipped"}
    assert discover(NOW + timedelta(hours=1)) == []
    assert discover(NOW + timedelta(hours=23)) == []
    assert discover(NOW + timedelta(hours=24)) == [("gap:stalled_task:t1:2", "debating")]


def test_the_survivors_reach_the_owner_in_one_batch_once_every_debate_has_settled(loopline):
    uow = UnitOfWork(loopline.app)
    for ref, title in [("p1", "Chase the Acme invoice"), ("p2", "Book the dentist"), ("p3", "Rename the repo")]:
        offer(uow, tenant=TENANT, proposal_ref=ref, title=title, summary=f"gap of {ref}", theme="stalled_task",
              impact="high", source="discovery", now=NOW)
    debate(uow, "p1", "strong_pass")
    debate(uow, "p3", "fail")
    uow.end_step()
    uow.commit()
    assert notices(loopline) == []
    uow = UnitOfWork(loopline.app)
    debate(uow, "p2", "undecided")
    uow.end_step()
    uow.commit()

    [batch] = notices(loopline)
    assert batch.splitlines()[:5] == [
        "Loopline proposals (2 items)", "",
        "1. Chase the Acme invoice [HIGH]", "Gap: gap of p1",
        "-> loopline review approve p1 --tenant acme  or  loopline review reject p1 --tenant acme",
    ]
    assert "2. Book the dentist [HIGH] (the debate could not decide)" in batch
    assert batch.endswith("Reject with --type never|not_now|bad_approach (not_now when none is given).")
    assert [load_proposal(UnitOfWork(loopline.app), TENANT, ref).status for ref in ("p1", "p2", "p3")] == [
        "shown", "shown", "failed"]


def notices(loopline: InMemoryLoopline) -> list[str]:
    """What the owner's notification hold was offered (held here: this owner was never seen)."""
    return [e.text for e in loopline.events() if isinstance(e, (NotificationHold.Sent, NotificationHold.Held))]


def test_an_approval_a_task_limit_holds_back_is_refused_with_why_and_works_once_the_limit_frees_up(loopline):
    loopline.publish(command("cfg", "tenant.configure", format_time(NOW - timedelta(hours=1)), TENANT,
                             daily_task_limit=1))
    offered_and_shown(loopline, "p1", "Chase the Acme invoice")
    offered_and_shown(loopline, "p2", "Renew the Globex contract")
    [first] = loopline.publish(command("a1", "proposal.approve", format_time(NOW), TENANT, proposal_id="p1"))
    [held] = loopline.publish(command("a2", "proposal.approve", format_time(NOW + timedelta(hours=1)), TENANT,
                                      proposal_id="p2"))

    assert first.accepted and not held.accepted
    assert "proposal p2 stays shown" in held.detail and "daily_task_limit" in held.detail
    assert load_proposal(UnitOfWork(loopline.app), TENANT, "p2").status == "shown"
    [later] = loopline.publish(command("a3", "proposal.approve", format_time(NOW + timedelta(days=1)), TENANT,
                                       proposal_id="p2"))
    assert later.accepted, later.detail
    assert load_proposal(UnitOfWork(loopline.app), TENANT, "p2").status == "approved"
    assert loopline.task(TENANT, "proposal-p2").title == "Renew the Globex contract"
