"""Every message the bus takes (`processors/bus.py`), whatever source handed it over: a command or
signal (`Message`, as `Inbound`), a due timer (`TimerFired`) and a model's answer (`DecisionReturned`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any
from uuid import UUID

from loopline.processors.ports import Decision, DecisionRequest, Reply


@dataclass(frozen=True)
class Message:
    """The envelope, its validated `data` as JSON (what the log stores and signal matching reads),
    and for a command the typed object its handler takes (`processors/handlers/commands_types.py`)."""

    kind: str
    ref: str
    type: str
    tenant: str
    at: datetime
    data: dict[str, Any] = field(default_factory=dict)
    command: Any = None


@dataclass(frozen=True)
class Inbound:
    """A command or signal as a source hands it over, with where it came in (kept if it is parked)."""

    message_id: UUID
    message: Message
    source: str | None = None  # "<topic>:<partition>:<offset>" when its receipt is not stored yet (Kafka)
    position: str = ""  # its notification id, when its receipt is stored (the embedded log)


@dataclass(frozen=True)
class Retry:
    """An operator's retry of a parked message: the message applied once, with the mark that it was retried."""

    parked_id: UUID
    inbound: Inbound
    by: str
    now: datetime


@dataclass(frozen=True)
class Unreadable:
    """A Kafka record that never became a message (bad JSON, failed validation), kept with its reason."""

    source: str
    position: str
    raw: bytes
    reason: str
    key: bytes | None
    at: datetime


@dataclass(frozen=True)
class TimerFired:
    """A due timer of a bucket; `stepping` says whether the tick chose its task to take a step now."""

    bucket_id: UUID
    kind: str
    target_id: UUID
    due: datetime
    now: datetime
    stepping: bool = False


@dataclass(frozen=True)
class BucketSwept:
    """The end of a bucket's sweep: the bucket closes if its hour has passed and nothing was filed in it meanwhile."""

    bucket_id: UUID
    hour: datetime
    size: int
    now: datetime


@dataclass(frozen=True)
class WheelSwept:
    """The end of a tick: every bucket up to `until` was swept."""

    until: datetime
    now: datetime


@dataclass(frozen=True)
class Pending:
    """One request to answer, as read before the model is called."""

    task_id: UUID
    task_ref: str
    tenant: str
    request_ref: str
    attempt: int
    point: str
    purpose: str
    touch: int | None
    loop_ref: str | None
    requested_at: datetime
    reply_subject: str | None
    request: DecisionRequest


@dataclass(frozen=True)
class Held:
    """No model was asked: a pause (`domain/pause.py`) was in force when the agent read the request."""

    reason: str


Answer = Decision | Held | str
"""The model's decision, the pause that held it back, or why there is none."""


@dataclass(frozen=True)
class DecisionReturned:
    """The model's answer (or failure) to a pending request."""

    pending: Pending
    answer: Answer


@dataclass(frozen=True)
class BrainAnswered:
    """The model's answer (or why there is none) to a brain call: the `kind`'s request `request_ref` on the aggregate
    `aggregate_id` (processors/handlers/brain_calls.py)."""

    kind: str
    aggregate_id: UUID
    request_ref: str
    requested_at: datetime
    answer: Reply | str
