"""The scale differential test (issue 19, item 9): the same inputs at scale, with the leader's worker SIGKILLed
at a random moment while it applies the inputs and after each tick, send the same emails as one embedded
process that is never killed."""

from __future__ import annotations

import random
import time
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from loopline.adapters.leader import PostgresLeader
from tests.e2e.differential import ANSWERED_AFTER_TICK, TICKS, answers, inputs, reference, sends
from tests.e2e.scale import ScaleDeployment, Worker
from tests.e2e.test_scale_workers import Deploy, deploy  # noqa: F401 - the fixture

__all__ = ["deploy"]

WORKERS = 2
LONGEST_WAIT = 1.0
"""Seconds, at most, between a step and the kill: while the leader decides and delivers what the step asked for."""


class Killing:
    """Keeps WORKERS workers running and, after a step, kills the worker whose leader holds the lock."""

    def __init__(self, loopline: ScaleDeployment, seed: int) -> None:
        self.loopline = loopline
        self.live: list[Worker] = [loopline.start_worker() for _ in range(WORKERS)]
        self.inbound = 0
        self.kills = 0
        self._random = random.Random(seed)

    def step(self, publish: list[dict[str, Any]] | None = None, tick: datetime | None = None, *,
             kill: bool = True) -> None:
        """Publishes or ticks, kills the leading worker a random moment later, and waits until everything the
        step caused is decided and delivered. (A kill while workers consume costs the session timeout, 10 s,
        before the dead one's partitions move: one such kill is enough.)"""
        if publish:
            self.loopline.publish(publish)
            self.inbound += len(publish)
        if tick is not None:
            self.loopline.system.tick(tick)
        if kill:
            time.sleep(self._random.uniform(0, LONGEST_WAIT))
            self.kill_leader()
        self.settle()

    def kill_leader(self) -> None:
        holder = PostgresLeader(self.loopline.environ["LOOPLINE_EVENT_STORE"]).holder() or ""
        victim = next((w for w in self.live if holder.endswith(f":{w.process.pid}")), self._random.choice(self.live))
        victim.kill()
        self.kills += 1
        self.live.remove(victim)
        self.live.append(self.loopline.start_worker())

    def end(self) -> None:
        """Kills the workers left: this test is about kills, and a worker stopping cleanly takes seconds."""
        for worker in self.live:
            worker.kill()

    def settle(self) -> None:
        """Applied, projected, relayed, decided and delivered: the leader's agent may still be deciding when the
        rest has settled, and its decisions send."""
        self.loopline.settle(inbound=self.inbound, decided=True)


def test_workers_killed_at_random_send_the_same_emails_as_one_process_never_killed(
    deploy: Deploy, tmp_path: Path  # noqa: F811 - the fixture
) -> None:
    expected = reference(tmp_path / "embedded")
    loopline = deploy()
    killing = Killing(loopline, seed=19)

    try:
        killing.step(publish=inputs())
        for n, at in enumerate(TICKS):
            killing.step(tick=at)
            if n == ANSWERED_AFTER_TICK:
                killing.step(publish=answers(at + timedelta(hours=1)), kill=False)
    finally:
        killing.end()

    assert killing.kills == len(TICKS) + 1
    assert sends(loopline.outbox()) == expected
