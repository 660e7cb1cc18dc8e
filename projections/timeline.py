"""The `timeline` read model: every domain event with what happened and why (the audit trail)."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import datetime
from typing import Any
from uuid import UUID

from sqlalchemy import JSON, Column, Integer, String, Table, Text, and_, select
from sqlalchemy.engine import Connection

from loopline.domain.action_log import ActionLog
from loopline.domain.inbound import InboundMessage, RejectedInput
from loopline.domain.masking import masked, masked_line
from loopline.domain.open_loop import OpenLoop
from loopline.domain.pause import SystemSwitch
from loopline.domain.notification_hold import NotificationHold
from loopline.domain.open_tasks import OpenTasks
from loopline.domain.proactive_run import ProactiveRun
from loopline.domain.proposal import Proposal, ProposalBook
from loopline.domain.question import Question
from loopline.domain.recurrence import Recurrence
from loopline.domain.routine import Routine, RoutineEvent
from loopline.domain.task import Task
from loopline.domain.task_ledger import TenantTasks
from loopline.domain.tenant import Tenant
from loopline.domain.timeutil import format_time, parse_time
from loopline.domain.wording import CLOSED_BECAUSE, NEXT_STEP, awaited_from_watch, when
from loopline.projections import writes
from loopline.projections.timeline_brain import BRAIN_DESCRIPTIONS
from loopline.projections.timeline_routines import routine_tasks, routine_task
from loopline.projections.runner import metadata

timeline = Table(
    "timeline", metadata,
    Column("position", Integer, primary_key=True, autoincrement=False),
    Column("tenant", String(200), index=True),
    Column("task_id", String(200), index=True),
    Column("subject", String(400), nullable=False),
    Column("event", String(64), nullable=False),
    Column("at", String(40), nullable=False),
    Column("summary", Text, nullable=False),
    Column("reason", Text),
    Column("payload", JSON, nullable=False),
)

Describe = Callable[[Any], tuple[str, str | None]]

DESCRIPTIONS: dict[type, Describe] = {
    Task.Created: lambda e: (f"task created: '{e.title}' ({e.status})", e.reason),
    Task.ActionRecorded: lambda e: (f"{e.performed_by} did {e.action}: {e.summary}", e.details.get("decided_by")),
    Task.LoopLinked: lambda e: (f"now waiting on loop {e.loop_ref}", None),
    Task.LoopClosed: lambda e: (f"loop {e.loop_ref} closed ({e.resolved_by})", None),
    Task.SignalReceived: lambda e: (
        f"{e.signal_type} {e.signal_ref} stored in inbox; task is {e.status}",
        f"matched loop(s) {', '.join(e.resolved_loops)}" if e.resolved_loops else None,
    ),
    Task.ReplyNoted: lambda e: (f"email.received {e.signal_ref} stored in inbox; task {e.answered_by} answers it", None),
    Task.ProgressNoted: lambda e: (f"progress: {e.notes} ({e.status})", None),
    Task.UserNotified: lambda e: (f"notified user: {e.message}", e.kind),
    Task.Reviewed: lambda e: (f"owner {e.decision} the task", e.reason),
    Task.GuidanceGiven: lambda e: ("owner gave guidance; task resumed", e.text),
    Task.Escalated: lambda e: ("task escalated to the owner", e.reason),
    Task.EscalationContextRecorded: lambda e: (
        f"handed to the owner (blocked by {e.blocked_by}: {e.cause}); reminder {format_time(e.remind_at) or 'never'}, "
        f"cancelled {format_time(e.cancel_at) or 'never'} if nobody acts", e.reason,
    ),
    Task.DraftHeldBack: lambda e: (
        f"draft held back for the owner (task.approve sends it): {e.draft.get('subject') or '(a reply)'}",
        e.draft.get("body"),
    ),
    Task.FirstDraftEdited: lambda e: (f"owner wrote the first message: {e.draft['subject']}", e.draft["body"]),
    Task.OwnerAnswered: lambda e: (
        {"approved": "owner approved the held-back draft", "edited": "owner edited the held-back draft",
         "wrote": "owner wrote to the contact"}.get(e.how, f"owner answered ({e.how})") + f"; task is {e.status}",
        e.reason,
    ),
    Task.Completed: lambda e: ("task completed", e.summary),
    Task.Cancelled: lambda e: ("task cancelled", e.reason),
    Task.Expired: lambda e: ("task expired", e.reason),
    Task.WaitStarted: lambda e: (f"something to wait for; task is {e.status}", e.reason),
    Task.WaitEnded: lambda e: (f"nothing left to wait for; task is {e.status}", e.reason),
    Task.WorkflowOutputRecorded: lambda e: (f"workflow {e.workflow} wrote {e.name}", None),
    Task.WakeupScheduled: lambda e: (
        "wake-up scheduled " + " or ".join(
            ([f"at {format_time(e.at)}"] if e.at else []) + ([f"when loop {e.loop_ref} matches"] if e.loop_ref else [])
        ),
        e.reason,
    ),
    Task.WokenUp: lambda e: (f"woke up ({e.cause}); task is {e.status}", e.reason),
    Task.StallCheckScheduled: lambda e: (f"next stall check at {format_time(e.at)}", None),
    Task.StallFlagged: lambda e: (
        f"flagged stalled: no activity for {e.idle_days} days", f"last activity {format_time(e.last_activity_at)}"
    ),
    Task.OutreachPlanned: lambda e: (
        f"outreach planned: cadence {e.cadence} (touches after {', '.join(map(str, e.intervals)) or 'no'} days, then "
        f"{e.on_exhaustion}), budget {e.budget_messages} message(s), {e.budget_turns} turn(s)"
        + (f", until {format_time(e.ends_at)}" if e.ends_at else ""),
        "first message drafted at creation" if e.draft else None,
    ),
    Task.ContextMerged: lambda e: (
        f"context merged from {e.source_ref}: {', '.join(sorted(e.context)) or 'nothing new'}",
        "one active task per contact and type",
    ),
    Task.DecisionRequested: lambda e: (
        f"decision asked: {e.point}" + (f" (touch {e.touch}, tone {e.tone})" if e.tone else "")
        + (f", attempt {e.attempt}" if e.attempt > 1 else ""),
        e.reason,
    ),
    Task.DecisionRecorded: lambda e: (
        f"{e.point} decided: {e.decision} (confidence {e.confidence:.2f}; {e.adapter} adapter, model {e.model})",
        f"{e.reasoning} [prompt {e.prompt_digest[:12]}, {e.input_tokens} in / {e.output_tokens} out tokens"
        + (f"; {e.cache_read_tokens} read from the prompt cache" if e.cache_read_tokens else "") + "]",
    ),
    Task.DecisionFailed: lambda e: (
        f"decision failed (attempt {e.attempt}); nothing sent; "
        + (f"asked again at {format_time(e.retry_at)}" if e.retry_at else "the task goes to the owner"),
        e.error,
    ),
    Task.DecisionsWithdrawn: lambda e: (f"decision(s) no longer awaited: {', '.join(e.request_refs)}", e.reason),
    Task.DecisionHeld: lambda e: (
        f"model call held until {format_time(e.until)} ({e.rule}): {e.point} is asked for then", e.why,
    ),
    Task.NextTouchScheduled: lambda e: (f"cadence resumes: next touch at {format_time(e.next_touch_at)}", e.reason),
    Task.OutOfOfficeReceived: lambda e: (
        f"automatic reply: the contact is away until {format_time(e.until)}; next touch at {format_time(e.next_touch_at)}",
        f"recognised by {e.sign}; " + (f"return stated: {e.returns_on}" if e.returns_on else "no return date: a week"),
    ),
    Task.TouchSent: lambda e: (
        f"touch {e.touch} sent ({e.messages_used} message(s) used)"
        + (f"; next touch at {format_time(e.next_touch_at)}" if e.next_touch_at else ""),
        None,
    ),
    Task.SendDeferred: lambda e: (f"send deferred until {format_time(e.until)} ({e.rule})", e.reason),
    Task.SendReturned: lambda e: (f"email to {e.to} never left: not counted as sent", e.reason),
    Task.OutcomeSet: lambda e: (
        f"outcome {e.code} ({e.kind}{', provisional' if e.provisional else ''})", e.reason,
    ),
    Task.ValueAttributed: lambda e: (
        f"value attributed for {e.outcome}: {e.value:g}" + (" (a late signal)" if e.late else ""),
        {"signal_amount": f"the amount of signal {e.signal_ref}",
         "multiplier": f"{e.multiplier:g} x the average value {e.average_value:g}"}.get(e.basis, "no revenue for this outcome"),
    ),
    Task.PriorityRuled: lambda e: (
        f"priority {e.priority} set by priority rule {e.rule}" + (f" (was {e.was})" if e.was else ""),
        f"model urgency score {e.urgency:g}" if e.urgency is not None else None,
    ),
    Task.WentDormant: lambda e: (f"went dormant; closes as unresponsive at {format_time(e.until)}", e.reason),
    Task.SubtaskLinked: lambda e: (
        f"a {e.requirement} subtask of {e.parent_ref}; own budget {e.budget_messages} message(s), {e.budget_turns} "
        "turn(s)" + (f"; starts at {format_time(e.starts_at)}" if e.starts_at else ""),
        f"waits for {', '.join(e.depends_on)}" if e.depends_on else None,
    ),
    Task.SubtaskHeld: lambda e: (f"held until its blockers finish; task is {e.status}", e.reason),
    Task.SubtaskAdded: lambda e: (f"subtask {e.subtask_ref} added by the {e.by} ({e.requirement}, {e.subtask_status})",
                                  f"waits for {', '.join(e.depends_on)}" if e.depends_on else None),
    Task.SubtaskMoved: lambda e: (f"subtask {e.subtask_ref} is {e.subtask_status} ({e.messages} message(s) sent)",
                                  e.note or None),
    Task.SubtaskPaused: lambda e: (f"subtask {e.subtask_ref}'s step held", e.reason),
    Task.SubtasksResumed: lambda e: (f"subtask(s) {', '.join(e.subtask_refs)} go on", None),
    Task.SubtasksDerived: lambda e: (f"its subtasks make it {e.derived}; task is {e.status}", e.reason),
    Task.ActionDecided: lambda e: (f"owner {e.decision} the held {e.action} (key {e.key}); task is {e.status}", e.reason),
    ActionLog.Held: lambda e: (f"{e.action} held for the owner's approval (key {e.key})", e.reason),
    ActionLog.Deferred: lambda e: (f"{e.action} deferred until {format_time(e.until)} ({e.rule}; key {e.key})", e.reason),
    ActionLog.Dropped: lambda e: (f"action {e.key} dropped by {e.by}", e.reason),
    ActionLog.TodoReminded: lambda e: (f"owner reminded of to-do {e.key} (reminder {e.reminder})", None),
    ActionLog.TodoDone: lambda e: (f"to-do {e.key} done ({e.by})", e.note or None),
    Task.OutcomeSignalReceived: lambda e: (
        f"outcome signal {e.signal_kind}" + (f" ({e.value:g})" if e.value is not None else "")
        + (f" by account {e.account}" if e.account else ""), e.effect,
    ),
    Task.AttributedLate: lambda e: (f"outcome {e.previous} became {e.code}: {e.signal_kind} attributed late", e.reason),
    Task.OutcomeDowngraded: lambda e: (f"outcome {e.previous} downgraded to {e.code}", e.reason),
    Task.OutcomeUndone: lambda e: (f"outcome {e.previous} undone by {e.signal_kind}: now {e.code}", e.reason),
    Task.GoalProgressed: lambda e: (
        f"goal progress {e.score}% ({e.evidence_type}, from the {e.source}); next: {e.recommended}"
        + (f"; milestones {', '.join(e.milestones)}" if e.milestones else ""),
        e.evidence,
    ),
    Task.Evaluated: lambda e: (
        f"evaluated ({e.status}): {e.outcome or 'no outcome'} scores {e.outcome_score}/100", e.score_reason,
    ),
    Task.OutcomeOverridden: lambda e: (f"{e.by} overrode the outcome {e.previous or 'none'} with {e.code}", e.reason),
    Task.Reopened: lambda e: (f"{e.by} reopened the task ({e.previous_status}); task is {e.status}", e.reason),
    Task.OutcomeRated: lambda e: (
        f"{e.by} rated the outcome {e.outcome or 'none'} {e.rating}: "
        + ("agrees" if e.rating == "up" else "disagrees")
        + (f" ({e.why})" if e.why else ""),
        e.note,
    ),
    Tenant.Configured: lambda e: (
        f"tenant configured: {', '.join(f'{k}={v!r}' for k, v in sorted(masked(e.settings).items()) if k != 'profile')}"
        + ("; profile " + ", ".join(sorted(e.settings["profile"])) if e.settings.get("profile") else ""),
        None,
    ),
    Tenant.DigestRecorded: lambda e: (f"daily digest: the owner is emailed the scorecard of {e.day}", None),
    Tenant.Paused: lambda e: (f"tenant paused by {e.by}: nothing is sent and no model is asked", e.reason),
    Tenant.WorkHeld: lambda e: (f"held while paused: {_held_work(e.work)}", None),
    Tenant.Resumed: lambda e: (f"tenant resumed by {e.by}: {len(e.released)} held step(s) go on", e.reason),
    SystemSwitch.Paused: lambda e: (f"Loopline paused for every tenant by {e.by}", e.reason),
    SystemSwitch.WorkHeld: lambda e: (f"held while Loopline is paused: {_held_work(e.work)}", None),
    SystemSwitch.Resumed: lambda e: (f"Loopline resumed by {e.by}: {len(e.released)} held step(s) go on", e.reason),
    Task.DecisionPaused: lambda e: (f"no model asked for {e.request_ref}: held while paused", e.reason),
    Task.DecisionResumed: lambda e: (f"the pause ended: asking the model for {e.request_ref}", e.reason),
    OpenLoop.Registered: lambda e: (
        f"waiting for {e.description or awaited_from_watch(e.channel, e.watch)} until {when(e.deadline)}; "
        f"then: {NEXT_STEP.get(e.if_unresolved, e.if_unresolved)}",
        f"{e.origin} loop on {e.channel}, if_unresolved {e.if_unresolved}, watch {json.dumps(e.watch, sort_keys=True)}",
    ),
    OpenLoop.Resolved: lambda e: (
        f"loop {CLOSED_BECAUSE.get(e.resolved_by, e.resolved_by)}", e.reason + (f" [rule: {e.rule}]" if e.rule else "")
    ),
    TenantTasks.CreationHeld: lambda e: (f"task not created: the {e.rule} held it", e.reason),
    Recurrence.Created: lambda e: (
        f"recurring template {e.ref}: one {e.template.get('task_type') or 'ad_hoc'} task at each '{e.cron}' "
        f"({e.timezone}), at most {e.max_instances}; the first {when(e.next_at)}", None,
    ),
    Recurrence.InstanceCreated: lambda e: (
        f"instance {e.number} of template {e.template_ref}" + ("" if e.created else " not created"),
        e.result + (f"; the next {when(e.next_at)}" if e.next_at else "; its last"),
    ),
    Recurrence.Ended: lambda e: (f"recurring template {e.template_ref} ended", e.reason),
    **BRAIN_DESCRIPTIONS,
    InboundMessage.Received: lambda e: (f"received {e.kind} {e.type} {e.ref}", f"from {e.source}"),
    InboundMessage.Rejected: lambda e: ("message rejected", e.reason),
    RejectedInput.Recorded: lambda e: (f"input rejected at {e.source}:{e.position}", e.reason),
}


def _held_work(work: dict[str, Any]) -> str:
    """What a pause held (`domain/pause.py`), as the audit reads it."""
    if "routine" in work:
        return f"the run of routine {work['routine']}" + (f" of task {work['task_ref']}" if work["task_ref"] else "")
    if "timer" in work:
        return f"the {work['timer'].replace('_', ' ')} of task {work['task_ref']}"
    return f"the decision {work['decision']} of task {work['task_ref']} (attempt {work['attempt']})"


RUN_TRAIL = "proactive-run"
"""The trail of a tenant's proactive run (`loopline audit proactive-run --tenant T`): its runs, turns and actions."""


def _subject(event: Any) -> tuple[str | None, str | None, str]:
    """Whose the event is (tenant, task) and what it is about, as the event itself says."""
    if isinstance(event, Task.Created):
        return event.tenant, event.ref, f"task {event.ref}"
    if isinstance(event, OpenLoop.Registered):
        return event.tenant, event.task_ref, f"loop {event.ref}"
    if isinstance(event, InboundMessage.Received):
        return event.tenant, event.data.get("task_id"), f"{event.kind} {event.ref}"
    if isinstance(event, InboundMessage.Rejected):
        return event.tenant, event.task_ref, f"{event.kind} {event.ref}"
    if isinstance(event, RejectedInput.Recorded):
        return None, None, f"input {event.source}:{event.position}"
    if isinstance(event, (Tenant.WorkHeld, SystemSwitch.WorkHeld)):  # shown in the task's trail too
        if "routine" in event.work:
            return event.tenant, event.work["task_ref"], f"routine {event.work['routine']}"
        return event.tenant, event.work["task_ref"], f"task {event.work['task_ref']}"
    if isinstance(event, (Tenant.Configured, Tenant.Paused, Tenant.Resumed, Tenant.DigestRecorded)):
        return event.tenant, None, f"tenant {event.tenant}"
    if isinstance(event, (SystemSwitch.Paused, SystemSwitch.Resumed)):
        return None, None, "Loopline"
    if isinstance(event, Recurrence.Created):
        return event.tenant, None, f"template {event.ref}"
    if isinstance(event, Recurrence.Ended):
        return event.tenant, None, f"template {event.template_ref}"
    if isinstance(event, (Proposal.Proposed, Proposal.Event)):  # `audit <proposal id>`; an approval: its task's trail
        return event.tenant, getattr(event, "task_ref", event.proposal_ref), f"proposal {event.proposal_ref}"
    if isinstance(event, ProposalBook.Event):  # a batch shown is the brain's doing: in the run's trail
        return event.tenant, getattr(event, "proposal_ref", RUN_TRAIL), f"proposals {event.tenant}"
    if isinstance(event, (Question.Asked, Question.Event)):  # the asking shows in its task's trail too
        return event.tenant, getattr(event, "task_ref", None), f"question {event.question_ref}"
    if isinstance(event, Routine.Created):
        return event.tenant, None, f"routine {event.ref}"
    if isinstance(event, RoutineEvent):
        return event.tenant, None, f"routine {event.routine_ref}"
    if getattr(event, "loop_ref", None):  # a task's decision names the loop it answers, if any
        return event.tenant, event.task_ref, f"loop {event.loop_ref}"
    if hasattr(event, "task_ref"):
        return event.tenant, event.task_ref, f"task {event.task_ref}"
    if isinstance(event, NotificationHold.Event):
        return event.tenant, None, f"owner notices {event.tenant}"
    assert isinstance(event, (ProactiveRun.Started, ProactiveRun.Event, OpenTasks.Forgotten)), (
        f"{type(event).__qualname__} names no subject")
    return event.tenant, RUN_TRAIL, f"proactive run {event.tenant}"


def _plain(value: Any) -> Any:
    """Event field values as JSON-ready values (times as RFC 3339, ids as strings)."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, datetime):
        return format_time(value)
    if isinstance(value, UUID):
        return str(value)
    return value


def _payload(event: Any) -> dict[str, Any]:
    payload = {k: _plain(v) for k, v in vars(event).items() if k not in ("originator_id", "originator_version", "timestamp")}
    # The trail is read by anyone who reads `audit`: no secret in it.
    if isinstance(event, Tenant.Configured):
        payload["settings"] = masked(payload["settings"])
    if isinstance(event, InboundMessage.Received) and event.type == "tenant.configure":
        payload["data"] = masked(payload["data"])
    if isinstance(event, RejectedInput.Recorded) and event.encoding == "utf-8":  # kept before its secrets were masked
        payload["raw"] = masked_line(event.raw.encode()).decode()
    return payload


def _project(conn: Connection, event: Any, position: int) -> None:
    tenant, task_id, subject = _subject(event)
    if isinstance(event, (Routine.Created, RoutineEvent)):
        task_id = routine_task(conn, event)
    summary, reason = DESCRIPTIONS[type(event)](event)
    writes.insert(conn, timeline, {
        "position": position, "tenant": tenant, "task_id": task_id, "subject": subject, "event": type(event).__qualname__,
        "at": format_time(event.timestamp), "summary": summary, "reason": reason, "payload": _payload(event),
    })


name = "timeline"
cost = 8.5  # seconds to rebuild bench/rebuild.py's store alone, to share rebuild work evenly
tables = (timeline, routine_tasks)
handlers = {event_class: _project for event_class in DESCRIPTIONS}


def task_trail(conn: Connection, task_id: str, tenant: str | None = None) -> list[dict[str, Any]]:
    """The task's events in time order: a message dated earlier may be recorded after later ones. What belongs to no
    task is found by its subject (`owner notices <tenant>`, `routine <ref>`); the proactive run's trail is `proactive-run`."""
    rows = _trail(conn, timeline.c.task_id == task_id, tenant)  # indexed; a subject is looked for only when no task
    rows = rows or _trail(conn, and_(timeline.c.task_id.is_(None), timeline.c.subject == task_id), tenant)
    return sorted(rows, key=lambda row: parse_time(row["at"]))  # stable: the same moment keeps the recorded order


def _trail(conn: Connection, which: Any, tenant: str | None) -> list[dict[str, Any]]:
    query = select(timeline).where(which).order_by(timeline.c.position)
    if tenant:
        query = query.where(timeline.c.tenant == tenant)
    return [dict(row._mapping) for row in conn.execute(query)]


def recent(conn: Connection, *, limit: int = 100, tenant: str | None = None) -> list[dict[str, Any]]:
    query = select(timeline).order_by(timeline.c.position.desc()).limit(limit)
    if tenant:
        query = query.where(timeline.c.tenant == tenant)
    return list(reversed([dict(row._mapping) for row in conn.execute(query)]))


def recent_rejections(conn: Connection, *, limit: int = 20) -> list[dict[str, Any]]:
    """The latest messages refused and inputs that never became a message, newest first, with why (the System page)."""
    kinds = [InboundMessage.Rejected.__qualname__, RejectedInput.Recorded.__qualname__]
    query = select(timeline).where(timeline.c.event.in_(kinds)).order_by(timeline.c.position.desc()).limit(limit)
    return [dict(row._mapping) for row in conn.execute(query)]
