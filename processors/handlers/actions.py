"""The one action executor (seed 002 §15.3, §32): every action a task requests, email among them, goes through
`take_action`.

A request is checked against its kind's safety profile (`domain/actions.py`): one that needs the owner is held
(`ActionLog.Held`) and the task goes to review; one that reaches the contact passes the send checks and counts in
the send ledgers and the task's message budget like any email (`handlers/sending.py`), or waits for the limit to free
up and is taken then (the `task_actions` timer). A taken action is a `Task.ActionRecorded` by Loopline, which the
delivery outbox sends through the channel that takes its kind, with its idempotency key and the delivery retry
policy. A staff to-do is kept by Loopline and reminded to the owner until it is marked done; one ignored past its
last reminder escalates its task (seed 002 §31.3).
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from loopline.domain import ids
from loopline.domain.action_log import ON_HOLD, PAUSED, ActionLog
from loopline.domain.actions import ACTIONS, ActionProfile, InvalidAction, action_profile, check_params, due_time
from loopline.domain.actions import needs_approval
from loopline.domain.errors import DomainError
from loopline.domain.outreach import Escalate
from loopline.domain.pause import held_timer
from loopline.domain.reply_routing import unanswered_replies
from loopline.domain.safety_limits import TODO_REMINDERS
from loopline.domain.status import TRANSITIONS, TaskStatus
from loopline.domain.task import Task
from loopline.domain.task_actions import APPROVAL
from loopline.domain.task_escalation import pipeline_paused
from loopline.domain.tenant import TenantSettings
from loopline.domain.timers import TimerKind
from loopline.domain.wording import when
from loopline.processors.application import UnitOfWork
from loopline.processors.bus import Unchanged
from loopline.processors.handlers.commands_actions import ActionDecision, ActionDone, ActionRequest
from loopline.processors.handlers.escalation import escalate
from loopline.processors.handlers.loops_and_timers import hand_back_actions, load_task, set_timer, task_history
from loopline.processors.handlers.outreach import on_reply
from loopline.processors.handlers.pausing import hold
from loopline.processors.handlers.sending import DEFERRED_NEVER, Deferred, send_to_contact
from loopline.processors.handlers.subtasks import subtask_hold
from loopline.processors.handlers.tenants import tenant_settings
from loopline.processors.messages import Message, TimerFired
from loopline.processors.ports import Drafter

INVITE_MINUTES = 60
"""How long a calendar invitation's event lasts when the request does not say."""

TODO_IGNORED = "todo_ignored"
"""The escalation cause of a task whose staff to-do was ignored past its last reminder."""

_SOON = timedelta(minutes=1)
"""A retry the limit deferred again to the same moment is looked at no sooner than this."""


class NoActionsYet(DomainError):
    """The owner named an action of a task that has requested none."""


def request_action(uow: UnitOfWork, msg: Message, cmd: ActionRequest) -> str:
    task = load_task(uow, msg.tenant, cmd.task_id)
    return ask_for_action(uow, task, action=cmd.action, params=cmd.params, key=cmd.key or msg.ref,
                          requested_by=cmd.requested_by, now=msg.at)


def ask_for_action(uow: UnitOfWork, task: Task, *, action: str, params: dict[str, Any], key: str, requested_by: str,
                   now: datetime) -> str:
    """The one way a task asks for an action (a command, or a step of Loopline's own): checked against its kind,
    taken once per `key`, held for the owner when its safety profile and the execution mode say so (unless the owner
    asked for it)."""
    task.check_open()
    profile = action_profile(action)
    params = check_params(profile, params)
    settings = tenant_settings(uow, task.tenant)
    _check_reachable(profile, task, params, settings)
    log = uow.get(ids.action_log_id(task.tenant, task.ref), ActionLog) or uow.add(
        ActionLog.open(id=ids.action_log_id(task.tenant, task.ref), tenant=task.tenant, task_ref=task.ref, now=now))
    if key in log.actions:
        return Unchanged(f"action {key} of task {task.ref} was requested before ({log.actions[key]['state']}); "
                         "this request changed nothing")
    if requested_by != "owner" and needs_approval(profile, settings.execution_mode):  # the owner's ask is approval
        return _hold(task, log, key, profile, params, requested_by=requested_by, now=now)
    return take_action(uow, task, log, key, profile, params, requested_by=requested_by, settings=settings, now=now,
                       owner_decided=requested_by == "owner")


def _check_reachable(profile: ActionProfile, task: Task, params: dict[str, Any], settings: TenantSettings) -> None:
    """Refuses what could never be carried out: a message to a contact the task does not have, a text message for a
    tenant with no SMS gateway."""
    if profile.reaches_contact and not task.contact:
        raise InvalidAction(f"task_id: task {task.ref} has no contact, and {profile.name} reaches the task's contact "
                            "(send checks count per contact); request it on the contact's task")
    if profile.channel == "sms" and not settings.sms_url:
        raise InvalidAction(f"action: tenant {task.tenant!r} has no sms_url to send text messages through; set it "
                            "with tenant.configure")


def _hold(task: Task, log: ActionLog, key: str, profile: ActionProfile, params: dict[str, Any], *, requested_by: str,
          now: datetime) -> str:
    """Keeps the action for the owner's approval; an active task waits in review (escalated) until they decide."""
    reason = f"{describe(profile.name, params)} waits for your approval"
    log.hold(key, action=profile.name, params=params, requested_by=requested_by, reason=reason, now=now)
    if task.status is not TaskStatus.ESCALATED and TaskStatus.ESCALATED in TRANSITIONS[task.status]:
        task.escalate(reason=reason, cause=APPROVAL, now=now)
    draft = {"subject": params.get("subject") or params.get("title") or "", "body": params["body"]} \
        if "body" in params else None
    task.notify_user(kind="action_review", message=f"'{task.title}': {reason} (action key {key}).", now=now,
                     draft=draft, action_key=key)
    return f"held {profile.name} on {task.ref} for the owner's approval (key {key})"


def take_action(uow: UnitOfWork, task: Task, log: ActionLog, key: str, profile: ActionProfile, params: dict[str, Any],
                *, requested_by: str, settings: TenantSettings, now: datetime, owner_decided: bool = False) -> str:
    """Takes the action now, or defers it to when a send limit frees up, or (unless the owner just decided on it)
    while the task or its pipeline may not act; its key is taken once either way."""
    task.check_may_act()
    held = None if owner_decided else _on_hold(uow, task, now)
    if held is not None:
        reason, until = held
        log.defer(key, action=profile.name, params=params, requested_by=requested_by, rule=ON_HOLD, reason=reason,
                  until=until or now, now=now)
        if until is not None:
            set_timer(uow, kind=TimerKind.TASK_ACTIONS, target_id=task.id, due=until, now=now)
        return f"{profile.name} on {task.ref} waits: {reason}"
    details = {**_details(profile, params, task, settings), "action_key": key, "requested_by": requested_by}
    summary = describe(profile.name, params, task.contact)
    if profile.reaches_contact:
        assert task.contact is not None, "checked when the action was requested"
        sent = send_to_contact(uow, task, details=details, now=now, settings=settings, summary=summary,
                               action=profile.name, recipient=task.contact if profile.channel == "sms" else None,
                               awaits=False)
        if isinstance(sent, Deferred):
            until = sent.deferral.until or now + DEFERRED_NEVER
            log.defer(key, action=profile.name, params=params, requested_by=requested_by, rule=sent.deferral.rule,
                      reason=sent.deferral.reason, until=until, now=now)
            set_timer(uow, kind=TimerKind.TASK_ACTIONS, target_id=task.id, due=until, now=now)
            if sent.deferral.rule == PAUSED:  # the resume hands the timer back at once
                hold(uow, task.tenant, held_timer(TimerKind.TASK_ACTIONS, task.id, task.ref), now)
                return f"{profile.name} on {task.ref} waits for the pause to end: {sent.deferral.reason}"
            return f"{profile.name} on {task.ref} waits until {when(until)}: {sent.deferral.reason}"
        # A message to the contact: the task's budget counts it (seed 002 §15.2), and a subtask's counts in its
        # parent's family budget, whoever works it.
        task.touch_sent(touch=task.touch, next_touch_at=task.next_touch_at, now=now)
    else:
        # A webhook call or a staff to-do is the task acting on its own: a pause holds it as the send check holds a
        # message, the owner's approval included, and the resume hands the task's actions timer back.
        pause = hold(uow, task.tenant, held_timer(TimerKind.TASK_ACTIONS, task.id, task.ref), now)
        if pause is not None:
            log.defer(key, action=profile.name, params=params, requested_by=requested_by, rule=PAUSED,
                      reason=pause.says(), until=now, now=now)
            return f"{profile.name} on {task.ref} waits for the pause to end: {pause.says()}"
        if settings.dry_run:  # as send_to_contact marks a send: delivery records it and sends nothing
            details, summary = {**details, "dry_run": True}, f"[dry run, not delivered] {summary}"
        task.record_action(action=profile.name, details=details, summary=summary, performed_by="loopline", now=now,
                           awaits=False)
    log.take(key, action=profile.name, params=params, requested_by=requested_by, now=now)
    if profile.name == "staff_todo":
        task.notify_user(kind="staff_todo", now=now, message=f"'{task.title}': to-do for {params['assigned_to']}: "
                         f"{params['title']}, due {when(due_time(params, 'due_at'))}.")
        set_timer(uow, kind=TimerKind.TASK_ACTIONS, target_id=task.id, due=due_time(params, "due_at"), now=now)
    return f"took {profile.name} on {task.ref} (key {key})"


def _on_hold(uow: UnitOfWork, task: Task, now: datetime) -> tuple[str, datetime | None] | None:
    """Why the task may not act now (§17.2: with the owner, or a subtask held while its parent is, or waiting for a
    sibling or its start), with when to look again: None when what lets it go on hands the timer back."""
    if pipeline_paused(task) is task:
        return f"'{task.title}' is with the owner", None
    reason = subtask_hold(uow, task, now)
    if reason is None:
        return None
    assert task.subtask_of is not None, "only a subtask is held by subtask_hold"
    starts_at = task.subtask_of["starts_at"]
    return reason, starts_at if starts_at is not None and starts_at > now else None


def _details(profile: ActionProfile, params: dict[str, Any], task: Task, settings: TenantSettings) -> dict[str, Any]:
    """What delivery sends for the action: who it goes to and what its channel needs."""
    if profile.name == "send_email":
        return {"to": params.get("to") or task.contact, "subject": params["subject"], "body": params["body"]}
    if profile.name == "send_sms":
        return {"to": params["to"], "body": params["body"], "sms_url": settings.sms_url}
    if profile.name == "calendar_invite":
        starts = when(due_time(params, "starts_at"))
        place = f" at {params['location']}" if params.get("location") else ""
        return {**params, "to": params.get("to") or task.contact, "subject": f"Invitation: {params['title']}",
                "body": f"You are invited to {params['title']} on {starts}{place}.",
                "duration_minutes": params.get("duration_minutes", INVITE_MINUTES)}
    if profile.name == "staff_todo":
        return {"to": "staff", **params}
    return {"to": "webhook", "event": params["event"], "payload": params.get("payload", {})}


def describe(action: str, params: dict[str, Any], contact: str | None = None) -> str:
    """The action in the owner's words, for the trail and the review."""
    to = params.get("to") or contact or "the contact"
    return {
        "send_email": lambda: f"An email to {to}: {params.get('subject', '')}",
        "send_sms": lambda: f"A text message to {to}: {params.get('body', '')}",
        "calendar_invite": lambda: f"An invitation for {to} to {params.get('title')} on "
                                   f"{when(due_time(params, 'starts_at'))}",
        "staff_todo": lambda: f"A to-do for {params.get('assigned_to')}: {params.get('title')}",
        "call_webhook": lambda: f"A webhook call ({params.get('event')})",
    }[action]()


def _log_of(uow: UnitOfWork, task: Task) -> ActionLog:
    log = uow.get(ids.action_log_id(task.tenant, task.ref), ActionLog)
    if log is None:
        raise NoActionsYet(f"task_id: task {task.ref} has requested no actions (action.request)")
    return log


def approve_action(uow: UnitOfWork, msg: Message, cmd: ActionDecision) -> str:
    """Takes the held action as it was asked for; the task leaves review with the last action held for it."""
    task = load_task(uow, msg.tenant, cmd.task_id)
    log = _log_of(uow, task)
    key, held = log.held(cmd.key)
    if task.status is TaskStatus.PENDING_REVIEW:
        raise InvalidAction(f"task_id: task {task.ref} is pending_review: approve the task first (task.approve), "
                            "then its action")
    was = task.status
    task.decide_action(key=key, action=held["action"], approved=True, reason=cmd.reason or "approved by owner",
                       last=len(log.held_keys()) == 1, now=msg.at)
    _answer_waiting_reply(uow, task, was, msg.at)
    hand_back_actions(uow, task, msg.at)
    return take_action(uow, task, log, key, ACTIONS[held["action"]], held["params"],
                       requested_by=held["requested_by"], settings=tenant_settings(uow, task.tenant), now=msg.at,
                       owner_decided=True)


def reject_action(uow: UnitOfWork, msg: Message, cmd: ActionDecision) -> str:
    task = load_task(uow, msg.tenant, cmd.task_id)
    log = _log_of(uow, task)
    key, held = log.held(cmd.key)
    reason = cmd.reason or "rejected by owner"
    was = task.status
    task.decide_action(key=key, action=held["action"], approved=False, reason=reason,
                       last=len(log.held_keys()) == 1, now=msg.at)
    _answer_waiting_reply(uow, task, was, msg.at)
    log.drop(key, reason=reason, by="owner", now=msg.at)
    hand_back_actions(uow, task, msg.at)
    return f"dropped {held['action']} of {task.ref} (key {key}): {reason}"


def _answer_waiting_reply(uow: UnitOfWork, task: Task, was: TaskStatus, now: datetime) -> None:
    """A task the owner's decision took back to work answers what the contact wrote while it was held (the owner
    was told of it, but that notice is not about the action): the agent evaluates it, as after guidance."""
    if was is TaskStatus.ESCALATED and task.status is TaskStatus.EXECUTING and task.is_acting \
            and (waiting := unanswered_replies(task_history(uow, task))):
        on_reply(uow, task, signal_ref=waiting[-1].signal_ref, data=waiting[-1].data, now=now)


def mark_todo_done(uow: UnitOfWork, msg: Message, cmd: ActionDone) -> str:
    task = load_task(uow, msg.tenant, cmd.task_id)
    log = _log_of(uow, task)
    key, todo = log.open_todo(cmd.key)
    log.todo_done(key, by="owner", note=cmd.note or "", now=msg.at)
    return f"to-do {todo['params']['title']!r} of {task.ref} is done; no more reminders"


def fire_task_actions(uow: UnitOfWork, timer: TimerFired, drafter: Drafter) -> str | None:
    """Takes the deferred actions whose limit freed up, reminds the owner of the to-dos due and escalates the task of
    a to-do ignored past its last reminder; checks the log's state first, so firing again changes nothing. A closed
    task takes and reminds nothing more."""
    task = uow.get(timer.target_id, Task)
    log = uow.get(ids.action_log_id(task.tenant, task.ref), ActionLog) if task is not None else None
    if task is None or log is None:
        return None
    if task.is_closed:
        for key in log.pending():
            log.drop(key, reason=f"the task is {task.status}", by="loopline", now=timer.now)
        return None
    done = []
    settings = tenant_settings(uow, task.tenant)
    held = _on_hold(uow, task, timer.now)  # its deferred actions wait: what lets the task go on hands the timer back
    for key, entry in [] if held else log.due_retries(timer.now):
        done.append(take_action(uow, task, log, key, ACTIONS[entry["action"]], entry["params"],
                                requested_by=entry["requested_by"], settings=settings, now=timer.now))
    for key, todo, reminder in log.due_reminders(timer.now):
        log.remind(key, reminder=reminder, now=timer.now)
        params = todo["params"]
        last = " This is the last reminder." if reminder == TODO_REMINDERS else ""
        task.notify_user(kind="todo_reminder", now=timer.now, message=(
            f"Reminder: {params['assigned_to']} still has to {params['title']} for '{task.title}' (due "
            f"{when(due_time(params, 'due_at'))}). Mark it done with action.done (key {key}).{last}"))
        done.append(f"reminded to-do {key}")
    # a dormant task cannot go to the owner: its ignored to-do escalates at the next firing after it wakes
    escalating = task.status is TaskStatus.ESCALATED or TaskStatus.ESCALATED in TRANSITIONS[task.status]
    for key, todo in log.due_escalations(timer.now) if escalating else []:
        log.escalate_todo(key, now=timer.now)
        params = todo["params"]
        done.append(escalate(uow, task, Escalate(reason=(
            f"the to-do {params['title']!r} for {params['assigned_to']} (key {key}) is still not done: it was due "
            f"{when(due_time(params, 'due_at'))} and its {TODO_REMINDERS} reminders went unanswered"),
            cause=TODO_IGNORED), timer.now))
    following = log.next_due(retries=held is None, escalations=escalating)
    if held is not None and held[1] is not None:
        following = min(following or held[1], held[1])
    if following is not None:
        set_timer(uow, kind=TimerKind.TASK_ACTIONS, target_id=task.id, due=max(following, timer.now + _SOON),
                  now=timer.now)
    return "; ".join(done) or None
