"""Inbound messages as recorded facts: the embedded log entry, the idempotency receipt, and rejects."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from eventsourcing.domain import Aggregate

from loopline.domain.base import LooplineAggregate, TenantEvent


class MessageEvent(TenantEvent):
    kind: str
    ref: str
    task_ref: str | None


class InboundMessage(LooplineAggregate):
    """One command or signal, keyed by (tenant, message id) so a repeated id is one message."""

    OWNER = {"tenant": "tenant", "kind": "kind", "ref": "ref", "task_ref": "task_ref"}

    class Received(Aggregate.Created):
        kind: str
        ref: str
        type: str
        tenant: str
        data: dict[str, Any]
        source: str

    class Rejected(MessageEvent):
        reason: str

        def apply(self, message: InboundMessage) -> None:
            message.rejection = self.reason

    def __init__(self, kind: str, ref: str, type: str, tenant: str, data: dict[str, Any], source: str) -> None:  # noqa: A002
        self.kind = kind
        self.ref = ref
        self.type = type
        self.tenant = tenant
        self.data = data
        self.source = source
        self.rejection: str | None = None

    @property
    def task_ref(self) -> str | None:
        """The task a command names, if any (signals name none)."""
        task_ref = self.data.get("task_id")
        return str(task_ref) if task_ref is not None else None

    @classmethod
    def receive(cls, *, id: Any, at: datetime, **fields: Any) -> InboundMessage:  # noqa: A002
        return cls._create(cls.Received, id=id, timestamp=at, **fields)

    def reject(self, *, reason: str) -> None:
        self.trigger_event(self.Rejected, timestamp=self.created_on, reason=reason)


class RejectedInput(LooplineAggregate):
    """Input that never became a message (bad JSON, failed validation), kept with its reason.

    `raw` is the input as it came (a refused `tenant.configure` with its secrets masked), as text, or base64
    (`encoding`) when its bytes were not UTF-8;
    `key` is the Kafka record's key, so a dead letter goes out keyed like the original.
    """

    class Recorded(Aggregate.Created):
        source: str
        position: str
        raw: str
        encoding: str
        key: str | None
        reason: str

    def __init__(self, source: str, position: str, raw: str, encoding: str, key: str | None, reason: str) -> None:
        self.source = source
        self.position = position
        self.raw = raw
        self.encoding = encoding
        self.key = key
        self.reason = reason

    @classmethod
    def record(cls, *, id: Any, now: datetime, **fields: Any) -> RejectedInput:  # noqa: A002
        return cls._create(cls.Recorded, id=id, timestamp=now, **fields)
