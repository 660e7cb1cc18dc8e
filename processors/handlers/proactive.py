"""The tenant's proactive run (seed 000 Part 3): each run first hands the owner what was held (the return digest)
and, with the owner around and no pause in force, proposes from the gaps it finds; then, when the context snapshot
changed or an escalation waits, a synthesis run asks the model (a brain call, processors/handlers/brain_calls.py),
which acts through its tools turn by turn; otherwise (or while a pause or a model-call limit holds it back) a
maintenance run. An answer that arrives once a pause is in force is recorded, and none of its tool calls is done.
"""

from __future__ import annotations

import hashlib
import json
from datetime import datetime
from typing import Any

from loopline.domain import ids
from loopline.domain.proactive_run import FALLBACK_INTERVAL, ProactiveRun
from loopline.domain.proposal_gaps import REPEATED_EXPIRIES, GoalView, RoutineView, TaskView, find_gaps
from loopline.domain.routine import Routine
from loopline.domain.routine_index import RoutineIndex
from loopline.domain.safety_limits import SYNTHESIS_TURNS_PER_RUN
from loopline.domain.synthesis_context import context_delta
from loopline.domain.task import Task
from loopline.domain.timers import TimerKind
from loopline.domain.timeutil import format_time
from loopline.domain.wording import count
from loopline.processors.application import UnitOfWork
from loopline.processors.handlers.loops_and_timers import load_task, set_timer
from loopline.processors.handlers.model_calls import count_brain_call
from loopline.processors.handlers.owner_notices import owner_last_seen, release_held, wake_when_quiet_ends
from loopline.processors.handlers.pausing import current_pause
from loopline.processors.handlers.proposals import propose_from_gaps
from loopline.processors.handlers.synthesis_actions import act
from loopline.processors.handlers.synthesis_snapshot import context_snapshot, context_words, signals_seen
from loopline.processors.messages import BrainAnswered, TimerFired
from loopline.processors.model import synthesis_tools
from loopline.processors.ports import Conversation, Drafter, Prompt


def proactive_run(uow: UnitOfWork, timer: TimerFired, drafter: Drafter) -> str | None:
    run, now = uow.get(timer.target_id, ProactiveRun), timer.now
    if run is None or not run.is_due(now):
        return None
    if run.pending_request is not None:
        if now < run.pending_since + FALLBACK_INTERVAL:
            return None  # the model is still thinking: this run closes when it answers
        # The model never answered: the run closes without it, and this one goes on.
        run.fail_synthesis(request_ref=run.pending_request, error="no answer by the next run", now=now)
        close_run(uow, run, "the model did not answer the synthesis run", now)
    released = release_held(uow, run.tenant, now=now)
    if current_pause(uow, run.tenant) is not None or run.paused:
        # A pause holds every model call of the brain (discovery's debates, the synthesis), and a churned owner's runs
        # keep up maintenance only until the owner is back (seed 000): the context only those read is not taken.
        return _maintenance(uow, run, released, [], now)
    seen = signals_seen(uow, run, now)
    snapshot = context_snapshot(uow, run, now, seen)
    proposed = _discover(uow, run, snapshot, now)
    delta = context_delta(run.last_context_snapshot, snapshot)
    thinks = not delta.is_empty or run.pending_escalations
    if thinks and _count_call(uow, run, now):
        run.snapshot_context(snapshot=snapshot, now=now)
        run.read_signals(position=seen.position, upcoming=seen.upcoming, now=now)
        run.request_synthesis(turn=1, context=context_words(uow, run, delta, now), tool_results=[], now=now)
        # The run closes when the model is done; should it never answer, the next firing closes it.
        set_timer(uow, kind=TimerKind.PROACTIVE_RUN, target_id=run.id, due=now + FALLBACK_INTERVAL, now=now)
        return f"proactive run for {run.tenant}: the model is asked (synthesis){_extras(released, proposed)}"
    return _maintenance(uow, run, released, proposed, now)


def _maintenance(uow: UnitOfWork, run: ProactiveRun, released: list[str], proposed: list[Any], now: datetime) -> str:
    """A run without the model: it hands the waiting escalations to their tasks and schedules the next run."""
    escalations = len(run.pending_escalations)
    summary = (f"woke {count(escalations, 'task')} with its escalation" if escalations
               else "no escalation was waiting for the owner")
    close_run(uow, run, summary, now, mode="maintenance")
    return f"proactive run for {run.tenant}: {summary}{_extras(released, proposed)}"


def _extras(released: list[str], proposed: list[Any]) -> str:
    """What the run's start did besides, in words; nothing when it did nothing."""
    done = ([f"released {count(len(released), 'held notice')}"] if released else []) + (
        [f"offered {count(len(proposed), 'proposal')}"] if proposed else [])
    return f" ({', '.join(done)})" if done else ""


def close_run(uow: UnitOfWork, run: ProactiveRun, summary: str, now: datetime, *, mode: str = "synthesis") -> None:
    """Closes the run: the escalations it handles (a synthesis run those it was shown) wake their tasks unless a tool
    closed them (seed 000 lifecycle 6: the escalation is the context of the task's next wake-up), and the next run's
    timer is filed (the 24 h fallback when none was asked)."""
    handled = run.pending_escalations[:run.escalations_shown] if mode == "synthesis" else run.pending_escalations
    for escalation in handled:
        task = load_task(uow, run.tenant, escalation["task_ref"])
        if not task.is_closed:
            task.wake("escalation", cause="escalation", reason=escalation["reason"], now=now)
    # The owner's last sighting paces the next run (their activity tier, backed off after runs that did nothing).
    run.record_run(mode=mode, summary=summary, escalations_handled=len(handled), now=now,
                   actions_taken=run.actions_this_run, owner_last_seen=owner_last_seen(uow, run.tenant))
    wake_when_quiet_ends(uow, run.tenant, now=now)
    set_timer(uow, kind=TimerKind.PROACTIVE_RUN, target_id=run.id, due=run.next_run_at, now=now)


def _discover(uow: UnitOfWork, run: ProactiveRun, snapshot: dict[str, dict[str, str]], now: datetime) -> list[Any]:
    """Discovery (seed 003 §6): stalled tasks, tasks whose loops expired twice or more, the run's goals without an
    open task (one whose context names the goal, or made from the goal's proposal) and failing routines are the
    gaps; `propose_from_gaps` proposes only while the owner was seen recently."""
    open_tasks = [task for ref in snapshot.get("active_tasks", {})
                  if (task := uow.get(ids.task_id(run.tenant, ref), Task)) is not None]
    tasks = [TaskView(task.ref, task.title, task.stalled_since, task.loops_expired) for task in open_tasks
             if task.stalled_since is not None or task.loops_expired >= REPEATED_EXPIRIES]
    goals = [GoalView(key, text, sum(_serves(task, key) for task in open_tasks)) for key, text in run.goals.items()]
    gaps = find_gaps(tasks=tasks, goals=goals, routines=_failing_routines(uow, run.tenant), now=now)
    if not gaps:
        return []
    return propose_from_gaps(uow, tenant=run.tenant, gaps=gaps, last_seen_at=owner_last_seen(uow, run.tenant), now=now)


def _serves(task: Task, goal_key: str) -> bool:
    return task.context.get("goal") == goal_key or str(task.context.get("proposal", "")).startswith(
        f"gap:goal_without_step:{goal_key}:")


def _failing_routines(uow: UnitOfWork, tenant: str) -> list[RoutineView]:
    """The tenant's routines still alive whose last runs failed (`domain/routine_index.py` lists them)."""
    index = uow.get(ids.routine_index_id(tenant), RoutineIndex)
    routines = [uow.get(ids.routine_id(tenant, ref), Routine) for ref in (index.routines if index else [])]
    return [RoutineView(routine.ref, f"{routine.ref} ({routine.action})", routine.consecutive_failures)
            for routine in routines if routine is not None and routine.consecutive_failures > 0
            and routine.status in ("active", "paused")]


def _count_call(uow: UnitOfWork, run: ProactiveRun, now: datetime) -> bool:
    """Counts one synthesis turn in the tenant's model ledger; False when a limit (or the day's last call, kept for
    the tasks) holds it back: the run does maintenance instead."""
    return count_brain_call(uow, tenant=run.tenant, caller=run.run_ref, calls_so_far=0, now=now) is None


def synthesis_pending(run: ProactiveRun, request_ref: str) -> bool:
    return run.pending_request == request_ref


def synthesis_prompt(reader: UnitOfWork, run: ProactiveRun, requested: Any) -> Conversation:
    """The run's conversation so far, with the synthesis tools; the offline policy reads the snapshot in `facts`."""
    messages = tuple(run.transcript)
    text = synthesis_tools.SYSTEM + json.dumps(messages, sort_keys=True, default=str)
    prompt = Prompt(system=synthesis_tools.SYSTEM, messages=messages,
                    digest=hashlib.sha256(text.encode("utf-8")).hexdigest())
    facts = {"turn": run.turn, "snapshot": run.last_context_snapshot or {},
             "escalations": list(run.pending_escalations), "actions_taken": run.actions_this_run}
    return Conversation(kind="synthesis", tenant=run.tenant, request_ref=requested.request_ref, prompt=prompt,
                        tools=synthesis_tools.TOOLS, facts=facts)


def record_synthesis(uow: UnitOfWork, run: ProactiveRun, answered: BrainAnswered) -> str:
    """The turn's answer and what its tool calls did; the run goes on to the next turn with their results, or closes
    (the model scheduled its next run, called no tool, or used its last turn)."""
    now = max(answered.requested_at, run.modified_on)
    reply = answered.answer
    if isinstance(reply, str):
        run.fail_synthesis(request_ref=answered.request_ref, error=reply, now=now)
        close_run(uow, run, f"the model failed: {reply}", now)
        return f"proactive run for {run.tenant}: the model failed ({reply})"
    run.record_synthesis(request_ref=answered.request_ref, adapter=reply.adapter, model=reply.model,
                         content=list(reply.content), prompt_digest=reply.prompt_digest,
                         input_tokens=reply.input_tokens, output_tokens=reply.output_tokens, now=now)
    calls = reply.tool_calls()
    pause = current_pause(uow, run.tenant)
    if pause is not None:
        # The pause committed while the model was thinking: its answer is kept, but nothing it asked for is done.
        for call in calls:
            run.refuse_action(tool=str(call.get("name", "")), reason=f"{pause.says()}; the call is not carried out",
                              now=now)
        close_run(uow, run, f"paused: {count(len(calls), 'tool call')} of the synthesis not carried out", now)
        return f"proactive run for {run.tenant}: paused, {count(len(calls), 'tool call')} not carried out"
    results = [act(uow, run, call, now).block(str(call.get("id", ""))) for call in calls]
    scheduled = any(call.get("name") == "schedule_next_run" and not result["is_error"]
                    for call, result in zip(calls, results))
    done = f"turn {run.turn}: {count(len(calls), 'tool call')}, {count(run.actions_this_run, 'action')} taken"
    if scheduled or not calls or run.turn >= SYNTHESIS_TURNS_PER_RUN:
        close_run(uow, run, f"synthesis by {reply.adapter} {reply.model}: {count(run.actions_this_run, 'action')} "
                            f"in {count(run.turn, 'turn')}", now)
        return f"proactive run for {run.tenant}: {done}; next run {format_time(run.next_run_at)}"
    if not _count_call(uow, run, now):
        close_run(uow, run, f"a model-call limit ended the synthesis after {count(run.turn, 'turn')}", now)
        return f"proactive run for {run.tenant}: {done}; a model-call limit ended it"
    run.request_synthesis(turn=run.turn + 1, context="", tool_results=results, now=now)
    return f"proactive run for {run.tenant}: {done}; asking turn {run.turn}"
