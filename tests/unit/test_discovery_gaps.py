"""Discovery on the in-memory store: besides stalled tasks, a task whose loops expired twice, a goal with no open task
and a failing routine each reach the owner as a proposal of its gap's kind."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

from loopline.domain import ids
from loopline.domain.proactive_run import ProactiveRun
from loopline.domain.proposal import Proposal
from loopline.domain.timeutil import format_time
from loopline.processors.application import UnitOfWork
from tests.conftest import command, signal
from tests.unit.in_memory import InMemoryLoopline

T = "bakery"
T0 = datetime(2026, 6, 1, 9, 0, tzinfo=timezone.utc)


def send(loopline: InMemoryLoopline, ref: str, type_: str, at: datetime, **data: Any) -> None:
    [outcome] = loopline.publish(command(ref, type_, format_time(at), T, **data))
    assert outcome.accepted, outcome.detail


def proposals_after_the_next_run(loopline: InMemoryLoopline, after: datetime) -> dict[str, str]:
    """The owner is seen, the run after `after` goes: the proposals offered by then, by gap ref and theme."""
    loopline.publish(signal("seen", "user.seen", format_time(after), T))  # starts the run, if it had not
    run = UnitOfWork(loopline.app).get(ids.run_id(T), ProactiveRun)
    assert run is not None
    at = max(after, run.next_run_at)
    loopline.publish(signal("seen-again", "user.seen", format_time(at), T))
    loopline.tick(at + timedelta(minutes=1))
    return {event.proposal_ref: event.theme for event in loopline.events() if isinstance(event, Proposal.Proposed)}


def test_a_task_whose_loops_expired_twice_is_proposed_as_a_repeated_expiry():
    loopline = InMemoryLoopline()
    send(loopline, "c1", "task.create", T0, task_id="flour", title="Get the flour order confirmed")
    for n in (1, 2):
        deadline = T0 + timedelta(days=n)
        send(loopline, f"l{n}", "loop.register", deadline - timedelta(hours=20), task_id="flour", loop_id=f"ask-{n}",
             channel="webhook", watch={"source": "mill", "trigger_name": "confirmed"}, deadline=format_time(deadline),
             if_unresolved="notify_user")
        loopline.tick(deadline + timedelta(minutes=1))
    assert loopline.task(T, "flour").loops_expired == 2
    offered = proposals_after_the_next_run(loopline, T0 + timedelta(days=2, hours=1))
    assert offered.get("gap:repeated_expiry:flour:1") == "repeated_expiry"


def test_a_goal_without_an_open_task_is_proposed_and_one_a_task_serves_is_not():
    loopline = InMemoryLoopline()
    send(loopline, "g1", "tenant.goal", T0, key="wholesale", goal="Sell bread to two cafes")
    send(loopline, "g2", "tenant.goal", T0, key="newsletter", goal="Start a newsletter")
    send(loopline, "c1", "task.create", T0, task_id="draft", title="Draft the first issue",
         context={"goal": "newsletter"})
    offered = proposals_after_the_next_run(loopline, T0 + timedelta(hours=1))
    assert offered.get("gap:goal_without_step:wholesale:1") == "goal_without_step"
    assert not any("newsletter" in ref for ref in offered)


def test_a_routine_failing_twice_is_proposed_as_a_failing_routine():
    loopline = InMemoryLoopline()
    send(loopline, "r1", "routine.create", T0, routine_id="stock", action="call_webhook", params={"event": "stock"},
         kind="scheduled", interval_minutes=30)
    for minutes in (30, 35, 40, 45):  # dispatched, no report: a failure; the retry, no report: paused
        loopline.tick(T0 + timedelta(minutes=minutes))
    offered = proposals_after_the_next_run(loopline, T0 + timedelta(hours=1))
    assert offered.get("gap:failing_routine:stock:1") == "failing_routine"
