"""Works acting tasks: applies `domain/outreach.py`'s rules inside a step (a timer firing, a loop's deadline,
a recorded decision), so each step's sends, loops, timers and status changes commit together."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any

from loopline.domain import ids
from loopline.domain.anomalies import reply_anomaly
from loopline.domain.auto_reply import AutoReply, recognise, resume_at
from loopline.domain.contact_index import ContactIndex
from loopline.domain.errors import DomainError
from loopline.domain.expectations import NEXT_TOUCH
from loopline.domain.open_loop import OpenLoop
from loopline.domain.outreach import (
    Close,
    Escalate,
    GoDormant,
    Plan,
    Progress,
    SendTouch,
    StepAction,
    Wait,
    WaitForContact,
    held_for_owner,
    next_step,
)
from loopline.domain.reply_routing import guided_request_ref, unanswered_replies, unanswered_reply
from loopline.domain.send_ledger import local_day
from loopline.domain.send_window import first_send_time
from loopline.domain.status import TaskStatus
from loopline.domain.task import Task
from loopline.domain.task_types import PRIORITY_ORDER, task_type
from loopline.domain.timers import TimerKind
from loopline.domain.wording import when
from loopline.processors.application import UnitOfWork
from loopline.processors.handlers.attribution import attribute_value
from loopline.processors.handlers.escalation import escalate
from loopline.processors.handlers.goal_signals import goal_reached, watch_dormant, watch_provisional
from loopline.processors.handlers.loops_and_timers import (
    close_loop,
    close_task_loops,
    register_loop,
    task_history,
)
from loopline.processors.handlers.model_calls import awaits_decision, held_reason, request_decision
from loopline.processors.handlers.pausing import hold_step
from loopline.processors.handlers.sending import Deferred, keep_for_later, send_deferral, send_to_contact
from loopline.processors.handlers.subtasks import subtask_hold
from loopline.processors.handlers.suppression import close_for_suppressed
from loopline.processors.handlers.tenants import tenant_settings

NO_END_WAIT = timedelta(days=30)
"""How long a reply loop waits when the task has neither a next touch nor a budget end."""
OWNER = "owner"
"""Who a draft is `by` when the owner wrote it (`task.approve` with a draft, `task.reply`)."""
AFTER_REPLY = timedelta(microseconds=1)
"""A loop opened in answer to a reply waits for the next one: it is registered just after the reply, which the
match index keeps and would otherwise resolve it at once (a kept signal resolves loops not newer than it)."""


class OwnerSendRefused(DomainError):
    """A send limit that never frees up (a spent budget, a limit of 0) holds back the owner's message: refused,
    since a deferral would never end."""


def plan_of(task: Task) -> Plan:
    assert task.outreach is not None, f"task {task.ref} is not an acting task"
    return Plan.of(task.outreach)


def progress_of(task: Task) -> Progress:
    return Progress(
        status=task.status, touch=task.touch, messages_used=task.messages_used, turns_used=task.turns_used,
        next_touch_at=task.next_touch_at, dormant_until=task.dormant_until,
        awaiting_decision=awaits_decision(task.pending_decisions),
        deferred_until=task.deferred["until"] if task.deferred else None,
        away_until=task.outreach.get("away_until") if task.outreach else None,
    )


def has_step(task: Task, now: datetime) -> bool:
    """Whether a step of the task at `now` would do anything (a tick spends its per-tenant share only on those)."""
    if task.is_closed or not task.is_acting:
        return False
    return bool(_retries_due(task, now)) or not isinstance(next_step(plan_of(task), progress_of(task), now), Wait)


def step_task(uow: UnitOfWork, task: Task, now: datetime) -> str | None:
    """One step of an acting task at `now`: a retry of a failed decision that is due, else what the rules say; a step
    that would do something is held while paused, and a subtask's while `subtask_hold` says."""
    if not has_step(task, now):
        return None
    held = hold_step(uow, task, TimerKind.TASK_STEP, task.id, now) or subtask_hold(uow, task, now)
    if held:
        return held
    retried = retry_due_decisions(uow, task, now)
    if retried:
        return retried
    return act(uow, task, next_step(plan_of(task), progress_of(task), now), now)


def act(uow: UnitOfWork, task: Task, action: StepAction | WaitForContact, now: datetime,
        quote: str | None = None) -> str | None:
    """Applies one action of the rules (a reply is sent by the decision that wrote it, `processors/followers/agent.py`);
    says what it did, for the tick's lines and the audit. `quote` is the contact's reply the action answers."""
    if isinstance(action, Wait):
        return None
    if isinstance(action, SendTouch):
        return send_touch(uow, task, action, now)
    if isinstance(action, Close):
        return close(uow, task, action, now, quote=quote)
    if isinstance(action, Escalate):
        return escalate(uow, task, action, now, quote=quote)
    if isinstance(action, GoDormant):
        return go_dormant(uow, task, action, now)
    task.schedule_next_touch(action.next_touch_at, reason=action.reason, now=now)
    open_reply_loop(uow, task, deadline=action.next_touch_at, now=now + AFTER_REPLY)
    return f"'{task.title}': waiting for {task.contact} until {when(action.next_touch_at)}"


def _owners(draft: dict[str, Any]) -> bool:
    """A kept draft the owner wrote or approved (`task.approve`, `task.reply`): it waited only for a send limit."""
    return draft.get("by") == OWNER or bool(draft.get("approved"))


def hold_for_owner(uow: UnitOfWork, task: Task, action: Escalate, written: dict[str, Any], now: datetime,
                   quote: str | None = None) -> str:
    """Escalates with the agent's draft kept for the owner's `task.approve`, which sends it as written or edited;
    `quote` is the contact's reply the draft answers."""
    said = escalate(uow, task, action, now, quote=quote)
    if action.draft and not task.is_closed:
        task.hold_draft({**written, **action.draft}, now=now)
    return said


def owner_approves(uow: UnitOfWork, task: Task, touch: int) -> str | None:
    """Why a touch the agent would send unasked waits for the owner instead, None when it goes: in `manual` mode (seed
    002 §7.6, the kill switch, read when the send is decided) or an onboarding phase that reviews every task (§26),
    every touch does but the first of a task the owner approved."""
    settings = tenant_settings(uow, task.tenant)
    if not settings.reviews_every_task or (touch == 1 and _approved_by_owner(uow, task)):
        return None
    return ("the execution mode is manual" if settings.execution_mode == "manual"
            else f"the onboarding phase is {settings.ramp_phase}")


def _approved_by_owner(uow: UnitOfWork, task: Task) -> bool:
    """Whether the owner approved the task (`task.approve`), from its events: asked only before a first touch, while
    the history is short."""
    return any(isinstance(event, Task.Reviewed) and event.decision == "approved"
               for event in uow.app.events.get(task.id, lte=task.version))


def send_touch(uow: UnitOfWork, task: Task, action: SendTouch, now: datetime) -> str:
    """A kept (deferred) draft or the creation draft goes out as is, a touch of the agent's only if the mode lets it
    go unasked (else it is held for the owner's `task.approve`); otherwise the model is asked for one. The stale guard
    first: a task whose goal its contact's outcome signals show reached closes instead (seed 002 §30)."""
    if (resolved := goal_reached(uow, task)) is not None:
        return close(uow, task, resolved, now)
    if task.deferred is not None and "body" in task.deferred["draft"]:
        draft = dict(task.deferred["draft"])
        touch, reply = draft.get("touch", action.touch), bool(draft.get("reply"))
        why = None if reply or _owners(draft) else owner_approves(uow, task, touch)
        if why:
            return hold_for_owner(uow, task, held_for_owner(touch, draft, why), {**draft, "touch": touch}, now)
        return send_message(uow, task, draft=draft, touch=touch, now=now, reply=reply)
    if action.use_draft:
        draft = task.outreach["draft"]
        by_owner = draft.get("decided_by") == OWNER  # the owner's own first message, given at `task.approve`
        written = {
            "subject": draft["subject"], "body": draft["body"], "decided_by": draft.get("decided_by", "creation draft"),
            "confidence": None if by_owner else task.confidence if task.confidence is not None else 0.0,
            **({"by": OWNER} if by_owner else {}),
        }
        why = None if by_owner else owner_approves(uow, task, action.touch)
        if why:
            return hold_for_owner(uow, task, held_for_owner(action.touch, draft, why), {**written, "touch": action.touch},
                                  now)
        return send_message(uow, task, draft=written, touch=action.touch, now=now)
    assert task.contact is not None
    deferral = send_deferral(uow, task, contact=task.contact, now=now, settings=tenant_settings(uow, task.tenant),
                             yields_to=due_before(uow, task, now))
    if deferral is not None and deferral.rule == "suppressed":
        return close_for_suppressed(uow, task, now)
    if deferral is not None:  # no draft is asked for that a limit would hold: asked for when the limit frees up
        until = keep_for_later(uow, task, deferral, {"touch": action.touch}, now)
        return f"'{task.title}': touch {action.touch} is due; not drafted until {until} ({deferral.reason})"
    held = request_decision(
        uow, task, request_ref=f"{task.ref}/touch/{action.touch}", point="draft_message", purpose="touch",
        touch=action.touch, tone=action.tone, reason=f"touch {action.touch} is due", now=now,
    )
    if held is not None:
        return f"'{task.title}': touch {action.touch} is due; {held_reason(held)}"
    return f"'{task.title}': touch {action.touch} is due; asked for its draft"


def send_message(uow: UnitOfWork, task: Task, *, draft: dict[str, Any], touch: int, now: datetime,
                 reply: bool = False) -> str:
    """Sends a message to the task's contact through the send checks, in the task's one thread (`Re:` its first
    subject, answering the message before); a send they defer keeps its draft and steps the task again when the
    limit frees up. A sent touch opens the reply loop up to the next touch. A draft `by` the owner is recorded as
    theirs (performed by `owner`)."""
    assert task.contact is not None and task.outreach is not None
    details = {
        "to": task.contact, "to_name": task.outreach.get("contact_name"),
        "subject": task.thread_subject(draft.get("subject", "")), "body": draft["body"], "touch": touch,
        "decided_by": draft.get("decided_by", ""), "decision": draft.get("decision"),
        "confidence": draft.get("confidence"), "thread": {"references": task.thread_references},
    }
    details = {key: value for key, value in details.items() if value is not None}
    by = draft.get("by", "loopline")
    written = ", the owner's words" if by == OWNER else ""
    settings = tenant_settings(uow, task.tenant)
    sent = send_to_contact(uow, task, details=details, now=now, settings=settings,
                           summary=f"Emailed {task.contact} ({'reply' if reply else f'touch {touch}'}{written})",
                           answers_contact=reply, performed_by=by,
                           yields_to=() if reply or by == OWNER else due_before(uow, task, now))
    if isinstance(sent, Deferred):
        if sent.deferral.rule == "suppressed" and by != OWNER:
            return close_for_suppressed(uow, task, now)
        if by == OWNER and sent.deferral.until is None:
            then = ("send it again once it resumes" if sent.deferral.rule == "paused"
                    else "write to them yourself, then close the task with task.takeover")
            raise OwnerSendRefused(f"{sent.deferral.reason}, so nothing was sent to {task.contact}; {then}")
        until = keep_for_later(uow, task, sent.deferral, {**draft, "touch": touch, "reply": reply}, now)
        return f"'{task.title}': message to {task.contact} deferred until {until} ({sent.deferral.reason})"
    plan = plan_of(task)
    next_touch_at = None if reply else plan.after_touch(touch, now)
    if next_touch_at is not None and touch < plan.touches:
        # The next touch falls due inside the send window, so its draft is asked for when it can go.
        next_touch_at = first_send_time(next_touch_at, settings, str(task.id))
    task.touch_sent(touch=touch, next_touch_at=next_touch_at, now=now)
    deadline = min(d for d in (next_touch_at, plan.ends_at) if d is not None) if (next_touch_at or plan.ends_at) else None
    open_reply_loop(uow, task, deadline=deadline or now + NO_END_WAIT, now=now + AFTER_REPLY if reply else now,
                    subject=details["subject"])
    what = "a reply" if reply else f"touch {touch} of {plan.touches}"
    return f"'{task.title}': sent {what} to {task.contact}"


def due_before(uow: UnitOfWork, task: Task, now: datetime) -> tuple[str, ...]:
    """The contact's other open tasks of a higher priority whose touch is due now or being drafted: the day's
    one message to the contact is theirs (seed 002 §21.3), described for the deferral's reason."""
    assert task.contact is not None
    index = uow.get(ids.contact_index_id(task.tenant, task.contact), ContactIndex)
    if index is None:
        return ()
    rank = priority_rank(task)
    ahead = []
    for ref in sorted(set(index.tasks.values()) - {task.ref}):
        other = uow.get(ids.task_id(task.tenant, ref), Task)
        if other is None or other.is_closed or not other.is_acting or priority_rank(other) >= rank:
            continue
        drafting = any(pending["purpose"] == "touch" for pending in other.pending_decisions.values())
        if drafting or isinstance(next_step(plan_of(other), progress_of(other), now), SendTouch):
            ahead.append(f"'{other.title}' ({other.priority or task_type(other.task_type).priority})")
    return tuple(ahead)


def priority_rank(task: Task) -> int:
    """Lower goes first: the task's own priority, else its type's."""
    return PRIORITY_ORDER.get(task.priority or task_type(task.task_type).priority, len(PRIORITY_ORDER))


def open_reply_loop(uow: UnitOfWork, task: Task, *, deadline: datetime, now: datetime, subject: str | None = None) -> None:
    """Waits for the contact's reply; its deadline runs the next step (`next_touch`). The one reply loop a
    task had open until now is superseded by this one (it waited for the same contact), so a reply that
    comes at any time, also while a send is deferred or a draft is being written, has exactly one loop to answer."""
    assert task.contact is not None
    for loop_ref in [ref for ref in task.open_loops if ref.startswith(f"{task.ref}/reply/")]:
        loop = uow.get(ids.loop_id(task.tenant, loop_ref), OpenLoop)
        assert loop is not None, f"task {task.ref} links loop {loop_ref} that does not exist"
        close_loop(uow, loop, task, resolved_by="superseded", reason="a newer message waits for the answer", now=now)
    register_loop(
        uow, task, loop_ref=f"{task.ref}/reply/{task.version}", channel="email", watch={"sender": task.contact},
        deadline=deadline, if_unresolved=NEXT_TOUCH, description=f"a reply from {task.contact}", origin="outreach",
        now=now, subject=subject, action="send_email", contact=task.contact,
        contact_name=task.outreach.get("contact_name") if task.outreach else None,
    )


def close(uow: UnitOfWork, task: Task, action: Close, now: datetime, quote: str | None = None,
          evidence: tuple[str, float | None] | None = None) -> str:
    """Sets the outcome, then closes: completed for an outcome reached, cancelled otherwise (unresponsive); the
    owner is told at once, with the contact's words when a reply closed it (an opt-out, a conversion) and what to
    do next when the outcome asks for them (a conversion: book the class). `evidence`: the outcome signal's ref and
    amount when one closed it; a provisional outcome is verified when its window ends."""
    outcome = task_type(task.task_type).outcome(action.outcome)
    if task.status is TaskStatus.READY:  # the contact answered before the first touch: the task is worked now
        task.note_progress(notes=f"closing: {action.reason}", status=str(TaskStatus.EXECUTING), now=now)
    resolved_by = "task_completed" if action.status is TaskStatus.COMPLETED else str(action.status)
    close_task_loops(uow, task, resolved_by=resolved_by, reason=f"task closed: {action.reason}", now=now)
    task.set_outcome(code=action.outcome, kind=outcome.kind if outcome else "neutral",
                     provisional=outcome.provisional if outcome else False, reason=action.reason, now=now)
    signal_ref, amount = evidence or (None, None)
    value = attribute_value(uow, task, action.outcome, now=now, signal_ref=signal_ref, amount=amount)
    if action.status.value == "completed":
        task.complete(summary=f"{action.outcome}: {action.reason}", now=now)
    else:
        task.cancel(reason=f"{action.outcome}: {action.reason}", now=now)
    watch_provisional(uow, task, now)
    worth = f" Worth {value:g}." if value else ""  # what the outcome is credited with (`average_value`, a payment)
    next_step = worth + (f" Next: {outcome.next_step}" if outcome and outcome.next_step else "")
    task.notify_user(kind=f"task_{action.status}",
                     message=f"'{task.title}' closed as {action.outcome}: {action.reason}.{next_step}", now=now,
                     quote=quote)
    return f"'{task.title}': closed as {action.outcome} ({action.reason})"


def go_dormant(uow: UnitOfWork, task: Task, action: GoDormant, now: datetime) -> str:
    """Sends nothing more; a loop on the contact's replies stays open so a reply wakes the task, until `until`."""
    task.go_dormant(until=action.until, reason=action.reason, now=now)
    open_reply_loop(uow, task, deadline=action.until, now=now)
    watch_dormant(uow, task, now)
    return f"'{task.title}': dormant until {when(action.until)} ({action.reason})"


def retry_due_decisions(uow: UnitOfWork, task: Task, now: datetime) -> str | None:
    """Asks again for each failed decision whose retry time has come, and for each one a model-call limit held back
    until now."""
    due = _retries_due(task, now)
    for ref, pending in due:
        again = pending["reason"] if "held" in pending else f"retry {pending['attempt'] + 1} after the model failed"
        request_decision(
            uow, task, request_ref=ref, point=pending["point"], purpose=pending["purpose"], touch=pending["touch"],
            tone=pending["tone"], reason=again, now=now, attempt=pending["attempt"] + 1, loop_ref=pending["loop_ref"],
        )
    return f"'{task.title}': asked the model again ({len(due)})" if due else None


def on_reply(uow: UnitOfWork, task: Task, *, signal_ref: str, data: Mapping[str, Any], now: datetime) -> None:
    """A reply from the contact stops the cadence and is evaluated by the model, unless it is an automatic one (the
    task pauses), the turn budget is spent or the conversation is anomalous (seed 002 §7.5): hard rules, the owner
    decides, no model call."""
    if pause_for_auto_reply(uow, task, data, now):
        return
    plan = plan_of(task)
    if task.turns_used >= plan.budget_turns:
        held = Escalate(f"{task.contact} replied but all {plan.budget_turns} turns are used", "turn_budget")
    else:
        unanswered = len(unanswered_replies(task_history(uow, task)))
        held = reply_anomaly(turns_used=task.turns_used, unanswered_replies=unanswered)
    if held is not None:
        task.withdraw_decisions(reason=held.reason, now=now)  # the owner answers now, whatever the model says later
        escalate(uow, task, held, now, quote=str(data.get("body") or data.get("subject") or "").strip())
        return
    request_decision(
        uow, task, request_ref=signal_ref, point="evaluate_reply", purpose="reply", touch=task.touch, tone=None,
        reason=f"{task.contact} replied", now=now,
    )


def answer_with_guidance(uow: UnitOfWork, task: Task, *, now: datetime) -> bool:
    """The owner's guidance on a reply nothing has answered yet: the model evaluates that reply again, with the
    guidance, and its answer is sent under the usual confidence rule (`processors/handlers/answers.py`). No turn
    budget check: the owner asked for this turn. False when no reply waits for an answer."""
    replied = unanswered_reply(task_history(uow, task))
    if replied is None:
        return False
    request_decision(
        uow, task, request_ref=guided_request_ref(replied, task.version), point="evaluate_reply", purpose="guidance",
        touch=task.touch, tone=None, reason=f"the owner gave guidance on {task.contact}'s reply", now=now,
    )
    return True


def _retries_due(task: Task, now: datetime) -> list[tuple[str, dict[str, Any]]]:
    return [(ref, p) for ref, p in task.pending_decisions.items()
            if p["failed"] == p["attempt"] and p.get("retry_at") is not None and p["retry_at"] <= now]


def automatic_reply(uow: UnitOfWork, task: Task, data: Mapping[str, Any], now: datetime) -> AutoReply | None:
    """What an auto-responder's reply says (`domain/auto_reply.py`), or None for a person's; read before any model call."""
    zone = tenant_settings(uow, task.tenant).timezone
    return recognise(subject=data.get("subject"), body=data.get("body"), auto_submitted=data.get("auto_submitted"),
                     written=local_day(now, zone))


def pause_for_auto_reply(uow: UnitOfWork, task: Task, data: Mapping[str, Any], now: datetime) -> bool:
    """An out-of-office reply pauses the cadence until the return it states (else a week), with no model call, no
    turn counted and no escalation; a loop on the contact's replies stays open, so a real answer meanwhile is read."""
    away = automatic_reply(uow, task, data, now)
    if away is None:
        return False
    until = max(resume_at(away, received_at=now, timezone=tenant_settings(uow, task.tenant).timezone), now)
    next_touch_at = task.pause_out_of_office(until=until, returns_on=away.returns_on, sign=away.sign, now=now)
    ends_at = plan_of(task).ends_at
    open_reply_loop(uow, task, deadline=min(next_touch_at, ends_at) if ends_at else next_touch_at, now=now + AFTER_REPLY)
    return True
