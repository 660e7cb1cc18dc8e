"""The message every processor handles, whatever edge it came in through (file, Kafka, tests)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any


@dataclass(frozen=True)
class Message:
    """The envelope, its validated `data` as JSON (what the log stores and signal matching reads),
    and for a command the typed object its handler takes (`processors/commands_types.py`)."""

    kind: str
    ref: str
    type: str
    tenant: str
    at: datetime
    data: dict[str, Any] = field(default_factory=dict)
    command: Any = None
