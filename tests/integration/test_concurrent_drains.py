"""Two processes draining one home: a batch read by both is applied by one of them only."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from loopline.adapters.messages import parse_message
from loopline.domain.open_loop import OpenLoop
from loopline.domain.task import Task
from loopline.processors.followers import router as router_module
from loopline.runtime.system import System
from tests.conftest import build_system, command, signal

AT = "2026-03-13T10:00:00Z"
MESSAGES = [
    command("c1", "task.create", AT, task_id="t1", title="Meet Rahul"),
    command("c2", "action.record", AT, task_id="t1", action="send_email", to="rahul@x.com", thread_id="th"),
    command("c3", "task.create", AT, task_id="t2", title="Invoice"),
    signal("s1", "email.received", "2026-03-14T09:00:00Z", sender="rahul@x.com", thread_id="th"),
]


def stored_events(system: System) -> list[Any]:
    return [system.app.mapper.to_domain_event(n) for n in system.app.recorder.select_notifications(start=1, limit=10_000)]


def effects(system: System) -> Counter[str]:
    """What the messages did, by event type and aggregate, without the log entries themselves."""
    return Counter(
        f"{type(event).__qualname__}:{getattr(event, 'ref', '')}{getattr(event, 'action', '')}"
        for event in stored_events(system) if isinstance(event, (Task.Event, OpenLoop.Event))
    )


def test_a_batch_read_before_another_process_commits_it_is_not_applied_again(
    home: Path, store_environ: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first, second = build_system(home, **store_environ), build_system(home, **store_environ)
    alone = build_system(tmp_path / "alone")
    try:
        for system in (first, alone):
            system.log.append([parse_message(json.dumps(m)) for m in MESSAGES], "test")
        alone.router.run_once()

        real_read = router_module.LogBatches.read
        interleaved = []

        def other_process_commits_first(batches: Any) -> Any:
            batch = real_read(batches)
            if not interleaved:  # the first router has read its batch; the second applies and commits part of it
                interleaved.append(True)
                assert second.router is not None
                second.router.batch_size = 2
                assert len(second.router.run_once()) == 2
            return batch

        monkeypatch.setattr(router_module.LogBatches, "read", other_process_commits_first)
        assert first.router is not None
        outcomes = first.router.run_once()  # its commit lost the race; it reads again after the second's
        assert [outcome.step.message.ref for outcome in outcomes] == ["c3", "s1"]

        assert interleaved
        assert effects(first) == effects(alone)
        assert effects(first)["Task.ActionRecorded:send_email"] == 1
        assert sum(isinstance(e, OpenLoop.Registered) for e in stored_events(first)) == 1
    finally:
        for system in (first, second, alone):
            system.close()
