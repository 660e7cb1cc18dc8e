"""The ProactiveRun aggregate: one per tenant, the heartbeat that never dies: it always has a next run."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from eventsourcing.domain import Aggregate

from loopline.domain.activity_tier import Tier, is_stale, paced_interval, tier_of
from loopline.domain.base import TenantEvent, LooplineAggregate
from loopline.domain.safety_limits import SYNTHESIS_ACTIONS_PER_RUN
from loopline.domain.synthesis_context import ContextDelta, Snapshot, context_delta

MIN_INTERVAL = timedelta(minutes=30)
MAX_INTERVAL = timedelta(days=7)
FALLBACK_INTERVAL = timedelta(hours=24)
RETURN_REASON = "return digest: the owner is back"
RESCUE_REASON = "rescued by the supervisor: more than 48 h past its wake-up"

ACTION_TOOLS = ("create_task", "escalate_task", "notify", "trigger_workflow", "send_brief", "decide_escalation")
"""The synthesis tools that spend the run's action budget; `schedule_next_run` is free, it is the way out."""


def clamp_next_run(requested: datetime, now: datetime) -> datetime:
    """Bounds a requested wake-up to [now + 30 min, now + 7 days], silently."""
    return min(max(requested, now + MIN_INTERVAL), now + MAX_INTERVAL)


class ProactiveRun(LooplineAggregate):
    OWNER = {"tenant": "tenant"}

    class Started(Aggregate.Created):
        tenant: str
        next_run_at: datetime
        next_run_reason: str

    class NextRunScheduled(TenantEvent):
        requested_at: datetime
        next_run_at: datetime
        reason: str

        def apply(self, run: ProactiveRun) -> None:
            run._next_run(self.next_run_at, self.reason)

    class ReturnRunScheduled(TenantEvent):
        """The owner came back after a day or more away: the next run is now, not the scheduled one (seed 000)."""

        last_seen_at: datetime

        def apply(self, run: ProactiveRun) -> None:
            run._next_run(self.timestamp, RETURN_REASON)

    class Rescued(TenantEvent):
        """The supervisor found the run more than 48 h past its wake-up (its timer lost or parked): it runs now."""

        stale_since: datetime

        def apply(self, run: ProactiveRun) -> None:
            run._next_run(self.timestamp, RESCUE_REASON)

    class EscalationQueued(TenantEvent):
        task_ref: str
        loop_ref: str | None
        reason: str

        def apply(self, run: ProactiveRun) -> None:
            run.pending_escalations.append({"task_ref": self.task_ref, "loop_ref": self.loop_ref, "reason": self.reason})

    class ActionTaken(TenantEvent):
        tool: str
        detail: str

        def apply(self, run: ProactiveRun) -> None:
            run.actions_this_run += 1

    class ActionRefused(TenantEvent):
        tool: str
        reason: str

    class GoalSet(TenantEvent):
        key: str
        goal: str
        active: bool

        def apply(self, run: ProactiveRun) -> None:
            run.goals.pop(self.key, None)
            if self.active:
                run.goals[self.key] = self.goal

    class MemoryNoted(TenantEvent):
        key: str
        note: str

        def apply(self, run: ProactiveRun) -> None:
            run.memory.pop(self.key, None)
            run.memory[self.key] = self.note

    class ContextSnapshotted(TenantEvent):
        snapshot: dict[str, dict[str, str]]

        def apply(self, run: ProactiveRun) -> None:
            run.last_context_snapshot = self.snapshot

    class SignalsRead(TenantEvent):
        """A synthesis run read its tenant's signals in the event log up to `position`; `upcoming` is the calendar
        events not yet started that it knows of, by event id (`starts_at` as text and the line it shows)."""

        position: int
        upcoming: dict[str, dict[str, str]]

        def apply(self, run: ProactiveRun) -> None:
            run.signals_position = self.position
            run.upcoming_events = self.upcoming

    class Paced(TenantEvent):
        """How a finished run set the pace (recorded just before its RunRecorded): the owner's activity tier and the
        runs in a row that took no action (every 5 double the interval; an action resets the count)."""

        tier: str
        empty_runs_in_a_row: int

        def apply(self, run: ProactiveRun) -> None:
            run.tier = self.tier
            run.empty_runs_in_a_row = self.empty_runs_in_a_row
    class SynthesisRequested(TenantEvent):
        """One turn of a synthesis run asks the model (`kind` names the call kind of processors/handlers/brain_calls.py);
        `tool_results` answer the previous turn's tool calls, `context` is the first turn's snapshot in words."""

        request_ref: str
        kind: str
        turn: int
        context: str
        tool_results: list[dict[str, Any]]

        def apply(self, run: ProactiveRun) -> None:
            run.pending_request = self.request_ref
            run.pending_since = self.timestamp
            run.turn = self.turn
            if self.turn == 1:
                run.transcript = [{"role": "user", "content": self.context}]
                run.escalations_shown = len(run.pending_escalations)
            else:
                run.transcript.append({"role": "user", "content": self.tool_results})

    class SynthesisAnswered(TenantEvent):
        """The model's answer to one turn: its content blocks (text, tool calls), who answered, and at what cost."""

        request_ref: str
        adapter: str
        model: str
        content: list[dict[str, Any]]
        prompt_digest: str
        input_tokens: int
        output_tokens: int

        def apply(self, run: ProactiveRun) -> None:
            run.pending_request = None
            run.transcript.append({"role": "assistant", "content": self.content})

    class SynthesisFailed(TenantEvent):
        request_ref: str
        error: str

        def apply(self, run: ProactiveRun) -> None:
            run.pending_request = None

    class RunRecorded(TenantEvent):
        mode: str
        summary: str
        escalations_handled: int
        next_run_at: datetime
        next_run_reason: str
        fallback_used: bool

        def apply(self, run: ProactiveRun) -> None:
            run.last_run_at = self.timestamp
            run.last_run_summary = self.summary
            run.runs += 1
            run.actions_this_run = 0
            run.pending_request = None
            run.transcript = []
            del run.pending_escalations[: self.escalations_handled]
            run._next_run(self.next_run_at, self.next_run_reason)

    def __init__(self, tenant: str, next_run_at: datetime, next_run_reason: str) -> None:
        self.tenant = tenant
        self.next_run_at = next_run_at
        self.next_run_reason = next_run_reason
        self.last_run_at: datetime | None = None
        self.last_run_summary: str | None = None
        self.runs = 0
        self.pending_escalations: list[dict[str, Any]] = []
        self.actions_this_run = 0
        self.last_context_snapshot: dict[str, dict[str, str]] | None = None
        """What the last synthesis run was shown; the next one is shown the delta against it."""
        self.signals_position = 0
        """The event-log position up to which the last synthesis run read its tenant's signals."""
        self.upcoming_events: dict[str, dict[str, str]] = {}
        """Calendar events seen in signals and not started at the last synthesis run, by event id."""
        self.goals: dict[str, str] = {}
        """The tenant's active goals by key (`tenant.goal`), for the synthesis context."""
        self.memory: dict[str, str] = {}
        """The tenant's memory highlights by key (`tenant.memory`), the latest noted last."""
        self.tier: str | None = None
        """The owner's activity tier at the last paced run (None before the owner was ever seen)."""
        self.empty_runs_in_a_row = 0
        self.pending_request: str | None = None
        """The synthesis turn waiting for the model's answer (its request ref)."""
        self.pending_since = next_run_at
        self.escalations_shown = 0
        """The escalations the open synthesis run was shown: its close handles those, later ones wait for the next."""
        self.turn = 0
        self.transcript: list[dict[str, Any]] = []
        """The open synthesis run's messages so far, as the Messages API takes them."""

    @property
    def paused(self) -> bool:
        """A churned owner's runs are paused: a weekly look only, until the owner's return runs it at once."""
        return self.tier == Tier.CHURNED.value

    def _next_run(self, at: datetime, reason: str) -> None:
        """Where the next run and its reason change: scheduled, or set by a finished run."""
        self.next_run_at = at
        self.next_run_reason = reason

    @classmethod
    def start(cls, *, id: Any, tenant: str, now: datetime) -> ProactiveRun:  # noqa: A002
        return cls._create(
            cls.Started, id=id, timestamp=now, tenant=tenant, next_run_at=now + MIN_INTERVAL,
            next_run_reason="first maintenance run",
        )

    def schedule_next(self, *, requested_at: datetime, reason: str, now: datetime) -> None:
        self.trigger_event(
            self.NextRunScheduled, timestamp=now, requested_at=requested_at,
            next_run_at=clamp_next_run(requested_at, now), reason=reason,
        )

    def run_on_return(self, *, last_seen_at: datetime, now: datetime) -> None:
        self.trigger_event(self.ReturnRunScheduled, timestamp=now, last_seen_at=last_seen_at)

    def rescue(self, *, now: datetime) -> bool:
        """Makes a run more than 48 h past its wake-up due now; False (nothing recorded) for a run that is not."""
        # A run waiting for its model wakes (and closes without it) a day after it asked, when no answer came.
        wake_up = self.next_run_at if self.pending_request is None else self.pending_since + FALLBACK_INTERVAL
        if not is_stale(wake_up, now):
            return False
        self.trigger_event(self.Rescued, timestamp=now, stale_since=self.next_run_at)
        return True

    def queue_escalation(self, *, task_ref: str, loop_ref: str | None, reason: str, now: datetime) -> None:
        self.trigger_event(self.EscalationQueued, timestamp=now, task_ref=task_ref, loop_ref=loop_ref, reason=reason)

    def set_goal(self, *, key: str, goal: str, active: bool, now: datetime) -> None:
        self.trigger_event(self.GoalSet, timestamp=now, key=key, goal=goal, active=active)

    def note_memory(self, *, key: str, note: str, now: datetime) -> None:
        self.trigger_event(self.MemoryNoted, timestamp=now, key=key, note=note)

    def snapshot_context(self, *, snapshot: Snapshot, now: datetime) -> ContextDelta:
        """Stores `snapshot` as the run's last context and answers what changed since the one before."""
        delta = context_delta(self.last_context_snapshot, snapshot)
        self.trigger_event(self.ContextSnapshotted, timestamp=now,
                           snapshot={section: dict(items) for section, items in snapshot.items()})
        return delta

    def read_signals(self, *, position: int, upcoming: dict[str, dict[str, str]], now: datetime) -> None:
        self.trigger_event(self.SignalsRead, timestamp=now, position=position,
                           upcoming={key: dict(event) for key, event in upcoming.items()})

    def take_action(self, *, tool: str, detail: str, now: datetime) -> str | None:
        """Spends one of the run's actions on `tool`; past the budget, the refusal the model is answered with."""
        reason = self.budget_refusal(tool)
        if reason is not None:
            self.refuse_action(tool=tool, reason=reason, now=now)
            return reason
        self.trigger_event(self.ActionTaken, timestamp=now, tool=tool, detail=detail)
        return None

    def budget_refusal(self, tool: str) -> str | None:
        """Why `tool` may not be taken (the run's budget is spent), without recording anything; None when it may."""
        if tool not in ACTION_TOOLS:
            raise ValueError(f"tool: {tool!r} is not an action; the actions are {', '.join(ACTION_TOOLS)}")
        if self.actions_this_run >= SYNTHESIS_ACTIONS_PER_RUN:
            return (f"action budget spent: this run already took {SYNTHESIS_ACTIONS_PER_RUN} actions; "
                    "call schedule_next_run and do this in the next run")
        return None

    def refuse_action(self, *, tool: str, reason: str, now: datetime) -> None:
        """Records a tool call not carried out (the budget, or the domain refused it): it spends nothing."""
        self.trigger_event(self.ActionRefused, timestamp=now, tool=tool, reason=reason)

    @property
    def run_ref(self) -> str:
        """The current run's ref: what its tasks' provenance and its requests name."""
        return f"synthesis-{self.runs + 1}"

    def request_synthesis(self, *, turn: int, context: str, tool_results: list[dict[str, Any]], now: datetime) -> str:
        request_ref = f"{self.run_ref}/turn-{turn}"
        self.trigger_event(self.SynthesisRequested, timestamp=now, request_ref=request_ref, kind="synthesis", turn=turn,
                           context=context, tool_results=tool_results)
        return request_ref

    def record_synthesis(self, *, request_ref: str, adapter: str, model: str, content: list[dict[str, Any]],
                         prompt_digest: str, input_tokens: int, output_tokens: int, now: datetime) -> None:
        self.trigger_event(self.SynthesisAnswered, timestamp=now, request_ref=request_ref, adapter=adapter, model=model,
                           content=content, prompt_digest=prompt_digest, input_tokens=input_tokens,
                           output_tokens=output_tokens)

    def fail_synthesis(self, *, request_ref: str, error: str, now: datetime) -> None:
        self.trigger_event(self.SynthesisFailed, timestamp=now, request_ref=request_ref, error=error)

    def is_due(self, now: datetime) -> bool:
        return self.next_run_at <= now

    def record_run(self, *, mode: str, summary: str, escalations_handled: int, now: datetime, actions_taken: int = 0,
                   owner_last_seen: datetime | None = None) -> None:
        """Records a finished run. With the owner seen once, the next run follows their tier's cadence (doubled per 5
        runs in a row without an action; a churned owner's runs are paused) unless the run asked for one; else, with
        no later wake-up asked for, the 24 h fallback is scheduled."""
        fallback = self.next_run_at <= now
        next_run_at, reason = (now + FALLBACK_INTERVAL, "fallback: no next run was asked for") if fallback else (
            self.next_run_at, self.next_run_reason)
        if owner_last_seen is not None:
            tier, empty = tier_of(owner_last_seen, now), 0 if actions_taken else self.empty_runs_in_a_row + 1
            self.trigger_event(self.Paced, timestamp=now, tier=tier.value, empty_runs_in_a_row=empty)
            if fallback or tier is Tier.CHURNED:
                interval, reason = paced_interval(tier, empty)
                next_run_at, fallback = clamp_next_run(now + interval, now), False
        self.trigger_event(
            self.RunRecorded, timestamp=now, mode=mode, summary=summary, escalations_handled=escalations_handled,
            next_run_at=next_run_at, next_run_reason=reason, fallback_used=fallback,
        )
