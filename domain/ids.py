"""Deterministic aggregate ids: the same external reference always names the same aggregate."""

from __future__ import annotations

from datetime import datetime
from uuid import UUID, uuid5

NAMESPACE = UUID("6f1c7f7e-3b1a-4c55-9a57-2d1f3c0b7a11")


def _id(*parts: str) -> UUID:
    return uuid5(NAMESPACE, "\x1f".join(parts))


def task_id(tenant: str, task_ref: str) -> UUID:
    return _id("task", tenant, task_ref)


def loop_id(tenant: str, loop_ref: str) -> UUID:
    return _id("loop", tenant, loop_ref)


def run_id(tenant: str) -> UUID:
    return _id("proactive-run", tenant)


def message_id(tenant: str, message_ref: str) -> UUID:
    return _id("message", tenant, message_ref)


def rejected_input_id(fingerprint: str) -> UUID:
    return _id("rejected-input", fingerprint)


def watch_index_id(tenant: str, channel: str, key: str) -> UUID:
    return _id("watch-index", tenant, channel, key)


def timer_wheel_id() -> UUID:
    return _id("timer-wheel")


def timer_bucket_id(hour: datetime, shard: int) -> UUID:
    return _id("timer-bucket", hour.isoformat(), str(shard))


def parked_message_id(message_id: UUID) -> UUID:
    return _id("parked-message", str(message_id))
