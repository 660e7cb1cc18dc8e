"""Deterministic aggregate ids: the same external reference always names the same aggregate.

Every id and key made of several strings goes through `composite`, which gives distinct tuples
distinct strings. Version 1 joined the parts with SEP, which input may contain: tenant `carol\x1fx`
with task `y` and tenant `carol` with task `x\x1fy` named the same task. `composite` keeps that
join wherever it was unambiguous, so stored ids and keys keep their meaning: when no part holds
SEP and the join does not start with SEP (only an empty first part makes it), splitting on SEP
gives the parts back. Every other tuple is written as SEP, then `len:part` for each part: reading
a length, then that many characters, gives the parts back. Joins never start with SEP, so the two
forms never meet.
"""

from __future__ import annotations

from datetime import datetime
from uuid import UUID, uuid5

NAMESPACE = UUID("6f1c7f7e-3b1a-4c55-9a57-2d1f3c0b7a11")
SEP = "\x1f"


def composite(first: str, *rest: str) -> str:
    """One string per tuple of strings, distinct for distinct tuples, equal to version 1's join wherever that was."""
    parts = (first, *rest)
    joined = SEP.join(parts)
    if SEP not in "".join(parts) and not joined.startswith(SEP):
        return joined
    return SEP + "".join(f"{len(part)}:{part}" for part in parts)


def _id(*parts: str) -> UUID:
    return uuid5(NAMESPACE, composite(*parts))


def task_id(tenant: str, task_ref: str) -> UUID:
    return _id("task", tenant, task_ref)


def loop_id(tenant: str, loop_ref: str) -> UUID:
    return _id("loop", tenant, loop_ref)


def run_id(tenant: str) -> UUID:
    return _id("proactive-run", tenant)


def notification_hold_id(tenant: str) -> UUID:
    return _id("notification-hold", tenant)


def question_id(tenant: str, question_ref: str) -> UUID:
    return _id("question", tenant, question_ref)


def message_id(tenant: str, message_ref: str) -> UUID:
    return _id("message", tenant, message_ref)


def rejected_input_id(fingerprint: str) -> UUID:
    return _id("rejected-input", fingerprint)


def contact_sends_id(tenant: str, contact: str) -> UUID:
    """One send ledger per tenant and contact address, whatever its case (one inbox)."""
    return _id("contact-sends", tenant, contact.lower())


def tenant_sends_id(tenant: str) -> UUID:
    return _id("tenant-sends", tenant)


def tenant_bounces_id(tenant: str) -> UUID:
    return _id("tenant-bounces", tenant)


def tenant_model_calls_id(tenant: str) -> UUID:
    return _id("tenant-model-calls", tenant)


def tenant_tasks_id(tenant: str) -> UUID:
    return _id("tenant-tasks", tenant)


def open_tasks_id(tenant: str) -> UUID:
    return _id("open-tasks", tenant)


def watch_index_id(tenant: str, channel: str, key: tuple[str, ...]) -> UUID:
    """The key's parts go in as parts, not as their composite, so version 1's ids are kept."""
    return _id("watch-index", tenant, channel, *key)


def timer_wheel_id() -> UUID:
    return _id("timer-wheel")


def timer_bucket_id(hour: datetime, shard: int) -> UUID:
    return _id("timer-bucket", hour.isoformat(), str(shard))


def parked_message_id(message_id: UUID) -> UUID:
    return _id("parked-message", str(message_id))


def tenant_id(tenant: str) -> UUID:
    return _id("tenant", tenant)


def contact_index_id(tenant: str, contact: str) -> UUID:
    """Email addresses compare without case: Bob@x and bob@x are one contact."""
    return _id("contact-index", tenant, contact.lower())


def action_log_id(tenant: str, task_ref: str) -> UUID:
    return _id("action-log", tenant, task_ref)


def contact_outcomes_id(tenant: str, contact: str) -> UUID:
    """The outcome signals observed for a contact, one contact as in `contact_index_id`."""
    return _id("contact-outcomes", tenant, contact.lower())


def system_switch_id() -> UUID:
    return _id("system-switch")


def task_control_id(tenant: str, task_ref: str) -> UUID:
    return _id("task-control", tenant, task_ref)


def upstream_health_id(tenant: str, upstream: str) -> UUID:
    return _id("upstream-health", tenant, upstream)


def recurrence_id(tenant: str, template_ref: str) -> UUID:
    return _id("recurrence", tenant, template_ref)


def proposal_id(tenant: str, proposal_ref: str) -> UUID:
    return _id("proposal", tenant, proposal_ref)


def proposal_book_id(tenant: str) -> UUID:
    return _id("proposal-book", tenant)


def routine_id(tenant: str, routine_ref: str) -> UUID:
    return _id("routine", tenant, routine_ref)


def routine_index_id(tenant: str) -> UUID:
    return _id("routine-index", tenant)
