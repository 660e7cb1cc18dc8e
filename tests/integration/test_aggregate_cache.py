"""The per-process aggregate cache never serves a stale or half-changed aggregate."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from loopline.domain import ids
from loopline.domain.task import Task
from loopline.domain.timeutil import parse_time
from loopline.processors.application import UnitOfWork
from loopline.runtime.system import System
from tests.conftest import build_system, publish
from tests.integration.helpers import CREATE_TASK, TENANT

NOW = parse_time("2026-03-13T11:00:00Z")
TASK = ids.task_id(TENANT, "task_abc")


def _note(system: System, notes: str) -> None:
    uow = UnitOfWork(system.app)
    task = uow.get(TASK, Task)
    assert task is not None
    task.note_progress(notes=notes, status=None, now=NOW)
    uow.commit()


def _read(system: System) -> Task:
    task = UnitOfWork(system.app).get(TASK, Task)
    assert task is not None
    return task


def test_changes_written_by_another_process_are_applied_to_the_cached_aggregate(
    system: System, home: Path, store_environ: dict[str, str]
) -> None:
    publish(system, CREATE_TASK)
    _note(system, "first")  # committed here, so this process now caches the task at this version
    cached = _read(system)
    cached_version = cached.version
    system.app.cache.put([cached])

    other = build_system(home, **store_environ)  # another worker on the same store
    try:
        _note(other, "second")
    finally:
        other.close()
    assert list(system.app.events.get(TASK))[-1].originator_version == cached_version + 1

    stored = list(system.app.events.get(TASK))
    assert stored[-1].notes == "second"
    task = _read(system)
    assert task is cached  # brought up to date, not reloaded
    assert task.version == stored[-1].originator_version


def test_an_aggregate_changed_by_a_failed_unit_of_work_is_not_cached(system: System) -> None:
    publish(system, CREATE_TASK)
    _note(system, "kept")
    version = _read(system).version
    system.app.cache.put([_read(system)])

    uow = UnitOfWork(system.app)
    task = uow.get(TASK, Task)
    task.note_progress(notes="never saved", status=None, now=NOW + timedelta(minutes=1))
    del uow  # abandoned: e.g. the batch failed before its commit

    assert _read(system).version == version


def test_a_unit_of_work_holds_the_only_reference_to_a_cached_aggregate(system: System) -> None:
    publish(system, CREATE_TASK)
    _note(system, "kept")
    first = UnitOfWork(system.app)
    held = first.get(TASK, Task)
    second = UnitOfWork(system.app).get(TASK, Task)
    assert held is not None and second is not None
    assert held is not second  # the second loaded its own copy from the store
