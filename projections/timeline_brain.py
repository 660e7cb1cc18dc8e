"""The audit's words for the proactive brain's events: runs, the owner's notices, proposals, routines, escalation
questions and the owner's controls on a task.

`projections/timeline.py` takes them into its DESCRIPTIONS; a new brain event gets its line here."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from loopline.domain.notification_hold import NotificationHold
from loopline.domain.open_tasks import OpenTasks
from loopline.domain.proactive_run import ProactiveRun
from loopline.domain.proposal import Proposal, ProposalBook
from loopline.domain.question import Question
from loopline.domain.question_ladder import lettered
from loopline.domain.routine import Routine
from loopline.domain.task_control import TaskControl
from loopline.domain.timeutil import format_time
from loopline.domain.wording import when

BRAIN_DESCRIPTIONS: dict[type, Callable[[Any], tuple[str, str | None]]] = {
    ProactiveRun.Started: lambda e: (f"proactive run started; first run at {format_time(e.next_run_at)}", e.next_run_reason),
    ProactiveRun.NextRunScheduled: lambda e: (
        f"next run at {format_time(e.next_run_at)} (asked {format_time(e.requested_at)}, clamped to [30 min, 7 days])",
        e.reason,
    ),
    ProactiveRun.ReturnRunScheduled: lambda e: (
        f"the owner is back (last seen {format_time(e.last_seen_at)}): run now for the return digest", None,
    ),
    NotificationHold.Sent: lambda e: (f"owner notified: {e.text}", None),
    NotificationHold.Skipped: lambda e: (f"owner not notified again: {e.text}", e.reason),
    NotificationHold.Held: lambda e: (f"owner notice held: {e.text}", e.reason),
    NotificationHold.Dropped: lambda e: (f"held owner notice dropped: {e.text}", "the hold keeps at most 50"),
    NotificationHold.DigestSent: lambda e: (
        f"digest of {len(e.items)} held notice(s)", f"{e.discarded} held notice(s) left out as stale or repeated",
    ),
    ProactiveRun.Rescued: lambda e: (
        f"rescued by the supervisor: the run was due {format_time(e.stale_since)}, more than 48 h ago; it runs now", None,
    ),
    ProactiveRun.EscalationQueued: lambda e: (f"escalation queued for task {e.task_ref}", e.reason),
    ProactiveRun.GoalSet: lambda e: (f"goal {e.key} {'set' if e.active else 'dropped'}", e.goal),
    ProactiveRun.MemoryNoted: lambda e: (f"memory {e.key} noted", e.note),
    ProactiveRun.ContextSnapshotted: lambda e: (
        "synthesis context taken: " + ", ".join(f"{len(items)} {section}" for section, items in e.snapshot.items()), None,
    ),
    ProactiveRun.SignalsRead: lambda e: (
        f"synthesis read the tenant's signals up to log position {e.position}",
        f"{len(e.upcoming)} upcoming calendar event(s) known" if e.upcoming else None,
    ),
    ProactiveRun.SynthesisRequested: lambda e: (
        f"synthesis turn {e.turn} asks the model ({e.request_ref})",
        f"{len(e.tool_results)} tool result(s) answered" if e.tool_results else None,
    ),
    ProactiveRun.SynthesisAnswered: lambda e: (
        f"synthesis answered by {e.adapter} {e.model}: " + (", ".join(
            block["name"] for block in e.content if block.get("type") == "tool_use") or "no tool call"),
        f"{e.input_tokens} input / {e.output_tokens} output tokens, prompt {e.prompt_digest[:12]}",
    ),
    ProactiveRun.SynthesisFailed: lambda e: (f"synthesis turn {e.request_ref} got no answer", e.error),
    OpenTasks.Noted: lambda e: (f"task {e.task_ref} noted for the proactive run's context", None),
    OpenTasks.Forgotten: lambda e: (f"{len(e.task_refs)} closed task(s) left out of the proactive run's context", None),
    ProactiveRun.ActionTaken: lambda e: (f"synthesis action {e.tool}", e.detail),
    ProactiveRun.ActionRefused: lambda e: (f"synthesis action {e.tool} refused", e.reason),
    ProactiveRun.Paced: lambda e: (
        f"the owner is {e.tier}; {e.empty_runs_in_a_row} run(s) in a row took no action", None,
    ),
    ProactiveRun.RunRecorded: lambda e: (
        f"{e.mode} run: {e.summary}; next at {format_time(e.next_run_at)}", e.next_run_reason
    ),
    Proposal.Proposed: lambda e: (f"proposed '{e.title}' ({e.impact} impact, {e.theme}); debate starts", e.summary),
    Proposal.Avoided: lambda e: (
        f"avoided '{e.title}': like proposal {e.similar_to}, rejected {e.rejection_type}", e.summary,
    ),
    Proposal.DebateRoundRecorded: lambda e: (
        f"debate round {e.round_number}: {e.verdict} -> {e.outcome}" + (f" ({e.flag})" if e.flag else ""),
        f"proposer: {e.proposer} | critic: {e.critic} | arbiter: {e.arbiter}",
    ),
    Proposal.DebateRequested: lambda e: (
        f"debate round {e.round_number}: the {e.role} asked" + (f" (try {e.attempt})" if e.attempt > 1 else ""), None,
    ),
    Proposal.DebateAnswered: lambda e: (
        f"the {e.role} answered" + (f": {e.verdict}" if e.verdict else "") + f" ({e.adapter} {e.model})", e.text,
    ),
    Proposal.DebateAnswerUnused: lambda e: (
        f"the {e.role} answered ({e.adapter} {e.model}) but its answer could not be recorded",
        f"{e.input_tokens} input / {e.output_tokens} output tokens, prompt {e.prompt_digest[:12]}",
    ),
    Proposal.DebateCallFailed: lambda e: (f"the {e.role}'s model call failed (try {e.attempt})", e.error),
    Proposal.DebateAbandoned: lambda e: ("debate abandoned: the gap is skipped", e.reason),
    Proposal.Shown: lambda e: (f"shown to the owner in batch {e.batch_ref} as item {e.position}", None),
    Proposal.Approved: lambda e: (f"owner approved the proposal: it became task {e.task_ref}", None),
    Proposal.Rejected: lambda e: (f"owner rejected the proposal ({e.rejection_type})", e.reason or None),
    ProposalBook.DebateOpened: lambda e: (f"debate opened on proposal {e.proposal_ref}", None),
    ProposalBook.DebateSettled: lambda e: (
        f"debate on proposal {e.proposal_ref} settled: " + ("it goes to the owner" if e.survived else "dropped"), None,
    ),
    ProposalBook.BatchesShown: lambda e: (
        f"{sum(map(len, e.batches))} proposal(s) shown to the owner in {len(e.batches)} batch(es)", None,
    ),
    Routine.Created: lambda e: (
        f"routine {e.ref}: {e.kind} {e.action} for " + (f"task {e.owner_task_ref}" if e.owner_task_ref else "the tenant")
        + (f"; the first run {when(e.next_run_at)}" if e.next_run_at else f"; on signals {e.signal_pattern}"), None,
    ),
    Routine.RunRecorded: lambda e: (
        f"routine run {e.outcome}" + ("; the owner is told" if e.notify_owner else "")
        + (f"; the next {when(e.next_run_at)}" if e.next_run_at else ""), e.error or e.output[:200],
    ),
    Routine.Paused: lambda e: ("routine paused", e.reason),
    Routine.Resumed: lambda e: ("routine resumed" + (f"; the next run {when(e.next_run_at)}" if e.next_run_at else ""),
                                None),
    Routine.RunRequested: lambda e: ("routine due now", e.reason),
    Routine.Finished: lambda e: ("routine done", e.reason),
    Routine.Disabled: lambda e: ("routine disabled", e.reason),
    Routine.Adopted: lambda e: (f"routine adopted by task {e.task_ref}: its outputs go into the task's memory"
                                + (f"; the next run {when(e.next_run_at)}" if e.next_run_at else ""), None),
    Routine.Dispatched: lambda e: (f"routine run due for its external runner, to report by {when(e.report_due_at)}",
                                   None),
    Routine.RunHeld: lambda e: ("routine run held: its report is not due while paused; it runs again at resume",
                                e.reason),
    Routine.HistoryCompacted: lambda e: (f"routine history compacted: {e.dropped} run(s) before {when(e.before)}", None),
    Question.Asked: lambda e: (
        f"question {e.question_ref} asked by {e.asker}: {e.question}"
        + "".join(f" {option}" for option in lettered(e.options)),
        f"stuck on {e.stuck_on}; {len(e.blocked_tasks)} task(s) blocked",
    ),
    Question.Climbed: lambda e: (f"question {e.question_ref} unanswered: ladder rung {e.rung + 1}, {e.action}",
                                 f"urgency {e.urgency}"),
    Question.Answered: lambda e: (
        f"question {e.question_ref} answered" + (f": {e.option}" if e.option else " in free text")
        + ("; logged for review" if e.for_review else ""), e.text,
    ),
    TaskControl.Paused: lambda e: (f"task paused by {e.by}: it sends nothing and asks no model", e.reason),
    TaskControl.Resumed: lambda e: (f"task resumed by {e.by}: {len(e.released)} held step(s) go on", e.reason),
    TaskControl.WorkHeld: lambda e: (f"held while the task is paused: its {e.work.get('timer') or 'decision'}", None),
    TaskControl.RunRequested: lambda e: (f"run-now by {e.by}: its next step at the next tick", e.reason),
}
