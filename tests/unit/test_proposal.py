"""Proposals: debate outcomes, approval into a task, rejection types that teach, batching, autonomy tiers."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from loopline.adapters.offline_debate import offline_round
from loopline.domain import ids
from loopline.domain.proposal import Proposal, ProposalBook, ProposalError
from loopline.domain.proposal_gaps import GoalView, RoutineView, TaskView, discovery_picks, find_gaps
from loopline.domain.proposal_rules import (
    Candidate,
    PastRejection,
    batches,
    blocking_rejection,
    discovery_allowed,
    requires_approval,
    similarity,
)
from loopline.domain.safety_limits import PROPOSALS_PER_BATCH

NOW = datetime(2025, 3, 1, 9, 0, tzinfo=timezone.utc)


def proposal(ref: str = "p1", title: str = "Chase the overdue invoice from Acme") -> Proposal:
    return Proposal.propose(
        id=ids.proposal_id("acme", ref), tenant="acme", proposal_ref=ref, title=title,
        summary="three reminders expired without a reply", theme="stalled_task", impact="high", source="gap", now=NOW,
    )


def debated(verdicts: list[str]) -> Proposal:
    made = proposal()
    for verdict in verdicts:
        made.record_round(proposer="do it", critic="why now?", verdict=verdict, arbiter="because", now=NOW)
    return made


def replayed(aggregate):
    events = [event for _, event in aggregate.collect_ordered_events()]
    rebuilt = None
    for event in events:
        rebuilt = event.mutate(rebuilt)
    return rebuilt


def test_strong_pass_makes_the_proposal_ready_for_the_owner():
    made = debated(["strong_pass"])
    assert (made.status, made.flag, len(made.rounds)) == ("ready", None, 1)


def test_failed_debate_never_reaches_the_owner():
    made = debated(["fail"])
    assert made.status == "failed"
    with pytest.raises(ProposalError, match="failed"):
        made.show(batch_ref="b1", position=1, now=NOW)


def test_weak_pass_is_debated_again_and_after_three_rounds_goes_to_the_owner_with_both_positions():
    made = debated(["weak_pass", "weak_pass"])
    assert made.status == "debating"
    made.record_round(proposer="still do it", critic="still no", verdict="weak_pass", arbiter="split", now=NOW)
    assert (made.status, made.flag) == ("ready", "debate_unsettled")
    assert [r["critic"] for r in made.rounds] == ["why now?", "why now?", "still no"]


def test_undecided_arbiter_shows_the_proposal_flagged_uncertain():
    assert (debated(["undecided"]).status, debated(["undecided"]).flag) == ("ready", "uncertain")


def test_debate_rounds_are_recorded_so_replay_rebuilds_the_same_outcome_without_the_model():
    made = debated(["weak_pass", "strong_pass"])
    rebuilt = replayed(made)
    assert (rebuilt.status, rebuilt.rounds) == (made.status, made.rounds)


def test_unknown_verdict_names_the_allowed_ones():
    with pytest.raises(ProposalError, match="strong_pass, weak_pass, fail, undecided"):
        proposal().record_round(proposer="x", critic="y", verdict="maybe", arbiter="z", now=NOW)


def test_approved_proposal_names_the_task_it_became():
    made = debated(["strong_pass"])
    made.show(batch_ref="b1", position=1, now=NOW)
    made.approve(task_ref="t-from-p1", now=NOW)
    assert (made.status, made.task_ref) == ("approved", "t-from-p1")
    with pytest.raises(ProposalError, match="approved"):
        made.reject(rejection_type="never", reason="", now=NOW)


def test_never_rejection_avoids_a_similar_proposal_forever_and_not_now_only_for_a_day():
    made = debated(["strong_pass"])
    made.reject(rejection_type="never", reason="I handle Acme myself", now=NOW)
    book = ProposalBook.open(id=ids.proposal_book_id("acme"), tenant="acme", now=NOW)
    book.learn(made, NOW)
    again = "Chase the overdue invoice from Acme three reminders expired without a reply"
    years_later = NOW + timedelta(days=900)
    blocked = blocking_rejection(again, book.rejections, years_later)
    assert blocked is not None and blocked.rejection_type == "never"
    later = PastRejection("p2", again, "not_now", NOW)
    assert blocking_rejection(again, [later], NOW + timedelta(hours=23)) == later
    assert blocking_rejection(again, [later], NOW + timedelta(hours=25)) is None
    assert blocking_rejection("Book the dentist", book.rejections, NOW) is None


def test_avoided_proposal_is_recorded_with_the_rejection_that_blocked_it():
    rejection = PastRejection("p1", "Chase the overdue invoice", "never", NOW)
    avoided = Proposal.avoid(
        id=ids.proposal_id("acme", "p2"), tenant="acme", proposal_ref="p2", title="Chase the overdue invoice",
        summary="", theme="stalled_task", impact="low", source="discovery", blocked_by=rejection, now=NOW,
    )
    assert (avoided.status, avoided.similar_to, avoided.avoided_because) == ("avoided", "p1", "never")


def test_rejection_type_outside_the_three_is_refused():
    with pytest.raises(ProposalError, match="never, not_now, bad_approach"):
        debated(["strong_pass"]).reject(rejection_type="later", reason="", now=NOW)


def test_similarity_ignores_small_words_and_case():
    assert similarity("Chase THE invoice", "chase invoice") == 1.0
    assert similarity("", "anything") == 0.0


def test_batches_group_by_theme_put_high_impact_first_and_hold_at_most_five():
    ready = [Candidate(f"s{i}", "stalled_task", "low") for i in range(6)]
    ready += [Candidate("g1", "goal_without_step", "high")]
    sent = batches(ready)
    assert [[c.proposal_ref for c in batch] for batch in sent] == [
        ["g1"], ["s0", "s1", "s2", "s3", "s4"], ["s5"],
    ]
    assert all(len(batch) <= PROPOSALS_PER_BATCH for batch in sent)


def test_autonomy_tiers_let_notes_and_low_priority_tasks_through_and_hold_the_rest():
    assert not requires_approval("knowledge")
    assert not requires_approval("task", "low")
    assert requires_approval("task", "high")
    assert requires_approval("proposal")


def test_discovery_runs_only_while_the_owner_was_seen_in_the_last_two_hours():
    assert discovery_allowed(NOW - timedelta(minutes=90), NOW)
    assert not discovery_allowed(NOW - timedelta(hours=3), NOW)
    assert not discovery_allowed(None, NOW)



def test_gap_analysis_finds_what_is_missing_most_severe_first_and_at_most_five():
    tasks = [TaskView(f"t{i}", f"Task {i}", NOW - timedelta(days=1), 0) for i in range(6)]
    tasks.append(TaskView("tx", "Get the lease signed", None, 3))
    gaps = find_gaps(
        tasks=tasks, goals=[GoalView("g1", "run a marathon", 0), GoalView("g2", "learn Spanish", 2)],
        routines=[RoutineView("r1", "check CI", 2)], now=NOW,
    )
    assert [gap.key for gap in gaps] == [
        "failing_routine:r1", "repeated_expiry:tx", "goal_without_step:g1", "stalled_task:t0", "stalled_task:t1",
    ]
    assert (gaps[0].impact, gaps[2].impact) == ("high", "medium")


def test_gap_analysis_with_nothing_missing_finds_nothing():
    assert find_gaps(tasks=[TaskView("t1", "Fine", None, 1)], now=NOW) == []


def test_discovery_proposes_at_most_three_and_nothing_while_the_owner_is_away():
    gaps = find_gaps(tasks=[TaskView(f"t{i}", f"Task {i}", NOW, 0) for i in range(5)], now=NOW)
    assert [gap.key for gap in discovery_picks(gaps, last_seen_at=NOW - timedelta(minutes=10), now=NOW)] == [
        "stalled_task:t0", "stalled_task:t1", "stalled_task:t2",
    ]
    assert discovery_picks(gaps, last_seen_at=NOW - timedelta(hours=5), now=NOW) == []


def offline_debate(impact: str) -> Proposal:
    made = proposal()
    made.impact = impact
    while made.status == "debating":
        answer = offline_round(title=made.title, impact=made.impact, round_number=len(made.rounds) + 1)
        made.record_round(proposer=answer.proposer, critic=answer.critic, verdict=answer.verdict,
                          arbiter=answer.arbiter, now=NOW)
    return made


def test_offline_debate_shows_high_at_once_strengthens_medium_once_and_drops_low():
    assert [(p.status, len(p.rounds)) for p in map(offline_debate, ("high", "medium", "low"))] == [
        ("ready", 1), ("ready", 2), ("failed", 1),
    ]
