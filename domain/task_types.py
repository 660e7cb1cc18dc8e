"""The registry of task types. A new type is one entry in a pack (`domain/task_packs.py`) plus its
skill file under skills/; the contract it fills is `domain/task_contract.py`.

Two packs share the registry: the gym pack (an outreach agent that sends) and the
assistant pack (follow-through on what an outside agent does). Confidences and
thresholds are 0–1 (a 75 elsewhere is 0.75 here).
"""

from __future__ import annotations

import difflib

from loopline.domain.errors import DomainError
from loopline.domain.task_contract import CADENCES, OWNER_HANDLED, PRIORITY_ORDER, Cadence, TaskType
from loopline.domain.task_packs import AD_HOC, ASSISTANT_PACK, GYM_PACK

__all__ = ["AD_HOC", "CADENCES", "OWNER_HANDLED", "PRIORITY_ORDER", "TASK_TYPES", "Cadence", "TaskType",
           "UnknownTaskType", "check_task_type", "task_type"]
"""The registry's names, where callers import them from (the contract is in `domain/task_contract.py`)."""

TASK_TYPES: dict[str, TaskType] = {t.name: t for t in (*GYM_PACK, AD_HOC, *ASSISTANT_PACK)}


class UnknownTaskType(DomainError):
    """A task type the registry does not have."""


def check_task_type(name: str) -> TaskType:
    """The registry's type of that name; an unknown one is refused, naming the closest and every known type."""
    if name not in TASK_TYPES:
        hint = "".join(f"did you mean {close!r}? " for close in difflib.get_close_matches(name, TASK_TYPES, n=1))
        raise UnknownTaskType(f"unknown task type {name[:80]!r}; {hint}the task types are {', '.join(sorted(TASK_TYPES))}")
    return TASK_TYPES[name]


def task_type(name: str | None) -> TaskType:
    """The type of a name, `ad_hoc` for none; an unknown name raises `UnknownTaskType`."""
    return AD_HOC if name is None else check_task_type(name)
