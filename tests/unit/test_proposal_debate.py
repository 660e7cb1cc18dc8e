"""The debate through its recorded model calls, on the in-memory store, answered as the brain follower would: by the
offline policy, or by a model that fails. A strong idea survives, a weak one dies, a failing call is tried three
times and then the gap is skipped; the survivors reach the owner in one batch."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import datetime, timezone
from typing import Any

import pytest

from loopline.adapters.offline_debate import offline_answer
from loopline.domain.model_ledger import TenantModelCalls
from loopline.domain.notification_hold import NotificationHold
from loopline.domain.proposal import Proposal
from loopline.domain.timeutil import format_time
from loopline.processors.application import UnitOfWork
from loopline.processors.handlers.proposal_debate import record_debate_answer, record_debate_failure
from loopline.processors.handlers.proposals import load_proposal, offer
from loopline.processors.model.debate import debate_answer, debate_facts, debate_prompt
from loopline.projections.timeline import DESCRIPTIONS
from tests.conftest import command
from tests.unit.in_memory import InMemoryLoopline

NOW = datetime(2026, 3, 2, 9, 0, tzinfo=timezone.utc)
TENANT = "acme"
Answer = Callable[[dict[str, Any]], dict[str, Any] | None]


@pytest.fixture
def loopline() -> Iterator[InMemoryLoopline]:
    system = InMemoryLoopline()
    yield system
    system.close()


def offer_ideas(loopline: InMemoryLoopline, *ideas: tuple[str, str, str]) -> None:
    uow = UnitOfWork(loopline.app)
    for ref, title, impact in ideas:
        offer(uow, tenant=TENANT, proposal_ref=ref, title=title, summary=f"the gap behind {ref}", theme="stalled_task",
              impact=impact, source="discovery", now=NOW)
    uow.end_step()
    uow.commit()


def follow(loopline: InMemoryLoopline, refs: list[str], answer: Answer) -> int:
    """Answers each pending debate call, one transaction each, until none is pending; returns the calls made."""
    calls = 0
    while True:
        uow = UnitOfWork(loopline.app)
        pending = [p for p in (load_proposal(uow, TENANT, ref) for ref in refs) if p.debate_request is not None]
        if not pending:
            return calls
        proposal, request = pending[0], dict(pending[0].debate_request or {})
        prompt = debate_prompt(proposal, request)
        assert prompt.system and proposal.title in prompt.messages[0]["content"]
        given = answer(debate_facts(proposal, request))
        calls += 1
        read = debate_answer([] if given is None else [{"type": "tool_use", "name": "debate_answer", "input": given}])
        if isinstance(read, str):
            record_debate_failure(uow, tenant=TENANT, proposal_ref=proposal.proposal_ref,
                                  request_ref=request["request_ref"], error=read, now=NOW)
        else:
            assert record_debate_answer(uow, tenant=TENANT, proposal_ref=proposal.proposal_ref,
                                        request_ref=request["request_ref"], text=read[0], verdict=read[1],
                                        adapter="offline", model="offline-policy", prompt_digest=prompt.digest,
                                        input_tokens=0, output_tokens=0, now=NOW)
        uow.end_step()
        uow.commit()


def test_offline_a_strong_idea_survives_a_weak_one_dies_and_the_survivors_reach_the_owner_in_one_batch(loopline):
    offer_ideas(loopline, ("p1", "Chase the Acme invoice", "high"), ("p2", "Rename the repo", "low"),
                ("p3", "Book the dentist", "medium"))

    calls = follow(loopline, ["p1", "p2", "p3"], offline_answer)

    uow = UnitOfWork(loopline.app)
    assert [load_proposal(uow, TENANT, ref).status for ref in ("p1", "p2", "p3")] == ["shown", "failed", "shown"]
    assert calls == 3 + 3 + 6  # the medium idea is strengthened and debated once more
    [batch] = [e.text for e in loopline.events() if isinstance(e, (NotificationHold.Sent, NotificationHold.Held))]
    assert batch.startswith("Loopline proposals (2 items)") and "Rename the repo" not in batch
    assert all(type(e) in DESCRIPTIONS for e in loopline.events() if isinstance(e, Proposal.Event))


def test_a_call_that_fails_three_times_skips_the_gap_and_an_answer_no_longer_pending_records_nothing(loopline):
    offer_ideas(loopline, ("p1", "Chase the Acme invoice", "high"))
    first = dict(load_proposal(UnitOfWork(loopline.app), TENANT, "p1").debate_request or {})

    assert follow(loopline, ["p1"], lambda facts: None) == 3

    uow = UnitOfWork(loopline.app)
    proposal = load_proposal(uow, TENANT, "p1")
    assert proposal.status == "skipped"
    assert not record_debate_answer(uow, tenant=TENANT, proposal_ref="p1", request_ref=first["request_ref"],
                                    text="late", verdict=None, adapter="offline", model="m", prompt_digest="d",
                                    input_tokens=0, output_tokens=0, now=NOW)
    abandoned = [e for e in loopline.events() if isinstance(e, Proposal.DebateAbandoned)]
    assert [e.reason for e in abandoned] == [
        "the proposer's model call failed 3 times: the model answered without the debate_answer tool"]


def test_a_model_call_limit_abandons_the_debate_and_each_call_counts_in_the_tenant_ledger(loopline):
    loopline.publish(command("c1", "tenant.configure", format_time(NOW), TENANT, daily_model_call_limit=2))
    offer_ideas(loopline, ("p1", "Chase the Acme invoice", "high"))

    assert follow(loopline, ["p1"], offline_answer) == 2

    assert load_proposal(UnitOfWork(loopline.app), TENANT, "p1").status == "skipped"
    [abandoned] = [e for e in loopline.events() if isinstance(e, Proposal.DebateAbandoned)]
    assert abandoned.reason.startswith("daily_model_call_limit")
    assert len([e for e in loopline.events() if isinstance(e, TenantModelCalls.Called)]) == 2
