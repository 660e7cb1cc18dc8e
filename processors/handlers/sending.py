"""The one way Loopline emails a contact: the send checks, then the send and its ledger entries.

The recipient is keyed as its normalised mailbox (`domain/mailbox.py`), so every spelling of one address meets one
ledger, also one that reached a task before the input edge normalised addresses (a hand-registered watch, an
older event); an address that names no mailbox is never sent to nor counted. Everything happens in the caller's unit of work, so the checks read the ledgers as the send's
own transaction will leave them, and the send commits with the entries that count it: a limit
can never be read from a lagging view (a view trails the log, so two sends could both pass it). Two units of work sending to the same
contact at once both change its ledger; the second to commit meets a version conflict and is
redone, when the checks see the first send.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from loopline.domain import ids
from loopline.domain.mailbox import LINE_BREAKS, NotAMailbox, mailbox
from loopline.domain.send_checks import Deferral, SendAttempt, first_deferral
from loopline.domain.pause import held_timer
from loopline.domain.send_ledger import ContactSends, TenantSends, local_day
from loopline.domain.task import Task
from loopline.domain.tenant import TenantSettings
from loopline.domain.timers import TimerKind
from loopline.domain.wording import when
from loopline.processors.application import UnitOfWork
from loopline.processors.handlers.loops_and_timers import set_timer
from loopline.processors.handlers.pausing import current_pause, hold
from loopline.processors.handlers.subtasks import family_budget

DEFERRED_NEVER = timedelta(days=1)
"""A limit that never frees up (a deferral without `until`) is looked at again the next day."""


@dataclass(frozen=True)
class Sent:
    to: str


@dataclass(frozen=True)
class Deferred:
    """Nothing was sent or recorded; the caller keeps the draft and steps the task again at `deferral.until`."""

    deferral: Deferral


def send_to_contact(
    uow: UnitOfWork, task: Task, *, details: dict[str, Any], now: datetime, settings: TenantSettings,
    summary: str | None = None, answers_contact: bool = False, yields_to: tuple[str, ...] = (),
    performed_by: str = "loopline", action: str = "send_email", recipient: str | None = None, awaits: bool = True,
) -> Sent | Deferred:
    """Emails `details["to"]` for the task (a `send_email` or `send_reminder` action by Loopline, or by the owner, which
    delivery sends) unless a check in `SEND_CHECKS` defers it; the contact's and the tenant's ledgers count the
    send in the same save. `answers_contact` and `yields_to` are what the one-message-a-day check reads. Another
    action that reaches the contact (a text message) names the person the ledgers count in `recipient`."""
    contact = _recipient(recipient or details["to"])
    if isinstance(contact, Deferral):
        return Deferred(contact)
    details = {**details} if recipient else {**details, "to": contact}  # a copy: the caller's stays as given
    if "subject" in details:
        details["subject"] = one_line(str(details["subject"]))
    contact_sends, tenant_sends = ledgers(uow, task, contact, now)
    deferral = first_deferral(_attempt(uow, task, contact, contact_sends, tenant_sends, settings, now, answers_contact,
                                       yields_to))
    if deferral is not None:
        return Deferred(deferral)
    summary = summary or f"Emailed {contact}: {details.get('subject', '')}"
    if settings.dry_run:  # recorded and counted like any send, so the trail and the limits are what they would be
        details, summary = {**details, "dry_run": True}, f"[dry run, not delivered] {summary}"
    task.record_action(action=action, details=details, summary=summary, performed_by=performed_by, now=now,
                       awaits=awaits)
    uow.add(contact_sends).record(task_ref=task.ref, now=now)
    uow.add(tenant_sends).record(task_ref=task.ref, day=local_day(now, settings.timezone), now=now)
    return Sent(contact)


def keep_for_later(uow: UnitOfWork, task: Task, deferral: Deferral, draft: dict[str, Any], now: datetime) -> str:
    """Keeps what a send check held back (the draft, or only the touch when none was asked for yet) and steps the
    task again when it may go: at the limit's `until` (one that never frees up is looked at again the next day), or,
    held by a pause, at the resume. Says when."""
    if deferral.rule == "paused":
        task.defer_send(rule=deferral.rule, reason=deferral.reason, until=now, draft=draft, now=now)
        hold(uow, task.tenant, held_timer(TimerKind.TASK_STEP, task.id, task.ref), now)
        return "the pause ends"
    until = deferral.until or now + DEFERRED_NEVER
    task.defer_send(rule=deferral.rule, reason=deferral.reason, until=until, draft=draft, now=now)
    set_timer(uow, kind=TimerKind.TASK_STEP, target_id=task.id, due=until, now=now)
    return when(until)


def send_deferral(uow: UnitOfWork, task: Task, *, contact: str, now: datetime, settings: TenantSettings,
                  yields_to: tuple[str, ...] = ()) -> Deferral | None:
    """What `SEND_CHECKS` would hold an email of the task's to `contact` back by now, sending nothing: a touch is
    checked before the model is asked to write it, so no draft is paid for that a limit would hold."""
    recipient = _recipient(contact)
    if isinstance(recipient, Deferral):
        return recipient
    contact_sends, tenant_sends = ledgers(uow, task, recipient, now)
    return first_deferral(_attempt(uow, task, recipient, contact_sends, tenant_sends, settings, now, False, yields_to))


def one_line(subject: str) -> str:
    """A subject as one header line: a line break (a contact's own subject, `Re:`-d, can hold one) would add headers
    to the email or get it parked at delivery after it was counted as sent."""
    return " ".join(subject.split()) if any(c in LINE_BREAKS for c in subject) else subject


def _recipient(to: str) -> str | Deferral:
    """The mailbox `to` names, which every ledger keys on; or the deferral that holds for good a send to none."""
    try:
        return mailbox(to)
    except NotAMailbox as error:
        return Deferral("undeliverable", f"the recipient (to) names no mailbox: {error}", None)


def ledgers(uow: UnitOfWork, task: Task, contact: str, now: datetime) -> tuple[ContactSends, TenantSends]:
    """The contact's and the tenant's send ledgers as this unit of work sees them (opened, unsaved, when new)."""
    contact_id, tenant_id = ids.contact_sends_id(task.tenant, contact), ids.tenant_sends_id(task.tenant)
    contact_sends = uow.get(contact_id, ContactSends) or ContactSends.open(
        id=contact_id, tenant=task.tenant, contact=contact, now=now
    )
    tenant_sends = uow.get(tenant_id, TenantSends) or TenantSends.open(id=tenant_id, tenant=task.tenant, now=now)
    return contact_sends, tenant_sends


def _attempt(uow: UnitOfWork, task: Task, contact: str, contact_sends: ContactSends, tenant_sends: TenantSends,
             settings: TenantSettings, now: datetime, answers_contact: bool, yields_to: tuple[str, ...]) -> SendAttempt:
    plan = task.outreach
    return SendAttempt(
        contact=contact, messages_used=task.messages_used, messages_budget=plan["budget_messages"] if plan else None,
        contact_sends=contact_sends, tenant_sends=tenant_sends, limits=settings, now=now,
        answers_contact=answers_contact, yields_to=yields_to, pause=current_pause(uow, task.tenant, task.ref),
        task=str(task.id), family=family_budget(uow, task),
    )
