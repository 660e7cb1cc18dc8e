"""Where a task came from (seed 002 §4, issue 21 item 5): what triggered it, the event that did, and who created it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from loopline.domain.task_ledger import Origin, OriginKind

TriggerType = Literal["owner", "signal", "synthesis", "proposal", "routine", "agent"]

LIMITED_AS: dict[str, OriginKind] = {"signal": "signal", "synthesis": "run", "proposal": "run", "routine": "run"}
"""The creation limit each trigger counts against: one signal's tasks, or one run's (a synthesis, a proposal's
approval batch, a routine's run) (seed 002 §7.9)."""


@dataclass(frozen=True)
class Provenance:
    trigger_type: TriggerType
    trigger_event_id: str | None
    created_by: str

    @classmethod
    def of_command(cls, origin: Origin | None, command_ref: str) -> Provenance:
        """A `task.create` from the outside agent: the signal it names triggered it, otherwise the command itself."""
        if origin is not None and origin.kind == "signal":
            return cls("signal", origin.id, "agent")
        return cls("agent", origin.key if origin is not None else command_ref, "agent")

    @property
    def origin(self) -> Origin | None:
        """What the flood and amplification limits count a creation Loopline makes by; None for the owner's."""
        kind = LIMITED_AS.get(self.trigger_type)
        return Origin(kind, self.trigger_event_id) if kind is not None and self.trigger_event_id else None
