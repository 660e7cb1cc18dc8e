"""Pure rules of the proposal pipeline (seed 001 §4–§8, seed 003 §6): debate outcomes, rejection
learning, batching, autonomy tiers and the discovery guard."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Literal

from loopline.domain.safety_limits import MAX_DEBATE_ROUNDS, PROPOSALS_PER_BATCH

Verdict = Literal["strong_pass", "weak_pass", "fail", "undecided"]
RejectionType = Literal["never", "not_now", "bad_approach"]
Impact = Literal["high", "medium", "low"]

VERDICTS: tuple[Verdict, ...] = ("strong_pass", "weak_pass", "fail", "undecided")
REJECTION_TYPES: tuple[RejectionType, ...] = ("never", "not_now", "bad_approach")
DEFAULT_REJECTION: RejectionType = "not_now"

DEBATE_ROLES = ("proposer", "critic", "arbiter")
"""The three model calls of one debate round, in order (seed 001 §4)."""

DEBATE_KIND = "debate"
"""The brain call kind of a debate role's model call."""

PRESENCE_WINDOW = timedelta(hours=2)
"""Discovery runs only when the owner was seen this recently: nobody else can approve (seed 003 §6)."""

COOLDOWNS: dict[RejectionType, timedelta | None] = {
    "never": None,
    "not_now": timedelta(hours=24),
    "bad_approach": timedelta(days=7),
}
"""How long a rejection keeps similar proposals away; `None` is forever (seed 001 §7, seed 003 §6)."""

SIMILARITY_THRESHOLD = 0.6
"""Word overlap (Jaccard) at or above which two proposals count as the same idea."""

_IMPACT_ORDER: dict[str, int] = {"high": 0, "medium": 1, "low": 2}
_WORD = re.compile(r"[a-z0-9]+")
_STOPWORDS = frozenset({"a", "an", "the", "to", "of", "for", "and", "or", "on", "in", "with", "my", "our"})


@dataclass(frozen=True)
class DebateStep:
    """What one round of debate leads to: `ready`, `failed`, another `round`, or `owner` (shown, flagged)."""

    outcome: Literal["ready", "failed", "round", "owner"]
    flag: str | None = None


def next_debate_step(verdict: Verdict, round_number: int) -> DebateStep:
    """The arbiter's verdict of round `round_number` (1-based) decides what follows (seed 001 §4 outcomes)."""
    if verdict == "strong_pass":
        return DebateStep("ready")
    if verdict == "fail":
        return DebateStep("failed")
    if verdict == "undecided":
        return DebateStep("owner", flag="uncertain")
    if round_number >= MAX_DEBATE_ROUNDS:
        return DebateStep("owner", flag="debate_unsettled")
    return DebateStep("round")


def words(text: str) -> frozenset[str]:
    """The content words of a proposal's title and summary, the unit of similarity."""
    return frozenset(word for word in _WORD.findall(text.lower()) if word not in _STOPWORDS)


def similarity(left: str, right: str) -> float:
    """Jaccard overlap of two texts' content words: 1.0 the same idea, 0.0 nothing shared."""
    a, b = words(left), words(right)
    if not a or not b:
        return 0.0
    return len(a & b) / len(a | b)


@dataclass(frozen=True)
class PastRejection:
    proposal_ref: str
    text: str
    rejection_type: RejectionType
    rejected_at: datetime


def blocking_rejection(text: str, rejections: Iterable[PastRejection], now: datetime) -> PastRejection | None:
    """The still-cooling rejection of a similar proposal that keeps `text` from being proposed, if any."""
    for rejection in rejections:
        cooldown = COOLDOWNS[rejection.rejection_type]
        cooling = cooldown is None or now < rejection.rejected_at + cooldown
        if cooling and similarity(text, rejection.text) >= SIMILARITY_THRESHOLD:
            return rejection
    return None


@dataclass(frozen=True)
class Candidate:
    proposal_ref: str
    theme: str
    impact: Impact


def batches(ready: Sequence[Candidate]) -> list[list[Candidate]]:
    """Ready proposals grouped by theme (the gap type), highest impact first, at most 5 per notification."""
    themes: dict[str, list[Candidate]] = {}
    for candidate in ready:
        themes.setdefault(candidate.theme, []).append(candidate)
    grouped = []
    for theme in sorted(themes, key=lambda t: min(_IMPACT_ORDER[c.impact] for c in themes[t])):
        ordered = sorted(themes[theme], key=lambda c: _IMPACT_ORDER[c.impact])
        grouped.extend(ordered[i:i + PROPOSALS_PER_BATCH] for i in range(0, len(ordered), PROPOSALS_PER_BATCH))
    return grouped


AUTO_CREATE_KINDS = frozenset({"knowledge", "evidence", "question", "assumption"})


def requires_approval(kind: str, priority: str | None = None) -> bool:
    """Autonomy tiers (seed 001 §8): notes are made freely, a low-priority task is approved by itself,
    everything else (tasks above low, decisions, proposals, artifacts, goals) waits for the owner."""
    if kind in AUTO_CREATE_KINDS:
        return False
    return not (kind == "task" and priority == "low")


def discovery_allowed(last_seen_at: datetime | None, now: datetime) -> bool:
    """Discovery proposes only while the owner is around to approve (seen within the presence window)."""
    return last_seen_at is not None and now - last_seen_at <= PRESENCE_WINDOW
