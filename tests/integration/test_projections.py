"""Read models are derived: dropped and rebuilt from the event store they come out the same."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from eventsourcing.utils import get_topic
from sqlalchemy import text

from loopline.runtime.system import System
from tests.conftest import build_system, command, publish, signal
from tests.integration.helpers import (
    COMPLETE,
    CREATE_TASK,
    RAHUL_REPLIES,
    SEND_EMAIL,
    T0,
    append,
    dump,
    loop_rows,
    nda_awaiting_signature,
    task_rows,
    tick,
)


def _flow_1_and_friends(system: System) -> None:
    """Flow 1 end to end, plus tasks of another tenant, a reject, an expiry and an escalation."""
    publish(system, CREATE_TASK, SEND_EMAIL)
    publish(
        system,
        command("b1", "task.create", T0, tenant="tenant_b", task_id="pr", title="Get the PR reviewed"),
        command("b2", "action.record", T0, tenant="tenant_b", task_id="pr", action="open_pull_request",
                repo="acme/api", resource_id="42"),
        command("b3", "task.create", T0, tenant="tenant_b", task_id="idle", title="Idle", expires_in_days=1),
        command("b4", "action.record", T0, tenant="tenant_b", task_id="ghost", action="send_email", to="x@y.z"),
        *nda_awaiting_signature("c", "2026-04-01T00:00:00Z", "escalate_to_loop", expires_in_days=2),
    )
    tick(system, "2026-03-14T10:00:00Z")
    tick(system, "2026-03-16T10:00:01Z")
    publish(
        system,
        RAHUL_REPLIES,
        COMPLETE,
        signal("b5", "github.event", "2026-03-17T10:00:00Z", tenant="tenant_b", event_type="pull_request_review",
               repo="acme/api", resource_id="42"),
    )
    tick(system, "2026-03-17T12:00:00Z")


def test_rebuilding_every_read_model_gives_identical_rows(system: System) -> None:
    _flow_1_and_friends(system)
    before = dump(system.projections.engine)
    assert all(before[name] for name in ("tasks", "task_inbox", "open_loops", "proactive_runs", "timeline", "memory_log"))

    system.projections.reset()  # every read model dropped and projected again, in this process
    system.projections.catch_up()

    assert dump(system.projections.engine) == before


def test_rebuild_as_the_cli_runs_it_gives_identical_rows_and_counts_what_it_read(system: System) -> None:
    """On PostgreSQL that is one process per core, each rebuilding a share of the read models."""
    _flow_1_and_friends(system)
    before = dump(system.projections.engine)
    stored = Counter(n.topic for n in system.app.recorder.select_notifications(start=1, limit=1_000_000))
    reports: list[int] = []

    report = system.rebuild(progress=reports.append)

    assert dump(system.projections.engine) == before
    followed = {p.name: {get_topic(cls) for cls in p.handlers} for p in system.projections.projections}
    assert report.events_in_store == sum(stored.values())
    assert report.events_read == sum(n for topic, n in stored.items() if topic in set().union(*followed.values()))
    assert report.events_read < report.events_in_store  # the inbound messages themselves feed no read model
    assert report.applied == {name: sum(stored[topic] for topic in topics) for name, topics in followed.items()}
    assert sum(reports) == report.events_read
    assert all(status.lag == 0 for status in system.projections.status())


def test_read_models_split_into_groups_of_about_equal_work(system: System) -> None:
    names = [p.name for p in system.projections.projections]
    groups = system.projections.split(names, 2)
    assert sorted(name for group in groups for name in group) == sorted(names)
    assert "timeline" in groups[0]  # the group that follows every event type reports progress


def test_rebuilding_only_the_timeline_gives_identical_rows(system: System) -> None:
    _flow_1_and_friends(system)
    before = dump(system.projections.engine)

    projected = system.rebuild(["timeline"])

    assert projected.events_read > 0
    assert dump(system.projections.engine) == before


def test_rebuilding_an_unknown_read_model_is_refused_and_drops_nothing(system: System) -> None:
    _flow_1_and_friends(system)
    before = dump(system.projections.engine)

    with pytest.raises(ValueError, match="unknown read model"):
        system.rebuild(["tasks", "nonsense"])

    assert dump(system.projections.engine) == before


def test_read_models_lag_until_drained_then_not_at_all(system: System) -> None:
    append(system, CREATE_TASK, SEND_EMAIL)
    system.router.run_once()
    assert all(status.lag > 0 for status in system.projections.status() if status.name != "model_usage")  # no call yet
    assert task_rows(system) == []

    system.drain()

    statuses = system.projections.status()
    assert {status.name for status in statuses} == {
        "tasks", "open_loops", "proactive_runs", "timeline", "task_memory", "tenants", "limits", "suppressions",
        "pauses", "upstream_health", "model_usage", "scorecard", "loop_metrics", "questions", "reflections",
        "routines", "proposals",
    }
    assert all(status.lag == 0 for status in statuses)
    assert [row["task_id"] for row in task_rows(system)] == ["task_abc"]


def test_restarted_system_sees_the_same_rows_and_projects_nothing_again(
    system: System, home: Path, store_environ: dict[str, str]
) -> None:
    _flow_1_and_friends(system)
    before = dump(system.projections.engine)
    system.close()

    restarted = build_system(home, **store_environ)
    try:
        assert restarted.projections.catch_up() == 0
        assert dump(restarted.projections.engine) == before
        assert all(status.lag == 0 for status in restarted.projections.status())
    finally:
        restarted.close()


def test_a_read_model_an_older_release_wrote_is_rebuilt_when_the_system_opens(
    system: System, home: Path, store_environ: dict[str, str]
) -> None:
    """Its tables lack what this release writes (a column of `tasks`, the `memory_turns` table)."""
    _flow_1_and_friends(system)
    before = dump(system.projections.engine)
    with system.projections.engine.begin() as conn:
        conn.execute(text("ALTER TABLE tasks DROP COLUMN touches"))
        conn.execute(text("DROP TABLE memory_turns"))
        conn.execute(text("DELETE FROM open_loops"))  # a current read model is left as it is: not rebuilt
    system.close()

    reopened = build_system(home, **store_environ)
    try:
        assert dump(reopened.projections.engine) == {**before, "open_loops": []}
        assert all(status.lag == 0 for status in reopened.projections.status())
    finally:
        reopened.close()


def test_projection_resumes_from_its_position_after_a_restart(
    system: System, home: Path, store_environ: dict[str, str]
) -> None:
    publish(system, CREATE_TASK, SEND_EMAIL)
    append(system, RAHUL_REPLIES)
    system.router.run_once()  # processed, not yet projected
    system.close()

    restarted = build_system(home, **store_environ)
    try:
        restarted.drain()
        assert [row["resolved_by"] for row in loop_rows(restarted)] == ["signal_match"]
        assert [row["inbox"] for row in task_rows(restarted)] == [1]
    finally:
        restarted.close()


def test_projecting_in_small_batches_gives_the_same_rows(tmp_path: Path) -> None:
    whole, batched = build_system(tmp_path / "whole"), build_system(tmp_path / "batched")
    try:
        batched.projections.batch_size = 3
        for system in (whole, batched):
            _flow_1_and_friends(system)
        assert dump(batched.projections.engine) == dump(whole.projections.engine)
    finally:
        whole.close()
        batched.close()
