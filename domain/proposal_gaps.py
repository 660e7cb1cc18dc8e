"""Gap analysis (seed 001 §2): what is missing, found by code from what Loopline already knows, each gap
with a severity and a suggested action that the proposer turns into a proposal."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Literal

from loopline.domain.proposal_rules import discovery_allowed
from loopline.domain.safety_limits import PROPOSALS_PER_DISCOVERY

GapKind = Literal["stalled_task", "repeated_expiry", "goal_without_step", "failing_routine"]
Severity = Literal["critical", "high", "medium", "low"]

GAPS_PER_ANALYSIS = 5
"""Gaps one analysis hands on, most severe first (seed 001 §2 `LIMIT 5`)."""

REPEATED_EXPIRIES = 2
"""Loops of one task expiring this many times or more count as a pattern worth a proposal."""

LONG_STALL = timedelta(days=7)
"""A task stalled this long is a high-impact gap; one that has only just stalled is low (the offline debate drops it:
it may yet move on its own)."""

_SEVERITY_ORDER: dict[str, int] = {"critical": 0, "high": 1, "medium": 2, "low": 3}


@dataclass(frozen=True)
class Gap:
    kind: GapKind
    subject_ref: str
    severity: Severity
    description: str
    suggested_action: str

    @property
    def key(self) -> str:
        """The same gap found twice names the same proposal, so a second analysis offers nothing new."""
        return f"{self.kind}:{self.subject_ref}"

    @property
    def impact(self) -> Literal["high", "medium", "low"]:
        return "high" if self.severity in ("critical", "high") else self.severity  # type: ignore[return-value]


@dataclass(frozen=True)
class TaskView:
    ref: str
    title: str
    stalled_since: datetime | None
    expired_loops: int


@dataclass(frozen=True)
class GoalView:
    ref: str
    text: str
    open_tasks: int


@dataclass(frozen=True)
class RoutineView:
    ref: str
    name: str
    consecutive_failures: int


def find_gaps(
    *, tasks: Iterable[TaskView] = (), goals: Iterable[GoalView] = (), routines: Iterable[RoutineView] = (),
    now: datetime,
) -> list[Gap]:
    """Stalled tasks, repeated expirations, goals without a next step and failing routines, most severe first;
    none found is an ordinary outcome (the cycle is skipped), not an error."""
    found: list[Gap] = []
    for task in tasks:
        if task.stalled_since is not None:
            long = now - task.stalled_since >= LONG_STALL
            found.append(Gap(
                "stalled_task", task.ref, "high" if long else "low",
                f"'{task.title}' has had no activity since {task.stalled_since:%Y-%m-%d}",
                f"nudge or close '{task.title}'",
            ))
        if task.expired_loops >= REPEATED_EXPIRIES:
            found.append(Gap(
                "repeated_expiry", task.ref, "high",
                f"'{task.title}' waited in vain {task.expired_loops} times",
                f"try another way to get '{task.title}' answered",
            ))
    for goal in goals:
        if goal.open_tasks == 0:
            found.append(Gap(
                "goal_without_step", goal.ref, "medium", f"the goal '{goal.text}' has no open task",
                f"propose a next step towards '{goal.text}'",
            ))
    for routine in routines:
        if routine.consecutive_failures > 0:
            found.append(Gap(
                "failing_routine", routine.ref, "critical" if routine.consecutive_failures >= 2 else "low",
                f"the routine '{routine.name}' failed {routine.consecutive_failures} time(s) in a row",
                f"fix or retire the routine '{routine.name}'",
            ))
    found.sort(key=lambda gap: (_SEVERITY_ORDER[gap.severity], gap.key))
    return found[:GAPS_PER_ANALYSIS]


def discovery_picks(gaps: list[Gap], *, last_seen_at: datetime | None, now: datetime) -> list[Gap]:
    """The gaps a discovery run may propose: none while the owner is away, else the three most severe (seed 003 §6)."""
    if not discovery_allowed(last_seen_at, now):
        return []
    return gaps[:PROPOSALS_PER_DISCOVERY]
