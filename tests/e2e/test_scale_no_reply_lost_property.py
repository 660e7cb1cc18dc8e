"""The no-lost-reply property (`tests/no_reply_lost.py`) on the scale deployment, for a few interleavings:
messages through Kafka to a `loopline run` worker, whose leader asks the model (the offline policy) and
delivers, while this process ticks as `loopline tick` does from a host. The examples share one deployment,
each as a tenant of its own, on a clock that starts after the one before ended."""

from __future__ import annotations

from datetime import datetime, timedelta
from itertools import count

from hypothesis import HealthCheck, given, settings

from tests.e2e.scale import ScaleDeployment
from tests.e2e.test_scale_workers import Deploy, deploy  # noqa: F401 - the fixture
from tests.no_reply_lost import T0, broken_rules, configure, interleavings, messages_of, replies_in, resumed, zone
from tests.rails_held import broken_rails

__all__ = ["deploy"]

SETTLE_TICKS = 2
SETTLE_STEP = timedelta(days=20)
"""Two ticks twenty days apart after the operations: past every cadence, deferral, wake-up and budget."""
EXAMPLE_SPAN = timedelta(days=120)
"""Longer than any example's operations and settling ticks: the next example's clock starts after it."""


class Ticking:
    """One deployment the examples share: publishes their messages, then ticks from this process as a host does."""

    def __init__(self, loopline: ScaleDeployment) -> None:
        self.loopline = loopline
        self.inbound = 0
        self.waiting: list[dict] = []

    def publish(self, *messages: dict) -> None:
        self.waiting += messages

    def tick(self, now: datetime) -> None:
        """Lets the worker apply what waits, ticks at `now`, and lets the worker's leader decide and deliver
        what the tick asked for: each tick starts from a settled state."""
        if self.waiting:
            self.loopline.publish(self.waiting)
            self.inbound += len(self.waiting)
            self.waiting = []
            self.loopline.settle(inbound=self.inbound)
        self.loopline.system.tick(now)
        self.loopline.settle(inbound=self.inbound)


def test_no_reply_is_lost_at_scale(deploy: Deploy) -> None:  # noqa: F811 - the fixture
    loopline = deploy()
    loopline.start_worker()
    ticking, examples = Ticking(loopline), count()

    @settings(max_examples=2, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
    @given(ops=interleavings(10), timezone_name=zone)
    def no_reply_is_lost(ops: list[tuple], timezone_name: str) -> None:
        example = next(examples)
        tenant, now = f"gym{example}", T0 + example * EXAMPLE_SPAN
        published = [configure(now, timezone_name, tenant=tenant)]
        ticking.publish(published[0])
        for n, op in enumerate(ops):
            now += timedelta(minutes=10)
            if op[0] == "tick":
                now += timedelta(hours=op[1])
                ticking.tick(now)
            else:
                messages = messages_of(n, op, now, timezone_name, tenant=tenant)
                published += messages
                ticking.publish(*messages)
        ticking.publish(*resumed(now, tenant=tenant))
        for _ in range(SETTLE_TICKS):
            now += SETTLE_STEP
            ticking.tick(now)

        mapper = loopline.system.app.mapper
        events = [e for e in map(mapper.to_domain_event, loopline.notifications())
                  if getattr(e, "tenant", None) == tenant or type(e).__qualname__.startswith("SystemSwitch.")]
        assert broken_rules(replies_in(published), events, timezone_name) == []
        assert broken_rails(events) == []

    no_reply_is_lost()
