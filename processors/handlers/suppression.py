"""Suppression (seed 002 §22, §33.3): a STOP reply, an unsubscribe, a hard bounce or a complaint suppresses the
contact for the tenant and, in the same step, closes every open task of theirs without asking the model; the owner
is told once. `contact.resubscribe` lifts it. A tenant whose bounce rate passes `BOUNCE_RATE_PERCENT` is paused."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from loopline.domain import ids
from loopline.domain.auto_reply import recognise
from loopline.domain.bounces import TenantBounces, bounce_rate, too_many_bounces
from loopline.domain.contact_index import ContactIndex
from loopline.domain.errors import DomainError
from loopline.domain.open_loop import OpenLoop
from loopline.domain.opt_out import opt_out_phrase
from loopline.domain.safety_limits import BOUNCE_RATE_PERCENT
from loopline.domain.send_ledger import ContactSends, TenantSends, local_day
from loopline.domain.suppression import REASONS, suppressed_because
from loopline.domain.task import Task
from loopline.domain.task_types import task_type
from loopline.processors.application import UnitOfWork
from loopline.processors.handlers.commands_types import ContactResubscribe
from loopline.processors.handlers.loops_and_timers import close_loop, close_task_loops
from loopline.processors.handlers.pausing import pause_tenant_now
from loopline.processors.handlers.tenants import tenant_settings
from loopline.processors.messages import Message

OPTED_OUT = "opted_out"
"""The outcome a task closes with when its contact is suppressed, whether or not its type lists it."""
UNDELIVERABLE = "undeliverable"
"""The outcome when the contact's address bounced: nobody asked to stop, the mail cannot arrive."""


class ContactSuppressed(DomainError):
    """A task for a suppressed contact is refused at creation: it could never send them anything."""


def contact_ledger(uow: UnitOfWork, tenant: str, contact: str, now: datetime) -> ContactSends:
    """The contact's send ledger, which holds the suppression; opened (and added) for a contact never emailed."""
    ledger_id = ids.contact_sends_id(tenant, contact)
    return uow.get(ledger_id, ContactSends) or uow.add(ContactSends.open(id=ledger_id, tenant=tenant, contact=contact,
                                                                         now=now))


def suppressed_why(uow: UnitOfWork, tenant: str, contact: str) -> str | None:
    """Why `contact` gets nothing from the tenant ("bob@x asked to hear no more (…) on …"), or None."""
    ledger = uow.get(ids.contact_sends_id(tenant, contact), ContactSends)
    if ledger is None or ledger.suppression is None:
        return None
    return f"{contact} {suppressed_because(ledger.suppression)}"


def check_not_suppressed(uow: UnitOfWork, tenant: str, contact: str) -> None:
    """Refuses a new task for a suppressed contact (rather than creating one that closes at once)."""
    why = suppressed_why(uow, tenant, contact)
    if why is not None:
        raise ContactSuppressed(f"contact: {why} and is suppressed, so no task is created for them; if they opted "
                                "back in, lift it with contact.resubscribe first")


def check_owner_may_email(uow: UnitOfWork, task: Task) -> None:
    """The owner's message to a suppressed contact (`task.reply`, `task.approve` of a held draft) is refused."""
    why = suppressed_why(uow, task.tenant, task.contact) if task.contact else None
    if why is not None:
        raise ContactSuppressed(f"task_id: {why}, so nothing is sent to them from task {task.ref}; if they opted "
                                "back in, lift it with contact.resubscribe")


def not_sent(uow: UnitOfWork, task: Task, loop: OpenLoop, why: str, what: str, now: datetime) -> str:
    """A follow-up or reminder to a suppressed contact is not sent (nor drafted): the loop waiting for them closes
    with the reason, and the owner is told."""
    if loop.ref in task.open_loops:
        close_loop(uow, loop, task, resolved_by="suppressed", reason=f"nothing is sent: {why}", now=now)
    task.notify_user(kind="contact_suppressed", message=f"'{task.title}': no {what} was sent: {why}. The wait for "
                     f"{loop.awaited()} is closed, and nothing more is sent to them.", now=now)
    return f"no {what} sent ({why})"


def close_for_suppressed(uow: UnitOfWork, task: Task, now: datetime) -> str:
    """A touch of a task whose contact was suppressed meanwhile is not sent: the task closes as `opted_out`."""
    assert task.contact is not None
    ledger = uow.get(ids.contact_sends_id(task.tenant, task.contact), ContactSends)
    assert ledger is not None and ledger.suppression is not None, f"{task.contact} is not suppressed"
    why = f"{task.contact} {suppressed_because(ledger.suppression)}"
    _close(uow, task, ledger.suppression["reason"], why, now)
    return f"'{task.title}': closed, nothing sent ({why})"


def suppress_contact(uow: UnitOfWork, tenant: str, contact: str, *, reason: str, source: str, now: datetime,
                     words: str = "", quote: str | None = None, told_on: Task | None = None) -> str:
    """Suppresses the contact and closes each of their open tasks (`ContactIndex`) with `opted_out` (`undeliverable`
    for a bounce), no model asked; one notice tells the owner, on `told_on` (the task the contact answered) or the
    contact's latest task. A contact already suppressed changes nothing."""
    ledger = contact_ledger(uow, tenant, contact, now)
    if not ledger.suppress(reason=reason, source=source, words=words, now=now):
        return f"{contact} was suppressed already; nothing changed"
    assert ledger.suppression is not None
    why = f"{contact} {suppressed_because(ledger.suppression)}"
    tasks = _contact_tasks(uow, tenant, contact)
    closed = [task for task in tasks if not task.is_closed]
    for task in closed:
        _close(uow, task, reason, why, now)
    told = told_on or _latest(tasks)
    if told is not None:
        halted = f"closed {', '.join(repr(task.title) for task in closed)}" if closed else "no task of theirs was open"
        told.notify_user(kind="contact_suppressed",
                         message=f"{why}: all outreach to them is halted ({halted}) and nothing more is sent to them. "
                         "If they opt back in, lift it with contact.resubscribe.", now=now, quote=quote)
    return f"suppressed {contact} ({REASONS[reason]}); closed {len(closed)} task(s)"


def _contact_tasks(uow: UnitOfWork, tenant: str, contact: str) -> list[Task]:
    index = uow.get(ids.contact_index_id(tenant, contact), ContactIndex)
    refs = sorted(set(index.tasks.values())) if index is not None else []
    return [task for ref in refs if (task := uow.get(ids.task_id(tenant, ref), Task)) is not None]


def _latest(tasks: list[Task]) -> Task | None:
    return max(tasks, key=lambda task: (task.last_activity_at, task.ref), default=None)


def _close(uow: UnitOfWork, task: Task, reason: str, why: str, now: datetime) -> None:
    code = UNDELIVERABLE if reason == "hard_bounce" else OPTED_OUT
    outcome = task_type(task.task_type).outcome(code)
    close_task_loops(uow, task, resolved_by="suppressed", reason=f"task closed: {why}", now=now)
    task.set_outcome(code=code, kind=outcome.kind if outcome else "negative", provisional=False, reason=why, now=now)
    task.cancel(reason=f"{code}: {why}", now=now)


def resubscribe_contact(uow: UnitOfWork, msg: Message, cmd: ContactResubscribe) -> str:
    """The contact opted back in: Loopline may email them again, from tasks created after this (closed ones stay)."""
    contact_ledger(uow, msg.tenant, cmd.contact, msg.at).unsuppress(reason=cmd.reason, now=msg.at)
    return f"lifted the suppression of {cmd.contact}: new tasks may email them again"


def on_unsubscribed(uow: UnitOfWork, msg: Message) -> str:
    """The one-click unsubscribe (`List-Unsubscribe`) of an email Loopline sent."""
    return suppress_contact(uow, msg.tenant, msg.data["contact"], reason="unsubscribe_link", source="unsubscribe",
                            now=msg.at)


def on_complained(uow: UnitOfWork, msg: Message) -> str:
    """The contact marked an email as spam (a feedback-loop report)."""
    return suppress_contact(uow, msg.tenant, msg.data["contact"], reason="complaint", source="complaint", now=msg.at)


def on_bounced(uow: UnitOfWork, msg: Message) -> str:
    """A hard bounce, or the third soft one, suppresses the contact and counts toward the tenant's bounce rate."""
    contact, detail = msg.data["contact"], str(msg.data.get("detail") or "")
    if msg.data["bounce_type"] == "soft" and not contact_ledger(uow, msg.tenant, contact, msg.at).soft_bounce(
            detail=detail, now=msg.at):
        return f"a soft bounce from {contact} counted; it is not suppressed"
    said = suppress_contact(uow, msg.tenant, contact, reason="hard_bounce", source="bounce", words=detail, now=msg.at)
    return f"{said}{_pause_on_bounce_rate(uow, msg.tenant, contact, msg.at)}"


def _pause_on_bounce_rate(uow: UnitOfWork, tenant: str, contact: str, now: datetime) -> str:
    """Counts the bounce; a rate past the limit pauses the tenant (`tenant.resume` lifts it) and tells the owner."""
    bounces_id = ids.tenant_bounces_id(tenant)
    bounces = uow.get(bounces_id, TenantBounces) or uow.add(TenantBounces.open(id=bounces_id, tenant=tenant, now=now))
    today = local_day(now, tenant_settings(uow, tenant).timezone)
    bounces.record(contact=contact, day=today, now=now)
    bounced, sent = bounce_rate(bounces, uow.get(ids.tenant_sends_id(tenant), TenantSends), today)
    if not too_many_bounces(bounced, sent):
        return ""
    reason = (f"{bounced} of the {sent} emails of the last 7 days bounced, over {BOUNCE_RATE_PERCENT} %: "
              "sending is paused to protect the domain's reputation")
    if not pause_tenant_now(uow, tenant, reason=reason, by="bounce_rate", now=now):
        return ""
    told = _latest(_contact_tasks(uow, tenant, contact))
    if told is not None:
        told.notify_user(kind="tenant_paused", message=f"Tenant {tenant} is paused: {reason}. Check the addresses, "
                         "then resume with tenant.resume.", now=now)
    return f"; tenant {tenant} paused ({reason})"


SUPPRESSING_SIGNALS: dict[str, Callable[[UnitOfWork, Message], str]] = {
    "contact.unsubscribed": on_unsubscribed,
    "email.bounced": on_bounced,
    "email.complained": on_complained,
}
"""The signals that suppress a contact, each with its handler (a STOP reply is an `email.received`)."""


def opt_out_words(uow: UnitOfWork, msg: Message) -> str | None:
    """The words of a contact's email that ask to hear no more (`domain/opt_out.py`, a rule), or None; an
    auto-responder's words are nobody's, so an automatic reply never opts out."""
    data = msg.data
    zone = tenant_settings(uow, msg.tenant).timezone
    if recognise(subject=data.get("subject"), body=data.get("body"), auto_submitted=data.get("auto_submitted"),
                 written=local_day(msg.at, zone)) is not None:
        return None
    return opt_out_phrase(str(data.get("body") or "")) or opt_out_phrase(str(data.get("subject") or ""))
