"""Routines (seed 003, issue 21 item 4): `routine.create`, `routine.adopt`, `routine.pause`, `routine.resume`,
`routine.run_now`, `routine.disable`, and `routine.report`, by which an external runner records a run; a successful
run's output goes into the owning task's workflow memory.

Both kinds run on the ticks. A task's routine asks its task for its named action: an action needs a task (its
approval, its delivery and its budgets are the task's). A tenant's routine has no task, so its action is always
an external runner's: the tick dispatches the due run (`Routine.Dispatched`) and a run not reported within the
routine's timeout counts as failed, so a routine nobody runs pauses after two. A pause of the tenant, of Loopline
or of the owning task holds a due run (processors/handlers/pausing.py) and the resume hands it back; a report that
falls due while paused is not a failure, the run is dispatched again at resume."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any, Literal
from uuid import UUID

from pydantic import Field

from loopline.domain import ids
from loopline.domain.actions import action_profile, check_params
from loopline.domain.errors import DomainError
from loopline.domain.pause import held_routine
from loopline.domain.routine import Routine
from loopline.domain.routine_index import RoutineIndex
from loopline.domain.safety_limits import ROUTINE_MIN_INTERVAL_MINUTES, ROUTINES_PER_TENANT
from loopline.domain.task import Task
from loopline.domain.timers import TimerKind
from loopline.domain.wording import when
from loopline.processors.application import UnitOfWork
from loopline.processors.handlers.command_fields import Id, ShortText, Strict, Text, Timestamp
from loopline.processors.handlers.actions import ask_for_action
from loopline.processors.handlers.loops_and_timers import load_task, set_timer
from loopline.processors.handlers.owner_notices import notify_owner
from loopline.processors.handlers.pausing import hold
from loopline.processors.handlers.tenants import tenant_settings
from loopline.processors.messages import Message


class RoutineCreate(Strict):
    routine_id: Id = Field(description="the routine's id; sent again, it changes nothing")
    action: ShortText = Field(description="the named action each run performs (see the action registry); its safety "
                              "profile decides whether a run waits for the owner")
    params: dict[str, Any] = Field(default_factory=dict, description="the action's fields (see [Actions and their "
                                   "fields](#actions-and-their-fields)), the same at every run")
    kind: Literal["scheduled", "event", "oneshot"] = Field(description="`scheduled`: every interval or on a cron; "
                                                           "`event`: on a signal matching signal_pattern; `oneshot`: once")
    task_id: Id | None = Field(default=None, description="the open task that owns it: its outputs go into the task's "
                               "workflow memory and closing the task disables it; left out, the tenant owns it")
    interval_minutes: int | None = Field(default=None, ge=ROUTINE_MIN_INTERVAL_MINUTES,
                                         description="with `scheduled`: minutes between runs")
    cron: Text | None = Field(default=None, description="with `scheduled`, instead of interval_minutes: five cron "
                              "fields in the tenant's time zone, e.g. `0 8 * * 1`")
    signal_pattern: ShortText | None = Field(default=None, description="with `event`: the signal types that trigger "
                                             "it, shell-style, e.g. `github.*`")
    run_at: Timestamp | None = Field(default=None, description="with `oneshot`: when it runs (default: now)")
    max_runs: int | None = Field(default=None, ge=1, description="after this many runs it is done (default: no limit)")
    timeout_minutes: int = Field(default=5, ge=1, le=60, description="a run reported as lasting longer failed")
    notify: Literal["on_change", "always", "on_failure", "never"] = Field(
        default="on_change", description="when the owner hears of a run: `on_change` when its result differs from "
        "the last successful one")


class RoutineControl(Strict):
    routine_id: Id = Field(description="a routine `routine.create` made")
    reason: Text = Field(description="why, in the trail")


class RoutineAdopt(Strict):
    routine_id: Id = Field(description="a routine the tenant owns")
    task_id: Id = Field(description="the open task that takes it over: the routine's outputs then go into its workflow "
                        "memory and closing it disables the routine")


class RoutineResume(Strict):
    routine_id: Id = Field(description="a paused routine; its failure count starts again from zero")


class RoutineReport(Strict):
    routine_id: Id = Field(description="the routine whose action was run")
    duration_seconds: int = Field(ge=0, description="how long the run took, up to the message's time (when it ended); "
                                  "longer than the routine's timeout, it failed")
    outcome: Literal["success", "failure"] = Field(description="whether the action did its work")
    output: Text = Field(description="the run's result: compared for `on_change`, and stored in the owning task's "
                         "workflow memory when it succeeded")
    error: ShortText | None = Field(default=None, description="with `failure`: what went wrong")


class UnknownRoutine(DomainError):
    """A routine the tenant does not have."""


class TooManyRoutines(DomainError):
    """A tenant at its `routines_per_tenant` limit asked for one more."""


def load_routine(uow: UnitOfWork, tenant: str, ref: str) -> Routine:
    routine = uow.get(ids.routine_id(tenant, ref), Routine)
    if routine is None:
        raise UnknownRoutine(f"routine_id: tenant {tenant!r} has no routine {ref!r}; create it with routine.create")
    return routine


def create_routine(uow: UnitOfWork, msg: Message, cmd: RoutineCreate) -> str:
    """A new routine, owned by an open task or by the tenant; sending the same id again changes nothing."""
    routine_uuid = ids.routine_id(msg.tenant, cmd.routine_id)
    if uow.get(routine_uuid, Routine) is not None:
        return f"routine {cmd.routine_id} already exists; nothing changed (give a new routine_id for another routine)"
    params = check_params(action_profile(cmd.action), cmd.params)
    if cmd.task_id is not None:
        load_task(uow, msg.tenant, cmd.task_id).check_open()
    index_id = ids.routine_index_id(msg.tenant)
    index = uow.get_or_create(index_id, RoutineIndex, lambda: RoutineIndex.start(id=index_id, tenant=msg.tenant,
                                                                                 now=msg.at))
    running = [ref for ref in index.routines if load_routine(uow, msg.tenant, ref).status not in ("disabled", "done")]
    if len(running) >= ROUTINES_PER_TENANT:
        raise TooManyRoutines(f"routine_id: tenant {msg.tenant!r} has {len(running)} routines, its limit "
                              f"(routines_per_tenant); disable one with routine.disable first")
    routine = uow.add(Routine.create(
        id=routine_uuid, tenant=msg.tenant, ref=cmd.routine_id, action=cmd.action, params=params, kind=cmd.kind,
        now=msg.at,
        owner_task_ref=cmd.task_id, interval_minutes=cmd.interval_minutes, cron=cmd.cron,
        zone=tenant_settings(uow, msg.tenant).timezone, signal_pattern=cmd.signal_pattern, run_at=cmd.run_at,
        max_runs=cmd.max_runs, timeout=timedelta(minutes=cmd.timeout_minutes), notify=cmd.notify,
    ))
    _schedule(uow, routine, msg.at)
    index.register(routine_ref=cmd.routine_id, now=msg.at)
    if cmd.signal_pattern is not None and cmd.kind == "event":
        index.listen(routine_ref=cmd.routine_id, signal_pattern=cmd.signal_pattern, now=msg.at)
    if cmd.task_id is not None:
        index.own(routine_ref=cmd.routine_id, task_ref=cmd.task_id, now=msg.at)
    first = f"first run {when(routine.next_run_at)}" if routine.next_run_at else f"runs on {cmd.signal_pattern}"
    return f"routine {cmd.routine_id} ({cmd.kind}, {cmd.action}): {first}"


def adopt_routine(uow: UnitOfWork, msg: Message, cmd: RoutineAdopt) -> str:
    """A task takes over a tenant's routine (seed 000 Phase 2): from its next run on, the task runs its action."""
    routine = load_routine(uow, msg.tenant, cmd.routine_id)
    task = load_task(uow, msg.tenant, cmd.task_id)
    task.check_open()
    routine.adopt(task_ref=task.ref, now=msg.at)
    index = uow.get(ids.routine_index_id(msg.tenant), RoutineIndex)
    assert index is not None, f"routine {routine.ref} was created without its tenant's routine index"
    index.own(routine_ref=routine.ref, task_ref=task.ref, now=msg.at)
    _schedule(uow, routine, msg.at)
    return f"routine {routine.ref} adopted by {task.ref}; its outputs go into the task's memory"


def pause_routine(uow: UnitOfWork, msg: Message, cmd: RoutineControl) -> str:
    load_routine(uow, msg.tenant, cmd.routine_id).pause(reason=cmd.reason, now=msg.at)
    return f"routine {cmd.routine_id} paused"


def resume_routine(uow: UnitOfWork, msg: Message, cmd: RoutineResume) -> str:
    routine = load_routine(uow, msg.tenant, cmd.routine_id)
    routine.resume(now=msg.at)
    _schedule(uow, routine, msg.at)
    return f"routine {cmd.routine_id} resumed" + (f", next run {when(routine.next_run_at)}" if routine.next_run_at else "")


def run_routine_now(uow: UnitOfWork, msg: Message, cmd: RoutineControl) -> str:
    request_run(uow, load_routine(uow, msg.tenant, cmd.routine_id), reason=cmd.reason, now=msg.at)
    return f"routine {cmd.routine_id} is due now"


def request_run(uow: UnitOfWork, routine: Routine, *, reason: str, now: datetime) -> None:
    """Makes an active routine due now (the owner's run-now, a matching signal, the brain's trigger_workflow): a task's
    runs at the next tick, a tenant's is dispatched to its runner then."""
    routine.run_now(reason=reason, now=now)
    _schedule(uow, routine, now)


def disable_routine(uow: UnitOfWork, msg: Message, cmd: RoutineControl) -> str:
    routine = load_routine(uow, msg.tenant, cmd.routine_id)
    routine.disable(reason=cmd.reason, now=msg.at)
    return f"routine {cmd.routine_id} is {routine.status}"


def report_routine_run(uow: UnitOfWork, msg: Message, cmd: RoutineReport) -> str:
    return record_reported_run(uow, msg, load_routine(uow, msg.tenant, cmd.routine_id),
                               duration=timedelta(seconds=cmd.duration_seconds), outcome=cmd.outcome,
                               output=cmd.output, error=cmd.error)


def record_reported_run(uow: UnitOfWork, msg: Message, routine: Routine, *, duration: timedelta, outcome: str,
                        output: str, error: str | None, workflow: str | None = None) -> str:
    """Records a run an external runner finished; a success stores its output in the owning task's memory (under
    `workflow`, else the routine's name). A run of a closed task's routine (disabled when the task closed) is not
    recorded."""
    owner = uow.get(ids.task_id(msg.tenant, routine.owner_task_ref), Task) if routine.owner_task_ref else None
    if owner is not None and owner.is_closed:
        routine.disable(reason=f"its task {owner.ref} is closed", now=msg.at)
        return f"routine {routine.ref} is {routine.status}: its task {owner.ref} is closed; the run is not recorded"
    return _record(uow, routine, owner, started_at=msg.at - duration, outcome=outcome, output=output, error=error,
                   now=msg.at, workflow=workflow)


def trigger_routines(uow: UnitOfWork, msg: Message) -> None:
    """A signal makes every active event routine of its tenant that listens for its type due at once."""
    index = uow.get(ids.routine_index_id(msg.tenant), RoutineIndex)
    for ref in index.listening(msg.type) if index is not None else []:
        routine = load_routine(uow, msg.tenant, ref)
        if routine.matches(msg.type):
            request_run(uow, routine, reason=f"signal {msg.type} ({msg.ref})", now=msg.at)


def fire_routine(uow: UnitOfWork, routine_id: UUID, now: datetime) -> str | None:
    """A due task-owned routine asks its task for its action (held for the owner when its safety profile says so); a
    refused request is a failed run. A tenant's due routine is dispatched to its runner, and its run fails when the
    report is overdue. A pause in force for its tenant or task holds the run until it resumes. A timer fired again
    finds the routine not due and does nothing."""
    routine = uow.get(routine_id, Routine)
    if routine is None or not (routine.is_due(now) or routine.report_overdue(now)):
        return None
    held = _hold_while_paused(uow, routine, now)
    if held is not None:
        return held
    if routine.owner_task_ref is None:
        return _dispatch_or_time_out(uow, routine, now)
    owner = load_task(uow, routine.tenant, routine.owner_task_ref)  # open: its closing disabled its routines
    key = f"routine:{routine.ref}:{routine.run_count + 1}"
    try:
        answer = ask_for_action(uow, owner, action=routine.action, params=routine.params, key=key,
                                requested_by="loopline", now=now)
    except DomainError as refused:
        return _record(uow, routine, owner, started_at=now, outcome="failure", output=str(refused), error=str(refused),
                       now=now)
    # The key names the run; without its number, two runs that did the same read the same, as on_change compares.
    output = str(answer).replace(key, f"routine:{routine.ref}")
    return _record(uow, routine, owner, started_at=now, outcome="success", output=output, error=None, now=now)


def _hold_while_paused(uow: UnitOfWork, routine: Routine, now: datetime) -> str | None:
    """A pause in force for the routine's tenant (or its task) holds the run, to fire again at resume; a dispatched
    run whose report falls due while paused did not fail (its runner honours the pause) and is dispatched again
    then. None when not paused."""
    pause = hold(uow, routine.tenant, held_routine(routine.id, routine.ref, routine.owner_task_ref), now)
    if pause is None:
        return None
    if routine.report_overdue(now):
        routine.hold_run(reason=pause.says(), now=now)
    return f"routine {routine.ref}: held, {pause.says()}"


def _dispatch_or_time_out(uow: UnitOfWork, routine: Routine, now: datetime) -> str | None:
    if routine.report_overdue(now):
        assert routine.report_due_at is not None, "an overdue report has a due time"
        missing = f"no runner reported the run within {routine.timeout_seconds} s (routine.report or workflow.output)"
        return _record(uow, routine, None, started_at=routine.report_due_at - timedelta(seconds=routine.timeout_seconds),
                       outcome="failure", output=missing, error=missing, now=now)
    if not routine.is_due(now):
        return None
    routine.dispatch(now=now)
    assert routine.report_due_at is not None, "a dispatched run has a report due time"
    set_timer(uow, kind=TimerKind.ROUTINE, target_id=routine.id, due=routine.report_due_at, now=now)
    return f"routine {routine.ref}: run {routine.run_count + 1} due for its runner by {when(routine.report_due_at)}"


def _record(uow: UnitOfWork, routine: Routine, owner: Task | None, *, started_at: datetime, outcome: str,
            output: str, error: str | None, now: datetime, workflow: str | None = None) -> str:
    routine.record_run(started_at=started_at, outcome=outcome, output=output, error=error, now=now)
    routine.compact_history(now=now)
    recorded, told = routine.history[-1]["outcome"], routine.status == "paused"
    stored = ""
    if recorded == "success" and owner is not None:
        name = owner.record_workflow_output(workflow=workflow or routine.ref, output=output, now=now)
        stored = f"; output {name} stored for {owner.ref}"
    paused = f"routine {routine.ref} paused after two failed runs in a row ({error or output}); resume it with routine.resume"
    result = f"routine {routine.ref} {recorded}: {output}"
    if owner is not None and told:
        owner.notify_user(kind="routine_paused", now=now, message=f"'{owner.title}': {paused}")
    elif owner is not None and routine.last_run_notifies:
        owner.notify_user(kind="routine_result", now=now, message=f"'{owner.title}': {result}")
    elif told or routine.last_run_notifies:  # the tenant's own routine: a tenant-level notice, through the hold
        notify_owner(uow, routine.tenant, paused if told else result, now=now)
    _schedule(uow, routine, now)
    return f"routine {routine.ref}: run {routine.run_count} {recorded}, {routine.status}{stored}"


def _schedule(uow: UnitOfWork, routine: Routine, now: datetime) -> None:
    """Files the timer of the routine's next run (a tenant's is dispatched to its runner then)."""
    if routine.next_run_at is not None:
        set_timer(uow, kind=TimerKind.ROUTINE, target_id=routine.id, due=routine.next_run_at, now=now)
