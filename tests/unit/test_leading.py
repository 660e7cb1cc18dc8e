"""The leader process's loop (runtime/leading.py) on a leader lock whose answers the test scripts."""

from __future__ import annotations

import signal
from types import SimpleNamespace
from typing import Any

import pytest

from loopline.adapters.leader import PostgresLeader
from loopline.runtime import leading


class ScriptedLeader(PostgresLeader):
    """The PostgreSQL leader lock with its checks answered in turn, the last answer repeated."""

    def __init__(self, answers: list[bool]) -> None:
        super().__init__("postgresql://unused")
        self.answers = answers

    def _lock_held_or_taken(self) -> bool:
        return self.answers.pop(0) if len(self.answers) > 1 else self.answers[0]


class LeaderSystem:
    """What the loop drives: each drain checks the lock once, as `System.drain` does before its batches."""

    def __init__(self, leader: ScriptedLeader, passes: int, stop: Any) -> None:
        self.leader, self.passes, self.stop = leader, passes, stop
        self.agent = SimpleNamespace(run_once=lambda: SimpleNamespace(done=[], read=False))
        self.brain = None

    def drain(self, deliver: bool) -> Any:
        self.leader.try_lead()
        self.passes -= 1
        if self.passes == 0:
            self.stop()
        return SimpleNamespace(relayed=0, projected=0, delivered=0)

    def close(self) -> None:
        self.leader.close()


def test_a_lock_a_drain_found_lost_is_reported_lost_though_the_next_pass_takes_it_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    handlers: dict[int, Any] = {}
    events: list[str] = []
    # Pass 1 takes the lock; pass 2's drain finds it gone (the session ended); pass 3 takes it on a new session.
    leader = ScriptedLeader([True, True, True, False, True])
    monkeypatch.setattr(signal, "signal", lambda signum, handler: handlers.__setitem__(signum, handler))
    monkeypatch.setattr(leading, "watch", lambda *_: None)
    monkeypatch.setattr(leading, "build", lambda _: LeaderSystem(leader, 3, lambda: handlers[signal.SIGTERM]()))
    monkeypatch.setattr(leading, "event", lambda name, *_, **__: events.append(name))

    leading._lead(SimpleNamespace(leader_stall_timeout=60.0), 0.01, 0, 0, "w", False)

    assert events == ["lead.taken", "lead.lost", "lead.taken", "lead.released"]
