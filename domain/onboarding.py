"""What a new tenant may send: the onboarding ramp (seed 002 §26) and the sending warm-up (§33.2).

The ramp's phase is the owner's to set (`tenant.configure` `ramp_phase`) and only the owner moves it on:
the ramp exists so the owner sees the agent's drafts before it writes alone, which no calendar can tell.
The warm-up counts weeks from the tenant's first email, because a sending domain's reputation is built by
what it sends, not by how long the tenant has existed.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from typing import Literal, get_args

RampPhase = Literal["shadow", "guided", "limited", "full"]
RAMP_PHASES: tuple[str, ...] = get_args(RampPhase)


@dataclass(frozen=True)
class Ramp:
    sends_a_day: int | None
    """The most the tenant may send in a local day in this phase; None: its own daily_send_limit."""
    tasks_a_day: int | None
    """The most tasks Loopline works it may create in a local day; None: its own daily_task_limit."""
    reviews_every_task: bool
    """Every task the agent would send for waits for the owner's review, whatever the execution mode."""


RAMP: dict[str, Ramp] = {
    "shadow": Ramp(sends_a_day=0, tasks_a_day=10, reviews_every_task=True),
    "guided": Ramp(sends_a_day=3, tasks_a_day=15, reviews_every_task=True),
    "limited": Ramp(sends_a_day=10, tasks_a_day=25, reviews_every_task=False),
    "full": Ramp(sends_a_day=None, tasks_a_day=None, reviews_every_task=False),
}
"""Seed 002 §26.2's table; a tenant never given a phase is `full` (it sent before the ramp existed)."""

WARM_UP_SENDS_A_DAY = (3, 5, 10)
"""Seed 002 §33.2: the most sent a day in weeks 1, 2 and 3 from the first email; from week 4 the daily limit."""


@dataclass(frozen=True)
class Cap:
    sends_a_day: int
    why: str
    """What sets it, as the deferral's reason says it."""


def new_tenant_cap(phase: str, warm_up: bool, first_sent: date, today: date) -> Cap | None:
    """The tighter of the ramp's and the warm-up's caps on today's sends; None when neither holds the tenant."""
    caps = []
    ramp = RAMP[phase].sends_a_day
    if ramp is not None:
        caps.append(Cap(ramp, f"the onboarding phase {phase} allows {ramp} a day"))
    week = (today - first_sent).days // 7
    if warm_up and week < len(WARM_UP_SENDS_A_DAY):
        sends = WARM_UP_SENDS_A_DAY[week]
        caps.append(Cap(sends, f"the warm-up allows {sends} a day in week {week + 1} from the first email on "
                               f"{first_sent.isoformat()}"))
    return min(caps, key=lambda cap: cap.sends_a_day, default=None)
