"""The proactive_runs read model follows the run's pace (issue 21: `loopline status --tenant T`): the owner's activity
tier and the runs in a row that took no action, as each finished run's `ProactiveRun.Paced` left them."""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import create_engine

from loopline.domain.timeutil import format_time
from loopline.projections import proactive_runs
from loopline.projections.runner import metadata
from tests.conftest import signal
from tests.unit.in_memory import InMemoryLoopline
from tests.unit.test_synthesis_runs import DAY0, RUN_AT, T, tenant_with_a_task


def rows_of(loopline: InMemoryLoopline) -> list[dict]:
    engine = create_engine("sqlite://")
    metadata.create_all(engine, tables=list(proactive_runs.tables))
    with engine.begin() as conn:
        loopline.project(conn, proactive_runs)
        return proactive_runs.list_runs(conn)


def test_a_run_before_the_owner_was_ever_seen_has_no_tier_and_no_empty_runs():
    loopline = tenant_with_a_task()
    loopline.tick(RUN_AT)
    [row] = rows_of(loopline)
    assert (row["runs"], row["tier"], row["empty_runs_in_a_row"]) == (1, None, 0)


def test_runs_that_take_no_action_are_counted_in_a_row_under_the_owners_tier_as_they_age():
    loopline = tenant_with_a_task()
    loopline.publish(signal("seen-1", "user.seen", format_time(DAY0), T))
    loopline.tick(RUN_AT)
    [row] = rows_of(loopline)
    assert (row["tier"], row["empty_runs_in_a_row"]) == ("active", 1)
    loopline.tick(RUN_AT + timedelta(days=1))  # the offline policy looks again in a day: the owner is now dormant
    [row] = rows_of(loopline)
    assert (row["runs"], row["tier"], row["empty_runs_in_a_row"]) == (2, "dormant", 2)
    assert row["next_run_at"] == format_time(RUN_AT + timedelta(days=2))
