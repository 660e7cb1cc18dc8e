"""Done-when 5 of issue 21: every task the brain creates names its provenance (synthesis, proposal, routine, signal),
and the per-run and per-signal creation limits count it, holding the one over the limit with the limit named."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from loopline.adapters.messages import parse_message
from loopline.domain import ids
from loopline.domain.safety_limits import TASKS_PER_RUN, TASKS_PER_SIGNAL
from loopline.domain.task import Task
from loopline.domain.task_ledger import Origin, TenantTasks
from loopline.domain.task_provenance import Provenance
from loopline.processors.application import UnitOfWork
from loopline.processors.handlers.commands import create_task
from tests.conftest import command
from tests.unit.in_memory import InMemoryLoopline

GYM = "gym"
AT = "2026-03-02T09:00:00Z"


@pytest.fixture
def loopline() -> Iterator[InMemoryLoopline]:
    running = InMemoryLoopline()
    yield running
    running.close()


def brain_creates(loopline: InMemoryLoopline, provenance: Provenance, refs: list[str]) -> list[str]:
    """The tasks created as the brain creates them (`create_task` with its provenance), in one unit of work."""
    uow = UnitOfWork(loopline.app)
    details = []
    for ref in refs:
        msg = parse_message(json.dumps(command(f"brain-{ref}", "task.create", AT, GYM, task_id=ref, title=f"Do {ref}")))
        details.append(create_task(uow, msg, msg.command, provenance=provenance))
    uow.commit()
    return details


def ledger(loopline: InMemoryLoopline) -> TenantTasks:
    found = UnitOfWork(loopline.app).get(ids.tenant_tasks_id(GYM), TenantTasks)
    assert found is not None
    return found


@pytest.mark.parametrize(("provenance", "counted_as"), [
    (Provenance("synthesis", "run-1", "loopline"), Origin("run", "run-1")),
    (Provenance("proposal", "proposal-7", "owner"), Origin("run", "proposal-7")),
    (Provenance("routine", "digest#3", "loopline"), Origin("run", "digest#3")),
    (Provenance("signal", "sig-9", "loopline"), Origin("signal", "sig-9")),
])
def test_a_task_the_brain_creates_names_its_provenance_and_its_run_or_signal_counts_it(
        loopline: InMemoryLoopline, provenance: Provenance, counted_as: Origin) -> None:
    brain_creates(loopline, provenance, ["t1"])

    task = loopline.task(GYM, "t1")
    assert (task.trigger_type, task.trigger_event_id, task.created_by) == (
        provenance.trigger_type, provenance.trigger_event_id, provenance.created_by)
    assert ledger(loopline).created_by(counted_as) == 1


@pytest.mark.parametrize(("provenance", "limit", "rule", "reason"), [
    (Provenance("synthesis", "run-2", "loopline"), TASKS_PER_RUN, "run_task_limit",
     f"analysis run run-2 created {TASKS_PER_RUN} task(s) (limit {TASKS_PER_RUN})"),
    (Provenance("signal", "sig-4", "loopline"), TASKS_PER_SIGNAL, "signal_task_limit",
     f"signal sig-4 created {TASKS_PER_SIGNAL} task(s) (limit {TASKS_PER_SIGNAL})"),
])
def test_the_task_over_its_run_or_signal_limit_is_held_naming_the_limit(
        loopline: InMemoryLoopline, provenance: Provenance, limit: int, rule: str, reason: str) -> None:
    refs = [f"t{number}" for number in range(limit + 1)]
    details = brain_creates(loopline, provenance, refs)

    assert details[-1] == (f"task {refs[-1]} was not created: {reason} ({rule}); send it again once the limit frees up")
    assert all(detail.startswith(f"created task {ref}") for ref, detail in zip(refs, details[:-1]))
    held = [e for e in loopline.events() if isinstance(e, TenantTasks.CreationHeld)]
    assert [(e.task_ref, e.rule, e.origin) for e in held] == [(refs[-1], rule, provenance.origin.key)]
    assert not [e for e in loopline.events() if isinstance(e, Task.Created) and e.ref == refs[-1]]


def test_a_follow_through_task_of_the_outside_agent_is_left_to_the_agents_own_limits(
        loopline: InMemoryLoopline) -> None:
    loopline.publish(command("m1", "task.create", AT, GYM, task_id="t1", title="Answer Ann",
                             origin={"kind": "signal", "id": "sig-1"}))
    assert loopline.task(GYM, "t1").trigger_type == "signal"
    assert UnitOfWork(loopline.app).get(ids.tenant_tasks_id(GYM), TenantTasks) is None
