"""The last tick's duration (`/metrics`) is one row every tick overwrites, also when two ticks end together."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

import pytest
from sqlalchemy import insert

from loopline.adapters import heartbeats
from loopline.adapters.heartbeats import LastTick, TickTimes
from loopline.adapters.read_model import read_model_engine

AT = datetime(2026, 3, 2, 9, tzinfo=timezone.utc)


def test_a_tick_ending_beside_another_updates_the_row_the_other_inserted(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    engine = read_model_engine(f"sqlite:///{tmp_path / 'events.db'}")
    heartbeats.create_tables(engine)
    times = TickTimes(engine)
    times.record(LastTick(1.5, 3, AT, AT))

    def found_no_row_and_inserts(conn, key, row):  # what the second of two racing ticks does
        conn.execute(insert(key.table).values(**row))

    monkeypatch.setattr(heartbeats, "_put", found_no_row_and_inserts)
    times.record(LastTick(0.25, 1, AT, AT))
    assert times.last() == LastTick(0.25, 1, AT, AT)
