"""The send rails of issue 19 (done-when 1), read from a run's events in the order stored, for the property test of
`tests/no_reply_lost.py` on both deployments:

* no contact gets more emails in 7 days than the weekly limit in force when each was sent;
* no tenant more emails on one of its local days than the daily limit in force;
* nothing is sent to a contact while they are suppressed (a STOP, an unsubscribe, a bounce, a complaint);
* nothing is sent while the tenant (or the whole system) is paused;
* every send a rail held back is sent later or ends with its task (none is still held once all has settled).

The limits in force are the tenant's `Tenant.Configured` settings as stored before each send; a send is judged
against the sends stored before it, as the ledgers' checks judge it in the send's own unit of work.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from loopline.domain.send_ledger import WEEK, ContactSends, local_day
from loopline.domain.status import TaskStatus
from loopline.domain.task import Task
from loopline.domain.tenant import Tenant, TenantSettings, merge_settings
from loopline.domain.timeutil import format_time

PAUSES = {"Tenant.Paused": True, "Tenant.Resumed": False, "SystemSwitch.Paused": True, "SystemSwitch.Resumed": False}
"""The events that pause and resume sending, a tenant's or the whole system's (`domain/pause.py`), by name."""
AGENT_WORKS = (TaskStatus.READY, TaskStatus.EXECUTING, TaskStatus.WAITING)


def broken_rails(events: list[Any]) -> list[str]:
    """Every rail of the module docstring that the run's `events` (all of them, in the order stored) break."""
    settings: dict[str, dict[str, Any]] = {}
    suppressed: set[tuple[str, str]] = set()
    paused: dict[Any, bool] = {}
    sent: list[tuple[Any, str]] = []
    broken = []
    for event in events:
        if isinstance(event, Tenant.Configured):
            settings[event.tenant] = merge_settings(settings.get(event.tenant, {}), event.settings)
        elif isinstance(event, ContactSends.Suppressed):
            suppressed.add((event.tenant, event.contact))
        elif isinstance(event, ContactSends.Unsuppressed):
            suppressed.discard((event.tenant, event.contact))
        elif type(event).__qualname__ in PAUSES:
            paused[getattr(event, "tenant", None)] = PAUSES[type(event).__qualname__]
        elif isinstance(event, Task.ActionRecorded) and event.sent_by_loopline:
            contact, limits = str(event.details["to"]), TenantSettings.from_dict(settings.get(event.tenant, {}))
            sent.append((event, contact))
            what = f"{event.details.get('subject', event.action)!r} to {contact} at {format_time(event.timestamp)}"
            if (event.tenant, contact) in suppressed:
                broken.append(f"{what} went to a suppressed contact")
            if paused.get(event.tenant) or paused.get(None):  # the tenant's own pause, or the system's
                broken.append(f"{what} went out while sending was paused")
            week = sum(1 for e, to in sent if to == contact and e.tenant == event.tenant
                       and event.timestamp - WEEK < e.timestamp <= event.timestamp)
            if week > limits.member_weekly_limit:
                broken.append(f"{what} was email {week} to them in 7 days (limit {limits.member_weekly_limit})")
            day = local_day(event.timestamp, limits.timezone)
            today = Counter(local_day(e.timestamp, limits.timezone) for e, _ in sent if e.tenant == event.tenant)[day]
            if today > limits.daily_send_limit:
                broken.append(f"{what} was email {today} of the tenant on {day} (limit {limits.daily_send_limit})")
    return broken + _still_held(events)


def _still_held(events: list[Any]) -> list[str]:
    """Tasks the agent still works at the end that hold a send back: after settling, none may. A held send ends
    sent, or with its task (closed, handed to the owner, dormant when its budget ran out), each with its reason."""
    tasks: dict[Any, Any] = {}
    for event in events:
        if isinstance(event, Task.Created) or event.originator_id in tasks:
            tasks[event.originator_id] = event.mutate(tasks.get(event.originator_id))
    return [f"{task.ref} still holds a send back ({task.deferred['rule']}) after everything settled"
            for task in tasks.values() if task.deferred is not None and task.status in AGENT_WORKS]
