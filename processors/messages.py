"""The message every processor handles, whatever edge it came in through (file, Kafka, tests)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any


@dataclass(frozen=True)
class Message:
    kind: str
    ref: str
    type: str
    tenant: str
    at: datetime
    data: dict[str, Any] = field(default_factory=dict)
