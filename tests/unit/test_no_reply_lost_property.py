"""The no-lost-reply property (`tests/no_reply_lost.py`) on the in-memory store, for many interleavings: the
router, the scheduler, the agent (the offline policy, switched off now and then) and delivery, as embedded."""

from __future__ import annotations

import os
from datetime import timedelta

from hypothesis import HealthCheck, Phase, event, example, given, settings

from loopline.adapters.offline_policy import OfflinePolicy
from loopline.domain.send_ledger import ContactSends
from loopline.domain.task import Task
from tests.no_reply_lost import (
    SETTLE_DAYS,
    T0,
    broken_rules,
    configure,
    interleavings,
    messages_of,
    replies_in,
    resumed,
    zone,
)
from tests.rails_held import broken_rails
from tests.unit.fakes import SwitchableModel
from tests.unit.in_memory import InMemoryLoopline

PHASES = tuple(Phase)[:-2] if os.environ.get("CI") else tuple(Phase)  # no minutes-long shrinking in CI runs


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow], phases=PHASES)
@given(interleavings(24), zone)
@example(  # "stop emailing me" before the first touch: the close was refused (ready cannot complete), touch 1 went out
    [("create", ("churn_risk", 1), True, 0.95), ("reply", 1, 3, None), ("tick", 42)], "UTC")
@example(  # an out-of-office reply pauses the task, which resumes its cadence after the stated return
    [("create", ("churn_risk", 0), True, 0.95), ("tick", 1), ("reply", 0, 6, None), ("tick", 72), ("tick", 72),
     ("tick", 72), ("tick", 72), ("tick", 72), ("tick", 72)], "UTC")
@example(  # replies after the owner took the task over: told to the owner, or read by an outside agent's task
    [("create", ("win_back", 0), False, 0.95), ("tick", 3), ("takeover", ("win_back", 0)), ("reply", 0, 0, None),
     ("agent_email", 0), ("reply", 0, 0, None)], "UTC")
@example(  # the reply while a seed-000 follow-up is held back by the weekly limit: kept, and the follow-up never sent
    [("limits", 1, 4), ("create", ("lead_followup", 2), True, 0.95), ("tick", 1), ("agent_email", 2), ("tick", 73),
     ("reply", 2, 5, None), ("tick", 72), ("tick", 72)], "UTC")
@example(  # a touch due while the tenant is paused is held, and goes out after the resume, within the limits
    [("create", ("churn_risk", 0), True, 0.95), ("tenant.pause",), ("tick", 24), ("system.pause",), ("tick", 24),
     ("tenant.resume",), ("tick", 1), ("system.resume",), ("tick", 1)], "Asia/Tokyo")
@example(  # an unsubscribe closes the member's tasks; once they opt back in, a new task may write to them again
    [("create", ("churn_risk", 1), True, 0.95), ("tick", 1), ("unsubscribe", 1), ("tick", 72),
     ("create", ("lead_followup", 1), True, 0.95), ("resubscribe", 1), ("create", ("win_back", 1), True, 0.95),
     ("tick", 1), ("soft_bounce", 1), ("soft_bounce", 1), ("soft_bounce", 1), ("tick", 72)], "UTC")
@example(  # "stop emailing me" from a member suppressed already (a complaint): the owner reads it, as a late reply
    [("create", ("win_back", 1), False, 0.3), ("tick", 1), ("complaint", 1), ("reply", 1, 3, "win_back"),
     ("tick", 39)], "UTC")
def test_no_reply_is_lost_whatever_interleaves(ops: list[tuple], timezone_name: str) -> None:
    model = SwitchableModel(OfflinePolicy())
    loopline = InMemoryLoopline(model)  # type: ignore[arg-type]
    try:
        now = T0
        published = [configure(now, timezone_name)]
        loopline.publish(published[0])
        for n, op in enumerate(ops):
            now += timedelta(minutes=10)
            if op[0] == "tick":
                now += timedelta(hours=op[1])
                loopline.tick(now)
            elif op[0] == "model_down":
                model.down = op[1]
            elif messages := messages_of(n, op, now, timezone_name):
                published += messages
                loopline.publish(*messages)
        model.down = False
        loopline.publish(*resumed(now))
        for _ in range(SETTLE_DAYS // 2):
            now += timedelta(days=2)
            loopline.tick(now)

        events = loopline.events()
        event(f"replies: {len(replies_in(published))}; emails: {min(len(loopline.emails()), 5)}")  # --hypothesis-show-statistics
        event(f"members suppressed: {len({e.contact for e in events if isinstance(e, ContactSends.Suppressed)})}")
        held = any(isinstance(e, Task.SendDeferred) and e.rule == "paused" for e in events)
        event(f"sends held by a pause: {'some' if held else 'none'}")
        assert broken_rules(replies_in(published), events, timezone_name) == []
        assert broken_rails(events) == []
    finally:
        loopline.close()
