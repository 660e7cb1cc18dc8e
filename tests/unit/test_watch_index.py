"""The match index keeps recent signals for loops registered after them, by event time."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from uuid import uuid4

from eventsourcing.persistence import DatetimeAsISO, JSONTranscoder, Mapper, UUIDAsHex

from loopline.domain.watch_index import KEEP_SIGNALS_FOR, WatchIndex

T0 = datetime(2026, 3, 13, 10, 0, tzinfo=timezone.utc)
SLACK_WATCH = {"slack_user_id": "U1", "channel_id": "D1", "after_ts": "100"}


def slack_index() -> WatchIndex:
    return WatchIndex.open(id=uuid4(), tenant="acme", channel="slack", key="U1\x1fD1", now=T0)


def keep(index: WatchIndex, ref: str, at: datetime, ts: str, resolved_loops: list[str] | None = None) -> None:
    index.keep(
        signal_ref=ref, signal_type="slack.message", data={"slack_user_id": "U1", "channel_id": "D1", "ts": ts},
        resolved_loops=resolved_loops or [], tasks=[], at=at,
    )


def test_a_loop_registered_after_a_signal_happened_is_not_matched_by_it() -> None:
    index = slack_index()
    keep(index, "s1", T0, ts="200")
    assert index.kept_match(SLACK_WATCH, registered_at=T0 + timedelta(seconds=1)) is None
    assert index.kept_match(SLACK_WATCH, registered_at=T0)["ref"] == "s1"


def test_the_first_kept_signal_the_channel_rule_matches_is_the_one_found() -> None:
    index = slack_index()
    keep(index, "before-the-dm", T0 + timedelta(hours=1), ts="50")  # ts not after after_ts: no match
    keep(index, "first", T0 + timedelta(hours=3), ts="300")
    keep(index, "second", T0 + timedelta(hours=2), ts="250")
    assert index.kept_match(SLACK_WATCH, registered_at=T0)["ref"] == "first"


def test_signals_older_than_the_window_are_dropped_when_a_newer_one_is_kept() -> None:
    index = slack_index()
    keep(index, "old", T0, ts="200")
    keep(index, "edge", T0 + timedelta(hours=1), ts="200")
    keep(index, "new", T0 + KEEP_SIGNALS_FOR + timedelta(hours=1), ts="200")
    assert [signal["ref"] for signal in index.kept] == ["edge", "new"]


def test_a_kept_signal_stops_the_index_watching_the_loops_it_resolved() -> None:
    index = slack_index()
    index.watch("loop-a", now=T0)
    index.watch("loop-b", now=T0)
    keep(index, "s1", T0 + timedelta(hours=1), ts="200", resolved_loops=["loop-a"])
    assert index.loop_refs == ["loop-b"]


def test_a_stored_snapshot_restores_the_kept_signals() -> None:
    index = slack_index()
    keep(index, "s1", T0 + timedelta(hours=1), ts="200")
    index.mark_delivered("s1", "task-1", now=T0 + timedelta(hours=1))
    transcoder = JSONTranscoder()
    transcoder.register(UUIDAsHex())
    transcoder.register(DatetimeAsISO())
    mapper = Mapper(transcoder=transcoder)
    restored = mapper.to_domain_event(mapper.to_stored_event(WatchIndex.Snapshot.take(index))).mutate(None)
    assert restored.kept == index.kept and restored.kept[0]["tasks"] == ["task-1"]
