"""A contact email that delivery could not send and parked for good (a message the channel cannot take,
such as a `to` with a line break stored before the input edge refused one) is given back: the task and
both send ledgers stop counting it, and the owner is told. Retrying it would fail the same way, so it is
not counted again if someone retries it by hand."""

from __future__ import annotations

from datetime import datetime
from uuid import UUID

from eventsourcing.persistence import IntegrityError

from loopline.domain.send_ledger import local_day
from loopline.domain.task import Task
from loopline.processors.application import Loopline, UnitOfWork
from loopline.processors.handlers.sending import ledgers
from loopline.processors.handlers.tenants import tenant_settings

CONFLICTS = 3
"""Tries before a version conflict is left to the delivery pass (which takes the send up again)."""


def give_back_undelivered(app: Loopline, *, key: str, reason: str, now: datetime) -> None:
    """Gives back the send of the task event the delivery `key` names, once however often delivery meets it; a
    worker changing the task or a ledger meanwhile has it read and done again."""
    for _ in range(CONFLICTS - 1):
        try:
            return _give_back(app, key=key, reason=reason, now=now)
        except IntegrityError:
            continue
    _give_back(app, key=key, reason=reason, now=now)


def _give_back(app: Loopline, *, key: str, reason: str, now: datetime) -> None:
    originator, _, version = key.partition(":")
    task_id, send_version = UUID(originator), int(version)
    if any(isinstance(event, Task.SendReturned) and event.send_version == send_version
           for event in app.events.get(task_id, gt=send_version)):
        return
    [sent] = app.events.get(task_id, gt=send_version - 1, lte=send_version)
    uow = UnitOfWork(app)
    task = uow.get(task_id, Task)
    assert task is not None and isinstance(sent, Task.ActionRecorded)
    contact = sent.details["to"]
    contact_sends, tenant_sends = ledgers(uow, task, contact, now)
    task.return_send(send_version=send_version, to=contact, reason=reason, touch="touch" in sent.details, now=now)
    task.notify_user(kind="send_undeliverable", now=now, message=(
        f"My email to {contact} could not be sent ({reason}). It never left and no longer counts against any "
        "limit; reach them another way if it matters."))
    uow.add(contact_sends).give_back(task_ref=task.ref, sent_at=sent.timestamp, now=now)
    day = local_day(sent.timestamp, tenant_settings(uow, task.tenant).timezone)
    uow.add(tenant_sends).give_back(task_ref=task.ref, day=day, now=now)
    uow.commit()
