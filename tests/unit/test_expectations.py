"""What each action implies should happen next, and the OpenLoop that tracks it."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from loopline.domain import ids
from loopline.domain.channels import InvalidWatch, channel_rule
from loopline.domain.expectations import EXPECTATIONS
from loopline.domain.open_loop import InvalidDeadlineAction, LoopAlreadyResolved, OpenLoop

NOW = datetime(2025, 3, 1, 9, 0, tzinfo=timezone.utc)


def test_the_six_seed_rows_have_their_default_deadlines():
    assert {action: row.default_deadline for action, row in EXPECTATIONS.items()} == {
        "send_email": timedelta(days=3),
        "create_calendar_invite": timedelta(hours=24),
        "send_contract": timedelta(days=7),
        "open_pull_request": timedelta(days=2),
        "send_slack_dm": timedelta(hours=4),
        "create_todo": timedelta(days=2),
    }


@pytest.mark.parametrize("action", sorted(EXPECTATIONS))
def test_an_action_sets_only_watch_fields_its_channel_reads_and_always_the_ones_it_needs(action: str) -> None:
    row = EXPECTATIONS[action]
    rule = channel_rule(row.channel)
    set_by_fields = {spec.watch.split(".")[0] for spec in row.fields if spec.watch}
    assert set_by_fields | set(row.watch_defaults) <= {*rule.required_watch, *rule.optional_watch}
    always = {spec.watch for spec in row.fields if spec.watch and spec.required} | set(row.watch_defaults)
    assert set(rule.required_watch) <= always


CHANNEL_FIELDS = {
    "send_email": {"to": "bob@x.com", "thread_id": "th1"},
    "create_calendar_invite": {"event_id": "ev1"},
    "send_contract": {"resource_id": "contract-7"},
    "open_pull_request": {"repo": "acme/api", "resource_id": "42"},
    "send_slack_dm": {"slack_user_id": "U1", "channel_id": "D1", "ts": "1700000000.1"},
    "create_todo": {},
}


@pytest.mark.parametrize("action", sorted(EXPECTATIONS))
def test_expected_watch_is_valid_for_the_rows_channel(action):
    row = EXPECTATIONS[action]
    watch = row.watch(CHANNEL_FIELDS[action])
    channel_rule(row.channel).check_watch(watch)
    loop = register(channel=row.channel, watch=watch, if_unresolved=row.if_unresolved)
    assert loop.deadline == NOW + timedelta(days=1) and not loop.resolved


def test_email_without_a_recipient_gives_an_invalid_watch():
    with pytest.raises(InvalidWatch, match="sender"):
        channel_rule("email").check_watch(EXPECTATIONS["send_email"].watch({}))


def register(*, channel="email", watch=None, if_unresolved="notify_user", deadline=NOW + timedelta(days=1)) -> OpenLoop:
    return OpenLoop.register(
        id=ids.loop_id("u", "loop-1"), now=NOW, channel=channel, watch={"sender": "bob@x.com"} if watch is None else watch,
        if_unresolved=if_unresolved, tenant="u", ref="loop-1", task_ref="t1", deadline=deadline,
        description="a reply from Bob", origin="explicit",
    )


def test_loop_with_unknown_deadline_action_is_refused():
    with pytest.raises(InvalidDeadlineAction, match="shrug"):
        register(if_unresolved="shrug")


def test_followup_email_draft_needs_an_email_loop():
    with pytest.raises(InvalidDeadlineAction, match="slack"):
        register(channel="slack", watch={"slack_user_id": "U1", "channel_id": "D1"}, if_unresolved="draft_followup_email")


def test_loop_with_invalid_watch_is_refused():
    with pytest.raises(InvalidWatch, match="channel_id"):
        register(channel="slack", watch={"slack_user_id": "U1"})


def test_resolving_a_loop_twice_is_refused():
    loop = register()
    loop.resolve(resolved_by="signal_match", reason="Bob replied", now=NOW + timedelta(hours=1), signal_ref="sig-1")
    with pytest.raises(LoopAlreadyResolved):
        loop.resolve(resolved_by="manual", reason="again", now=NOW + timedelta(hours=2))
    assert loop.resolved_by == "signal_match"
    assert loop.resolved_at == NOW + timedelta(hours=1)


def test_loop_is_overdue_exactly_at_its_deadline_not_a_second_before():
    deadline = NOW + timedelta(days=3)
    loop = register(deadline=deadline)
    assert not loop.is_overdue(deadline - timedelta(seconds=1))
    assert loop.is_overdue(deadline)


def test_resolved_loop_is_never_overdue():
    loop = register()
    loop.resolve(resolved_by="manual", reason="done", now=NOW)
    assert not loop.is_overdue(NOW + timedelta(days=30))
