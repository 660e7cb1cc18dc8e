"""Deterministic ids and the hour-bucket timer wheel."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from uuid import uuid5

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from loopline.domain import ids
from loopline.domain.channels import CHANNELS
from loopline.domain.timers import BucketClosed, TimerBucket, TimerWheel

NOW = datetime(2025, 3, 1, 9, 30, tzinfo=timezone.utc)
HOUR = timedelta(hours=1)


def test_same_reference_always_names_the_same_task():
    assert ids.task_id("u", "t1") == ids.task_id("u", "t1")
    assert ids.task_id("u", "t1") != ids.task_id("u", "t2")


def test_same_reference_in_another_tenant_is_another_task():
    assert ids.task_id("alice", "t1") != ids.task_id("bob", "t1")
    assert ids.loop_id("alice", "l1") != ids.loop_id("bob", "l1")


def test_task_and_loop_with_the_same_reference_get_different_ids():
    assert ids.task_id("u", "x") != ids.loop_id("u", "x")


def test_parts_cannot_run_into_each_other():
    assert ids.task_id("ab", "c") != ids.task_id("a", "bc")


# Characters that could make two tuples' keys meet: the separator, the length prefix's digits and colon.
PART = st.text(alphabet=st.sampled_from([ids.SEP, ":", "0", "1", "9", "a", "é", "\x1e"]), max_size=5)
PARTS = st.lists(PART, min_size=1, max_size=5).map(tuple)


def _parts_of(key: str) -> tuple[str, ...]:
    """Reads a composite key back: the proof that no two tuples can share one."""
    if not key.startswith(ids.SEP):
        return tuple(key.split(ids.SEP))
    parts, at = [], 1
    while at < len(key):
        colon = key.index(":", at)
        length = int(key[at:colon])
        parts.append(key[colon + 1:colon + 1 + length])
        at = colon + 1 + length
    return tuple(parts)


@given(PARTS)
def test_every_composite_key_names_exactly_its_parts(parts):
    assert _parts_of(ids.composite(*parts)) == parts


@given(st.lists(PARTS, min_size=2, max_size=30, unique=True))
def test_distinct_parts_never_share_a_key(many):
    assert len({ids.composite(*parts) for parts in many}) == len(many)


@given(PARTS)
def test_parts_that_joined_like_others_keep_their_own_key(parts):
    forged = tuple(ids.SEP.join(parts).split(ids.SEP))
    assume(forged != parts)
    assert ids.composite(*forged) != ids.composite(*parts)


@given(st.lists(st.tuples(PART, PART), min_size=2, max_size=30, unique=True))
def test_distinct_tenants_and_references_never_share_an_id(pairs):
    for derive in (ids.task_id, ids.loop_id, ids.message_id):
        assert len({derive(tenant, ref) for tenant, ref in pairs}) == len(pairs)


SEPARATOR_FREE = st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters=ids.SEP))


@given(SEPARATOR_FREE.filter(bool), st.lists(SEPARATOR_FREE, max_size=4))
def test_keys_that_could_not_collide_keep_their_version_1_value(first, rest):
    assert ids.composite(first, *rest) == ids.SEP.join([first, *rest])


@given(SEPARATOR_FREE, SEPARATOR_FREE)
def test_ids_that_could_not_collide_keep_their_version_1_value(tenant, ref):
    assert ids.task_id(tenant, ref) == uuid5(ids.NAMESPACE, ids.SEP.join(["task", tenant, ref]))
    assert ids.message_id(tenant, ref) == uuid5(ids.NAMESPACE, ids.SEP.join(["message", tenant, ref]))


def test_version_1_ids_are_kept():
    assert ids.task_id("user_xyz", "task_abc") == uuid5(ids.NAMESPACE, "task\x1fuser_xyz\x1ftask_abc")
    assert ids.watch_index_id("acme", "slack", ("U1", "D1")) == uuid5(
        ids.NAMESPACE, "watch-index\x1facme\x1fslack\x1fU1\x1fD1"
    )


def test_a_tenant_holding_the_separator_cannot_write_onto_another_tenants_task():
    assert ids.task_id("carol\x1fx", "y") != ids.task_id("carol", "x\x1fy")
    assert ids.message_id("carol\x1fx", "m1") != ids.message_id("carol", "x\x1fm1")


@pytest.mark.parametrize("channel", sorted(set(CHANNELS) - {"email"}))
def test_watch_keys_of_two_fields_cannot_run_into_each_other(channel):
    rule = CHANNELS[channel]
    first, second = rule.required_watch
    one = rule.watch_key({first: "a\x1fb", second: "c"})
    other = rule.watch_key({first: "a", second: "b\x1fc"})
    assert ids.composite(*one) != ids.composite(*other)
    assert ids.watch_index_id("acme", channel, one) != ids.watch_index_id("acme", channel, other)


def test_a_tenant_holding_the_separator_cannot_reach_another_tenants_match_index():
    email = CHANNELS["email"]
    assert ids.watch_index_id("carol\x1femail", "email", email.watch_key({"sender": "x"})) != ids.watch_index_id(
        "carol", "email", email.watch_key({"sender": "email\x1fx"})
    )


def wheel(due: datetime) -> TimerWheel:
    return TimerWheel.start(id=ids.timer_wheel_id(), due=due, now=NOW)


def test_before_any_sweep_an_earlier_timer_moves_the_wheel_back():
    w = wheel(NOW + 5 * HOUR)
    hour = w.place(NOW + 2 * HOUR, now=NOW)
    assert hour == datetime(2025, 3, 1, 11, tzinfo=timezone.utc)
    assert w.first_unswept == hour


def test_timer_due_in_a_swept_hour_is_filed_in_the_first_unswept_hour():
    w = wheel(NOW)
    swept_to = datetime(2025, 3, 1, 12, tzinfo=timezone.utc)
    w.swept_until(swept_to, now=swept_to)
    assert w.place(NOW, now=swept_to) == swept_to
    assert w.first_unswept == swept_to


def test_timer_due_after_the_sweep_goes_in_its_own_hour():
    w = wheel(NOW)
    w.swept_until(datetime(2025, 3, 1, 12, tzinfo=timezone.utc), now=NOW)
    assert w.place(NOW + 5 * HOUR + timedelta(minutes=10), now=NOW) == datetime(2025, 3, 1, 14, tzinfo=timezone.utc)


def bucket() -> TimerBucket:
    hour = datetime(2025, 3, 1, 9, tzinfo=timezone.utc)
    return TimerBucket.open(id=ids.timer_bucket_id(hour, 0), hour=hour, shard=0, now=NOW)


def test_closed_bucket_refuses_new_timers():
    b = bucket()
    b.close(now=NOW)
    with pytest.raises(BucketClosed):
        b.set_timer(kind="loop_deadline", target_id=ids.loop_id("u", "l1"), due=NOW, now=NOW)
    assert b.size == 0


def test_only_timers_already_due_fire():
    b = bucket()
    early, late = ids.loop_id("u", "l1"), ids.task_id("u", "t1")
    b.set_timer(kind="task_expiry", target_id=late, due=NOW + timedelta(minutes=20), now=NOW)
    b.set_timer(kind="loop_deadline", target_id=early, due=NOW - timedelta(minutes=20), now=NOW)
    events = b.collect_events()
    assert [t[1] for t in TimerBucket.due(events, NOW)] == [early]
    assert [t[1] for t in TimerBucket.due(events, NOW + timedelta(minutes=20))] == [early, late]


def test_the_same_timer_filed_twice_fires_once():
    b = bucket()
    for _ in range(2):
        b.set_timer(kind="loop_deadline", target_id=ids.loop_id("u", "l1"), due=NOW, now=NOW)
    assert len(TimerBucket.due(b.collect_events(), NOW)) == 1
