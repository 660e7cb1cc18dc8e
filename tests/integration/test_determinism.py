"""BRIEF invariant 5: the same inputs with the same --now values give the same events."""

from __future__ import annotations

from pathlib import Path

from loopline.cli.demo import FLOW_1
from loopline.domain.timeutil import parse_time
from tests.conftest import build_system, publish


def _play(home: Path) -> list[tuple[str, bytes]]:
    system = build_system(home)
    try:
        for _narration, step in FLOW_1:
            if isinstance(step, str):
                system.scheduler.tick(parse_time(step))
                system.drain()
            else:
                publish(system, *step)
        notifications = system.app.recorder.select_notifications(start=1, limit=100_000)
        return [(n.topic, n.originator_id.hex, n.originator_version, n.state) for n in notifications]
    finally:
        system.close()


def test_replaying_flow_1_in_a_new_home_gives_identical_events(tmp_path: Path) -> None:
    first, second = _play(tmp_path / "a"), _play(tmp_path / "b")
    assert len(first) > 40
    assert first == second
