"""The loop metrics read model (issue 21 item 5, seed 001 §9): events of one tenant's tasks and runs, projected on
SQLite in memory, become its acceptance rate, escalation resolution time, stuck rate and idle runs."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta, timezone

import pytest
from sqlalchemy import create_engine
from sqlalchemy.engine import Connection

from loopline.domain import ids
from loopline.domain.proactive_run import ProactiveRun
from loopline.domain.proposal import Proposal
from loopline.domain.task import Task
from loopline.projections import loop_metrics, writes
from loopline.projections.runner import metadata
from tests.unit.test_synthesis_runs import RUN_AT, ScriptedBrain, run_events, tenant_with_a_task, use

NOW = datetime(2026, 5, 4, 9, 0, tzinfo=timezone.utc)


@pytest.fixture
def conn() -> Iterator[Connection]:
    engine = create_engine("sqlite://")
    metadata.create_all(engine, tables=list(loop_metrics.tables))
    with engine.begin() as connection:
        yield connection


def project(conn: Connection, *aggregates: Task | ProactiveRun | Proposal) -> None:
    for aggregate in aggregates:
        for event in aggregate.collect_events():
            handler = loop_metrics.handlers.get(type(event))
            if handler is not None:
                handler(conn, event, 0)
    writes.flush(conn)


def task(ref: str, status: str = "executing") -> Task:
    return Task.create(
        id=ids.task_id("gym", ref), now=NOW, tenant="gym", ref=ref, title=ref, description="", task_type="ad_hoc",
        status=status, expires_at=None, priority=None, contact=None, confidence=None, context={}, reason="r",
    )


def test_a_tenant_with_nothing_counted_has_no_rates() -> None:
    engine = create_engine("sqlite://")
    metadata.create_all(engine, tables=list(loop_metrics.tables))
    with engine.connect() as connection:
        metrics = loop_metrics.metrics_of(connection, "gym")
    assert metrics["tasks_created"] == 0 and metrics["proposal_acceptance_rate"] is None
    assert metrics["escalation_resolution_hours"] is None and metrics["idle_run_rate"] is None


def test_reviews_escalations_stalls_and_runs_become_the_tenant_metrics(conn: Connection) -> None:
    approved, rejected, escalated, quiet = task("a", "pending_review"), task("b", "pending_review"), task("c"), task("d")
    approved.approve(reason="ok", now=NOW)
    rejected.reject(reason="no", rejection_type="never", now=NOW)
    escalated.escalate(reason="asks about price", cause="reply", now=NOW)
    escalated.escalate(reason="asks again", cause="reply", now=NOW + timedelta(hours=1))
    escalated.give_guidance(text="offer 10%", now=NOW + timedelta(hours=3))
    assert quiet.check_stalled(after_days=5, now=NOW + timedelta(days=5))
    run = ProactiveRun.start(id=ids.run_id("gym"), tenant="gym", now=NOW)
    run.record_run(mode="maintenance", summary="nothing waiting", escalations_handled=0, now=NOW + timedelta(hours=1))
    run.queue_escalation(task_ref="c", loop_ref=None, reason="asks about price", now=NOW + timedelta(hours=1))
    run.record_run(mode="maintenance", summary="woke 1 task", escalations_handled=1, now=NOW + timedelta(hours=2))
    project(conn, approved, rejected, escalated, quiet, run)

    metrics = loop_metrics.metrics_of(conn, "gym")

    assert (metrics["tasks_created"], metrics["proposal_acceptance_rate"], metrics["stuck_rate"]) == (4, 0.5, 0.25)
    assert (metrics["escalations"], metrics["escalations_resolved"], metrics["escalation_resolution_hours"]) == (1, 1, 3.0)
    assert (metrics["runs"], metrics["runs_idle"], metrics["idle_run_rate"]) == (2, 1, 0.5)


def test_an_escalation_still_with_the_owner_is_counted_and_not_yet_timed(conn: Connection) -> None:
    waiting = task("c")
    waiting.escalate(reason="asks about price", cause="reply", now=NOW)
    project(conn, waiting)
    metrics = loop_metrics.metrics_of(conn, "gym")
    assert (metrics["escalations"], metrics["escalations_resolved"], metrics["escalation_resolution_hours"]) == (1, 0, None)


def test_the_owners_answers_to_proposals_count_in_the_acceptance_rate(conn: Connection) -> None:
    def shown(ref: str) -> Proposal:
        proposal = Proposal.propose(id=ids.proposal_id("gym", ref), tenant="gym", proposal_ref=ref, title=ref,
                                    summary="", theme="stalled_task", impact="high", source="discovery", now=NOW)
        proposal.record_round(proposer="p", critic="c", verdict="strong_pass", arbiter="a", now=NOW)
        return proposal

    approved, rejected, kept = shown("p1"), shown("p2"), shown("p3")
    approved.approve(task_ref="proposal-p1", now=NOW)
    rejected.reject(rejection_type="never", reason="", now=NOW)
    project(conn, approved, rejected, kept)

    metrics = loop_metrics.metrics_of(conn, "gym")
    assert (metrics["proposals_accepted"], metrics["proposals_rejected"]) == (1, 1)
    assert metrics["proposal_acceptance_rate"] == 0.5


def test_a_synthesis_run_that_acted_through_its_tools_did_something_and_the_next_one_that_only_scheduled_did_not(
        conn: Connection) -> None:
    brain = ScriptedBrain([
        [use("notify", text="The supplier has not answered in a week."), use("schedule_next_run", in_hours=6)],
        [use("schedule_next_run", in_hours=6, reason="nothing new")],
    ])
    loopline = tenant_with_a_task(brain)
    loopline.tick(RUN_AT)
    loopline.tick(RUN_AT + timedelta(hours=6))
    recorded = run_events(loopline, ProactiveRun.RunRecorded)
    assert [event.escalations_handled for event in recorded] == [0, 0]
    loopline.project(conn, loop_metrics)

    metrics = loop_metrics.metrics_of(conn, "acme")

    assert (metrics["runs"], metrics["runs_idle"], metrics["idle_run_rate"]) == (2, 1, 0.5)
