"""The debate through its recorded model calls, on the in-memory store, answered by the brain follower: with the
offline policy a strong idea survives and a weak one dies, and the survivors reach the owner in one batch; a model
that keeps failing is asked three times and then the gap is skipped; a model-call limit (the day's last call is kept
for the tasks) or a pause in force abandons the debate, with why."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from datetime import datetime, timezone

import pytest

from loopline.domain import ids
from loopline.domain.errors import DomainError
from loopline.adapters.embedded_log import EmbeddedLog
from loopline.adapters.messages import parse_message
from loopline.adapters.offline_policy import OfflinePolicy
from loopline.domain.model_ledger import TenantModelCalls
from loopline.domain.notification_hold import NotificationHold
from loopline.domain.proposal import Proposal
from loopline.domain.timeutil import format_time
from loopline.processors.application import UnitOfWork
from loopline.processors.handlers.brain_calls import refuse
from loopline.processors.handlers.proposal_debate import record_debate_answer
from loopline.processors.handlers.proposals import load_proposal, offer
from loopline.processors.messages import BrainAnswered
from loopline.processors.model.debate import debate_answer
from loopline.processors.ports import Conversation, ModelUnavailable, Reply
from loopline.projections.timeline import DESCRIPTIONS
from tests.conftest import command
from tests.unit.in_memory import InMemoryLoopline

NOW = datetime(2026, 3, 2, 9, 0, tzinfo=timezone.utc)
TENANT = "acme"


class DownModel:
    """A model that never answers: every debate call fails."""

    def __init__(self) -> None:
        self.asked: list[Conversation] = []

    def converse(self, request: Conversation) -> Reply:
        self.asked.append(request)
        raise ModelUnavailable("HTTP 529 overloaded")


@pytest.fixture
def loopline() -> Iterator[InMemoryLoopline]:
    system = InMemoryLoopline()
    yield system
    system.close()


def offer_ideas(loopline: InMemoryLoopline, *ideas: tuple[str, str, str]) -> None:
    """Offers the ideas in one step, then lets the brain follower debate them until nothing is pending."""
    uow = UnitOfWork(loopline.app)
    for ref, title, impact in ideas:
        offer(uow, tenant=TENANT, proposal_ref=ref, title=title, summary=f"the gap behind {ref}", theme="stalled_task",
              impact=impact, source="discovery", now=NOW)
    uow.end_step()
    uow.commit()
    loopline.drain()


def events(loopline: InMemoryLoopline, kind: type) -> list[object]:
    return [event for event in loopline.events() if isinstance(event, kind)]


def test_offline_a_strong_idea_survives_a_weak_one_dies_and_the_survivors_reach_the_owner_in_one_batch(loopline):
    offer_ideas(loopline, ("p1", "Chase the Acme invoice", "high"), ("p2", "Rename the repo", "low"),
                ("p3", "Book the dentist", "medium"))

    uow = UnitOfWork(loopline.app)
    assert [load_proposal(uow, TENANT, ref).status for ref in ("p1", "p2", "p3")] == ["shown", "failed", "shown"]
    answered = events(loopline, Proposal.DebateAnswered)
    assert len(answered) == 3 + 3 + 6  # the medium idea is strengthened and debated once more
    assert {(e.adapter, e.role) for e in answered} >= {("offline", "arbiter")}  # type: ignore[attr-defined]
    [batch] = [e.text for e in events(loopline, NotificationHold.Sent) + events(loopline, NotificationHold.Held)]
    assert batch.startswith("Loopline proposals (2 items)") and "Rename the repo" not in batch
    assert len(events(loopline, TenantModelCalls.Called)) == 12
    assert all(type(e) in DESCRIPTIONS for e in events(loopline, Proposal.Event))


def test_a_call_that_fails_three_times_skips_the_gap_and_a_late_answer_records_nothing():
    down = DownModel()
    loopline = InMemoryLoopline(brain_model=down)
    try:
        offer_ideas(loopline, ("p1", "Chase the Acme invoice", "high"))
        late = down.asked[0]

        uow = UnitOfWork(loopline.app)
        assert load_proposal(uow, TENANT, "p1").status == "skipped"
        assert [c.facts["role"] for c in down.asked] == ["proposer"] * 3
        assert not record_debate_answer(uow, tenant=TENANT, proposal_ref="p1", request_ref=late.request_ref,
                                        text="late", verdict=None, adapter="offline", model="m", prompt_digest="d",
                                        input_tokens=0, output_tokens=0, now=NOW)
        [abandoned] = events(loopline, Proposal.DebateAbandoned)
        assert abandoned.reason.startswith("the proposer's model call failed 3 times")  # type: ignore[attr-defined]
    finally:
        loopline.close()


def test_a_debate_never_takes_the_days_last_model_call_it_is_abandoned_instead(loopline):
    loopline.publish(command("c1", "tenant.configure", format_time(NOW), TENANT, daily_model_call_limit=3))
    offer_ideas(loopline, ("p1", "Chase the Acme invoice", "high"))

    assert load_proposal(UnitOfWork(loopline.app), TENANT, "p1").status == "skipped"
    [abandoned] = events(loopline, Proposal.DebateAbandoned)
    assert abandoned.reason.startswith("daily_model_call_limit")  # type: ignore[attr-defined]
    assert "kept for the tasks" in abandoned.reason  # type: ignore[attr-defined]
    assert len(events(loopline, TenantModelCalls.Called)) == 2


class PausedWhileThinking:
    """The offline policy, but the owner pauses `pause` while the first call is with the model."""

    def __init__(self, loopline: Callable[[], InMemoryLoopline], pause: str) -> None:
        self.loopline, self.pause, self.asked = loopline, pause, 0
        self.offline = OfflinePolicy()

    def converse(self, request: Conversation) -> Reply:
        self.asked += 1
        if self.asked == 1:
            system = self.loopline()
            message = command("p1", self.pause, format_time(NOW), TENANT, reason="owner on holiday", by="Mike")
            EmbeddedLog(system.app).append([parse_message(json.dumps(message))], "test")
            system.router.run_once()
        return self.offline.converse(request)


@pytest.mark.parametrize("pause", ["tenant.pause", "system.pause"])
def test_a_pause_in_force_abandons_the_debate_with_why_and_asks_no_further_call(pause):
    systems: list[InMemoryLoopline] = []
    model = PausedWhileThinking(lambda: systems[0], pause)
    systems.append(InMemoryLoopline(brain_model=model))
    loopline = systems[0]
    try:
        offer_ideas(loopline, ("p1", "Chase the Acme invoice", "high"))

        assert load_proposal(UnitOfWork(loopline.app), TENANT, "p1").status == "skipped"
        assert [e.role for e in events(loopline, Proposal.DebateAnswered)] == ["proposer"]  # type: ignore[attr-defined]
        [abandoned] = events(loopline, Proposal.DebateAbandoned)
        assert abandoned.reason.startswith("paused: ")  # type: ignore[attr-defined]
        assert model.asked == 1 and len(events(loopline, TenantModelCalls.Called)) == 1
    finally:
        loopline.close()


def test_a_reply_without_the_debate_tool_does_not_count_as_an_answer():
    assert debate_answer([{"type": "text", "text": "I think so"}]) == "the model answered without the debate_answer tool"
    assert debate_answer([{"type": "tool_use", "name": "debate_answer", "input": {"argument": "show it",
                                                                                  "verdict": "maybe"}}]) == (
        "show it", None)


def test_a_debate_answer_that_cannot_be_recorded_is_audited_with_its_cost_and_asked_again(loopline):
    uow = UnitOfWork(loopline.app)
    offer(uow, tenant=TENANT, proposal_ref="p1", title="Chase the Acme invoice", summary="the gap behind p1",
          theme="stalled_task", impact="high", source="discovery", now=NOW)
    uow.end_step()
    uow.commit()
    request = load_proposal(UnitOfWork(loopline.app), TENANT, "p1").debate_request
    assert request is not None
    answered = BrainAnswered("debate", ids.proposal_id(TENANT, "p1"), request["request_ref"], NOW,
                             Reply("fake", "debater", (), "digest", 80, 15))
    uow = UnitOfWork(loopline.app)
    refuse(uow, answered, DomainError("the batch could not be sent"))
    uow.end_step()
    uow.commit()

    [unused] = events(loopline, Proposal.DebateAnswerUnused)
    assert (unused.role, unused.adapter, unused.model, unused.input_tokens) == (  # type: ignore[attr-defined]
        "proposer", "fake", "debater", 80)
    assert DESCRIPTIONS[Proposal.DebateAnswerUnused](unused)[0] == (
        "the proposer answered (fake debater) but its answer could not be recorded")
    [failed] = events(loopline, Proposal.DebateCallFailed)
    assert "the batch could not be sent" in failed.error  # type: ignore[attr-defined]
    assert load_proposal(UnitOfWork(loopline.app), TENANT, "p1").debate_request["attempt"] == 2
