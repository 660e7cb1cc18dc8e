"""Property: whatever commands, signals and ticks come in whatever order, a tick never raises.

Every command type, every `if_unresolved` and every task status (by `task.update`, review,
guidance, completion, cancellation, expiry and deadline actions) is reachable from the
operations below. A timer the domain refuses is recorded once and never fires again, so a
repeated tick at the same time refuses nothing new.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from datetime import datetime, timedelta, timezone
from pathlib import Path

from hypothesis import HealthCheck, Phase, event, given, settings
from hypothesis import strategies as st

from loopline.domain.status import TaskStatus
from loopline.domain.expectations import DeadlineAction
from loopline.domain.task import Task
from loopline.domain.timers import TimerBucket
from loopline.domain.timeutil import format_time
from loopline.processors.handlers.command_routes import COMMANDS
from tests.conftest import build_system, command, publish, signal

T0 = datetime(2026, 3, 13, 10, 0, tzinfo=timezone.utc)
TASKS = ("t1", "t2", "t3")
CONTACTS = ("ana@x.com", "ben@x.com")
STATUSES = tuple(status.value for status in TaskStatus)
IF_UNRESOLVED = tuple(action.value for action in DeadlineAction)  # wake_task comes from task.wake with `at` and `when`
PHASES = tuple(Phase)[:-2] if os.environ.get("CI") else tuple(Phase)  # no minutes-long shrinking in CI runs

task = st.sampled_from(TASKS)
hours = st.integers(1, 60)
operations = st.lists(
    st.one_of(
        st.tuples(st.just("task.create"), task, st.booleans(), st.integers(1, 4), st.sampled_from([None, *CONTACTS])),
        st.tuples(st.just("tenant.configure"), st.sampled_from(["manual", "limited_auto"])),
        st.tuples(st.just("action.record"), task, st.sampled_from(CONTACTS), st.sampled_from(IF_UNRESOLVED), hours),
        st.tuples(st.just("loop.register"), task, st.sampled_from(CONTACTS), st.sampled_from(IF_UNRESOLVED), hours),
        st.tuples(st.just("loop.resolve"), st.integers(0, 20)),
        st.tuples(st.just("task.update"), task, st.sampled_from(STATUSES)),
        st.tuples(st.sampled_from(["task.complete", "task.cancel", "task.approve", "task.reject", "task.guidance",
                                      "task.reply", "task.takeover"]), task),
        st.tuples(st.just("run.schedule"), hours),
        st.tuples(st.sampled_from(["tenant.goal", "tenant.memory"]), st.sampled_from(["g1", "g2"]), st.booleans()),
        st.tuples(st.just("task.wake"), task, hours, st.sampled_from([None, *CONTACTS])),
        st.tuples(st.just("workflow.output"), task),
        st.tuples(st.just("reply"), st.sampled_from(CONTACTS)),
        st.tuples(st.sampled_from(["tenant.pause", "tenant.resume", "system.pause", "system.resume"])),
        st.tuples(st.sampled_from(["contact.resubscribe", "unsubscribe"]), st.sampled_from(CONTACTS)),
        st.tuples(st.just("task.batch"), st.lists(st.sampled_from(CONTACTS), min_size=1, max_size=2, unique=True)),
        st.tuples(st.just("task.recur"), st.sampled_from([None, *CONTACTS])),
        st.tuples(st.just("recurrence.stop"), st.integers(0, 30)),
        st.tuples(st.sampled_from(["action.request", "action.approve", "action.reject", "action.done"]), task,
                  st.sampled_from(["call_webhook", "staff_todo"])),
        st.tuples(st.just("task.add_subtask"), task, task, st.sampled_from(["required", "optional", "best_effort"]),
                  st.sampled_from([None, *CONTACTS]), st.one_of(st.none(), hours)),
        st.tuples(st.just("task.override_outcome"), task, st.sampled_from(["retained", "churned", "owner_handled"])),
        st.tuples(st.sampled_from(["task.reopen", "task.rate"]), task),
        st.tuples(st.sampled_from(["proposal.approve", "proposal.reject"]), st.integers(0, 3)),
        st.tuples(st.just("question.ask"), st.integers(0, 2), task),
        st.tuples(st.just("question.answer"), st.integers(0, 2), st.sampled_from(["A", "B, why not", "ask Dana"])),
        st.tuples(st.just("routine.create"), st.sampled_from([None, *TASKS]), st.sampled_from(["scheduled", "oneshot", "event"])),
        st.tuples(st.sampled_from(["routine.pause", "routine.resume", "routine.run_now", "routine.disable"]),
                  st.integers(0, 30)),
        st.tuples(st.just("routine.report"), st.integers(0, 30), st.sampled_from(["success", "failure"])),
        st.tuples(st.sampled_from(["task.pause", "task.resume", "task.run_now"]), task),
        st.tuples(st.just("routine.adopt"), st.integers(0, 30), task),
        st.tuples(st.just("tick"), st.integers(1, 72)),
    ),
    min_size=5, max_size=30,
)
COVERED = {"task.create", "action.record", "loop.register", "loop.resolve", "task.update", "task.complete", "task.cancel",
           "task.approve", "task.reject", "task.guidance", "task.reply", "task.takeover", "run.schedule", "task.wake", "workflow.output", "tenant.configure",
           "tenant.pause", "tenant.resume", "system.pause", "system.resume", "contact.resubscribe", "task.batch",
           "task.recur", "recurrence.stop", "action.request", "action.approve", "action.reject", "action.done",
           "task.add_subtask", "task.override_outcome", "task.reopen", "task.rate", "tenant.goal", "tenant.memory",
           "proposal.approve", "proposal.reject", "question.ask", "question.answer",
           "routine.create", "routine.pause", "routine.resume", "routine.run_now", "routine.disable", "routine.report",
           "task.pause", "task.resume", "task.run_now",
           "routine.adopt"}


def test_the_operations_cover_every_command_type() -> None:
    assert set(COMMANDS) == COVERED


def message(n: int, op: tuple, at: datetime) -> dict:
    kind, *args = op
    ref, stamp = f"m{n}", format_time(at)
    later = lambda h: format_time(at + timedelta(hours=h))  # noqa: E731
    cmd = lambda **data: {**command(ref, kind, stamp), "data": data}  # noqa: E731 - data may hold its own `at`
    if kind == "task.create":
        name, review, days, contact = args
        acting = {"task_type": "churn_risk", "contact": contact} if contact else {}  # Loopline works it
        return cmd(task_id=name, title=name, expires_in_days=days, **({"confidence": 0.1} if review else {}), **acting)
    if kind == "tenant.configure":
        return cmd(execution_mode=args[0])
    if kind == "action.record":
        name, contact, if_unresolved, h = args
        return cmd(task_id=name, action="send_email", to=contact, deadline=later(h), if_unresolved=if_unresolved)
    if kind == "loop.register":
        name, contact, if_unresolved, h = args
        return cmd(task_id=name, loop_id=f"loop{n}", channel="email", watch={"sender": contact},
                       deadline=later(h), if_unresolved=if_unresolved)
    if kind == "loop.resolve":
        return cmd(loop_id=f"loop{args[0]}")
    if kind == "task.update":
        return cmd(task_id=args[0], status=args[1], notes="moved")
    if kind == "task.complete":
        return cmd(task_id=args[0], summary="done")
    if kind == "task.cancel":
        return cmd(task_id=args[0], reason="no longer needed")
    if kind in ("task.approve", "task.reject", "task.takeover"):
        return cmd(task_id=args[0])
    if kind == "task.reply":
        return cmd(task_id=args[0], body="Thanks, see you Saturday")
    if kind == "task.guidance":
        return cmd(task_id=args[0], text="go ahead")
    if kind == "run.schedule":
        return cmd(at=later(args[0]), reason="check in")
    if kind == "tenant.goal":
        return cmd(key=args[0], goal="keep every member training", active=args[1])
    if kind == "tenant.memory":
        return cmd(key=args[0], note="Saturdays are the busiest")
    if kind == "task.wake":
        name, h, contact = args
        when = {"when": {"channel": "email", "watch": {"sender": contact}}} if contact else {}
        return cmd(task_id=name, at=later(h), **when)
    if kind == "workflow.output":
        return cmd(task_id=args[0], workflow="digest", output={"n": n})
    if kind == "routine.create":  # every 30 minutes, or on replies, so the ticks make it due
        owner, routine_kind = args
        every = {"scheduled": {"interval_minutes": 30}, "event": {"signal_pattern": "email.*"}}.get(routine_kind, {})
        return cmd(routine_id=f"rt{n}", action="call_webhook", params={"event": "tick"}, kind=routine_kind, **every,
                   **({"task_id": owner} if owner else {}))
    if kind == "routine.adopt":
        return cmd(routine_id=f"rt{args[0]}", task_id=args[1])
    if kind == "routine.resume":  # the routine of the n-th operation, if that one was a routine.create
        return cmd(routine_id=f"rt{args[0]}")
    if kind.startswith("routine.") and kind != "routine.report":
        return cmd(routine_id=f"rt{args[0]}", reason="the owner's call")
    if kind == "routine.report":
        return cmd(routine_id=f"rt{args[0]}", duration_seconds=60, outcome=args[1], output=f"result {n % 2}")
    if kind in ("task.pause", "task.resume", "task.run_now"):
        return cmd(task_id=args[0], reason="the owner's call")
    if kind.endswith((".pause", ".resume")):
        return cmd(reason="the owner's call")
    if kind == "contact.resubscribe":
        return cmd(contact=args[0], reason="asked to hear from us again")
    if kind == "recurrence.stop":  # the template of the n-th operation, if that one was a task.recur
        return cmd(template_id=f"r{args[0]}", reason="not needed any more")
    if kind == "action.request":
        name, action = args
        params = {"event": "tagged"} if action == "call_webhook" else {
            "title": "call back", "assigned_to": "owner", "due_at": later(24)}
        return cmd(task_id=name, action=action, params=params, key=f"k{n}")
    if kind.startswith("action."):
        return cmd(task_id=args[0])
    if kind == "task.batch":
        return cmd(batch_id=f"b{n}", task_type="churn_risk", title="come back", confidence=0.9,
                   contacts=[{"contact": contact} for contact in args[0]])
    if kind == "task.recur":  # hourly, so the ticks fire it; with a contact, Loopline works each instance
        acting = {"task_type": "churn_risk", "contact": args[0], "confidence": 0.9} if args[0] else {}
        return cmd(template_id=f"r{n}", cron="0 * * * *", max_instances=3, template={"title": "hourly", **acting})
    if kind == "task.add_subtask":
        parent, name, requirement, contact, h = args
        acting = {"task_type": "churn_risk", "contact": contact, "confidence": 0.9} if contact else {}
        return cmd(parent_id=parent, task_id=name, title=name, requirement=requirement, by="owner", **acting,
                   **({"starts_at": later(h)} if h else {}))
    if kind == "task.override_outcome":
        return cmd(task_id=args[0], outcome=args[1], reason="the owner knows better")
    if kind == "task.reopen":
        return cmd(task_id=args[0], reason="not done yet")
    if kind == "task.rate":
        return cmd(task_id=args[0], rating="down", why="other", note="not what happened")
    if kind.startswith("proposal."):  # no proposal is offered by a command: the owner's answer names none and is refused
        return cmd(proposal_id=f"p{args[0]}")
    if kind == "question.ask":
        return cmd(question_id=f"q{args[0]}", task_id=args[1], asker="agent", stuck_on="which day",
                   question="Saturday or Sunday?", options=["Saturday", "Sunday"])
    if kind == "question.answer":
        return cmd(question_id=f"q{args[0]}", answer=args[1])
    if kind == "unsubscribe":
        return signal(ref, "contact.unsubscribed", stamp, contact=args[0])
    assert kind == "reply"
    return signal(ref, "email.received", stamp, sender=args[0])


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow], phases=PHASES)
@given(operations, st.integers(1, 3))
def test_a_tick_never_raises_whatever_came_before_it(ops, batch) -> None:
    home = Path(tempfile.mkdtemp(prefix="loopline-tick-prop-"))  # one per example: tmp_path is one per test
    system = build_system(home)
    try:
        now, pending = T0, []
        for n, op in enumerate(ops):
            now += timedelta(minutes=30)
            if op[0] != "tick":
                pending.append(message(n, op, now))
                if len(pending) >= batch:
                    publish(system, *pending)
                    pending.clear()
                continue
            publish(system, *pending)
            pending.clear()
            now += timedelta(hours=op[1])
            system.scheduler.tick(now)
            again = system.scheduler.tick(now)
            assert again.refused == [], "a refused timer fired again"
            system.drain()
        publish(system, *pending)
        final = system.scheduler.tick(now + timedelta(days=30))
        assert system.scheduler.tick(now + timedelta(days=30)).refused == []

        events = [system.app.mapper.to_domain_event(n) for n in system.app.recorder.select_notifications(start=1, limit=100_000)]
        refusals = [e for e in events if isinstance(e, TimerBucket.TimerRefused)]
        assert len(refusals) == len({(e.kind, e.target_id, e.due) for e in refusals}), "a timer was refused twice"
        event(f"timers refused: {'some' if refusals else 'none'}")  # --hypothesis-show-statistics
        told = [e for e in events if isinstance(e, Task.UserNotified) and e.kind == "timer_refused"]
        assert len(told) <= len(refusals)
        assert final is not None
    finally:
        system.close()
        shutil.rmtree(home)
