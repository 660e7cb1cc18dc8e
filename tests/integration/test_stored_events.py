"""Events and snapshots stored by an earlier version still load, replay and project.

The fixture (`tests/fixtures/stored_events_v1.json`, written by `tests/fixtures/stored_events.py`)
holds every kind of event and a task snapshot as version 1 stored them. A change of an event or
snapshot shape must keep these loading: give the class a `class_version` and an upcaster.
"""

from __future__ import annotations

import json
from pathlib import Path
from uuid import UUID

from eventsourcing.persistence import StoredEvent, Tracking

from loopline.domain import ids
from loopline.domain.task import Task
from loopline.domain.tenant import Tenant
from loopline.projections.tenants import find_tenant, unmasked_settings
from loopline.runtime.system import System
from tests.conftest import build_system, command, publish
from tests.fixtures.stored_events import FIXTURE, FIXTURE_V2, GYM
from tests.integration.helpers import loop_row, task_rows

EXPECTED_STATUS = {
    "task_abc": "completed", "t-review": "cancelled", "t-pr": "executing", "t-dm": "executing",
    "t-cancel": "cancelled", "t-quiet": "expired", "t-esc": "escalated",
    "t-refused": "pending_review",  # its follow-up timer was refused: a draft before review
    "t-kept": "executing",  # its reply was processed before its email and kept until then
}


def _stored(item: dict) -> StoredEvent:
    return StoredEvent(originator_id=UUID(item["originator_id"]), originator_version=item["originator_version"],
                       topic=item["topic"], state=item["state"].encode())


def _load_fixture(home: Path, fixture: Path = FIXTURE) -> System:
    document = json.loads(fixture.read_text(encoding="utf-8"))
    system = build_system(home)
    system.app.recorder.insert_events([_stored(item) for item in document["events"]])
    assert system.app.snapshots is not None
    system.app.snapshots.recorder.insert_events([_stored(item) for item in document["snapshots"]])
    return system


def test_stored_version_1_events_replay_into_the_same_tasks(home: Path) -> None:
    system = _load_fixture(home)
    try:
        system.projections.catch_up()
        assert {row["task_id"]: row["status"] for row in task_rows(system)} == EXPECTED_STATUS
        assert sum(row["actions"] for row in task_rows(system)) >= 4
    finally:
        system.close()


def test_a_stored_version_1_snapshot_loads_as_its_replayed_events(home: Path) -> None:
    system = _load_fixture(home)
    try:
        document = json.loads(FIXTURE.read_text(encoding="utf-8"))
        [snapshot] = document["snapshots"]
        task_id = UUID(snapshot["originator_id"])
        from_snapshot = system.app.repository.get(task_id)
        replayed = None
        for event in system.app.events.get(task_id):
            replayed = event.mutate(replayed)
        assert isinstance(from_snapshot, Task) and isinstance(replayed, Task)
        assert {k: v for k, v in vars(from_snapshot).items() if k != "_trigger_order"} == {
            k: v for k, v in vars(replayed).items() if k != "_trigger_order"
        }
    finally:
        system.close()


def test_new_messages_apply_on_top_of_the_stored_history(home: Path) -> None:
    system = _load_fixture(home)
    try:
        # The store came with its history: the router carries on after it, as after an upgrade.
        system.app.process_recorder.insert_tracking(Tracking("router", system.app.recorder.max_notification_id()))
        report = publish(system, command("v2-1", "task.complete", "2026-03-30T10:00:00Z", task_id="t-pr", summary="merged"))
        assert report.rejected == []
        assert {row["task_id"]: row["status"] for row in task_rows(system)} == {**EXPECTED_STATUS, "t-pr": "completed"}
    finally:
        system.close()


def test_a_stored_match_index_is_found_under_its_version_1_id(home: Path) -> None:
    system = _load_fixture(home)
    try:
        system.app.process_recorder.insert_tracking(Tracking("router", system.app.recorder.max_notification_id()))
        # Registered before the stored review (s10, 06:00) happened: the kept review resolves it at once.
        report = publish(system, command(
            "v2-2", "loop.register", "2026-03-13T15:00:00Z", task_id="t-pr", loop_id="t-pr/review", channel="github",
            watch={"event_type": "pull_request_review", "resource_id": "42"}, deadline="2026-03-20T10:00:00Z",
            if_unresolved="notify_user",
        ))
        assert report.rejected == []
        assert loop_row(system, "t-pr/review")["resolved_by"] == "signal_match"
    finally:
        system.close()


def test_a_stored_version_1_loop_reads_with_no_contact_and_says_what_it_waits_for(home: Path) -> None:
    system = _load_fixture(home)
    try:
        loops = {ref: system.app.repository.get(ids.loop_id("user_xyz", ref)) for ref in ("t-refused/reply", "t-kept/send_email/1")}
        assert all((loop.action, loop.contact, loop.contact_name) == (None, None, None) for loop in loops.values())
        assert loops["t-refused/reply"].awaited() == "an email signal with sender lee@x.example"  # registered with no description
        assert loops["t-kept/send_email/1"].awaited() == "Reply from recipient (kim@x.example)"
    finally:
        system.close()


EXPECTED_STATUS_V2 = {
    "c-maya": ("completed", "verbal_commitment"),  # answered while a limit held touch 2 back
    "v-ann": ("cancelled", "unresponsive"),  # said "maybe": the cadence resumed, then ran out
    "w-maya": ("cancelled", "unresponsive"),  # every touch deferred by Maya's weekly limit
    "d-kim": ("dormant", None),
    "r-lee": ("expired", None),  # never approved
}


def test_stored_version_2_outreach_events_replay_into_the_same_tasks_and_views(home: Path) -> None:
    """Issue 11's events (tenants, the plan, decisions, touches, deferrals, outcomes, dormancy, the ledgers)."""
    system = _load_fixture(home, FIXTURE_V2)
    try:
        system.projections.catch_up()
        rows = {row["task_id"]: row for row in task_rows(system) if row["tenant"] == GYM}
        assert {ref: row["status"] for ref, row in rows.items()} == {ref: s for ref, (s, _) in EXPECTED_STATUS_V2.items()}
        for ref, (_, outcome) in EXPECTED_STATUS_V2.items():
            task = system.app.repository.get(ids.task_id(GYM, ref))
            assert isinstance(task, Task) and task.outcome == outcome
        kim = system.app.repository.get(ids.task_id(GYM, "d-kim"))
        assert (kim.messages_used, kim.touch, kim.dormant_until is not None) == (3, 3, True)
    finally:
        system.close()


def test_a_stored_version_1_notice_loads_as_its_words_with_no_quote_draft_or_commands(home: Path) -> None:
    system = _load_fixture(home)
    try:
        document = json.loads(FIXTURE.read_text(encoding="utf-8"))
        stored = next(item for item in document["events"] if item["topic"].endswith("Task.UserNotified"))
        [notice] = system.app.events.get(UUID(stored["originator_id"]), gt=stored["originator_version"] - 1,
                                         lte=stored["originator_version"])
        assert isinstance(notice, Task.UserNotified)
        assert notice.message == json.loads(stored["state"])["message"]
        assert (notice.quote, notice.draft, notice.actions) == (None, None, [])
    finally:
        system.close()


def test_a_stored_version_2_tenant_loads_and_reads_with_no_webhook_secret_set(home: Path) -> None:
    system = _load_fixture(home, FIXTURE_V2)
    try:
        system.projections.catch_up()
        tenant = system.app.repository.get(ids.tenant_id(GYM))
        assert isinstance(tenant, Tenant) and tenant.current.name == "Renegade"
        assert (tenant.current.github_webhook_secret, tenant.current.webhook_secrets) == (None, {})
        with system.projections.engine.connect() as conn:
            shown = find_tenant(conn, GYM)
            assert unmasked_settings(conn, GYM).slack_signing_secret is None
        assert shown is not None and shown["settings"]["github_webhook_secret"] is None
        assert shown["settings"]["webhook_secrets"] == {}
    finally:
        system.close()
