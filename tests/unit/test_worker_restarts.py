"""`loopline run` after a failure: an unexpected one is one JSON log line and a restart; an explained one ends it."""

from __future__ import annotations

import json
import logging
import signal
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from loopline.adapters.config import InvalidSetting
from loopline.runtime import worker
from loopline.runtime.system import System


@pytest.fixture(autouse=True)
def restored_logging_and_signals() -> Iterator[None]:
    """`serve` configures the root logger and, while pausing, SIGINT and SIGTERM: give the test process its own back."""
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    handlers_of = {signum: signal.getsignal(signum) for signum in (signal.SIGINT, signal.SIGTERM)}
    yield
    root.handlers[:] = handlers
    root.setLevel(level)
    for signum, handler in handlers_of.items():
        signal.signal(signum, handler)


def test_an_unexpected_failure_is_one_log_line_then_the_worker_opens_everything_again(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setattr(worker, "MAX_PAUSE", 0.01)
    failures = [RuntimeError("duplicate key value\nDETAIL: the statement"), InvalidSetting("LOOPLINE_X is not valid")]
    opened = []

    @contextmanager
    def open_system() -> Iterator[System]:
        opened.append(failures[len(opened)])
        raise opened[-1]
        yield  # never reached: a generator, for contextmanager

    with pytest.raises(InvalidSetting):
        worker.serve(open_system, lambda error: isinstance(error, InvalidSetting), interval=1, tick_every=0,
                     progress_every=1)

    assert len(opened) == 2  # restarted once, then the explained failure ended it
    lines = [json.loads(line) for line in capsys.readouterr().err.splitlines()]
    assert [(line["event"], line["level"], line["error"], line["restart_in"]) for line in lines] == [
        ("worker.failed", "error", "RuntimeError: duplicate key value", 0.01),
    ]


def test_pauses_double_while_failures_follow_each_other_and_start_over_after_a_healthy_run() -> None:
    backoff = worker.Backoff()
    assert [backoff.failed() for _ in range(6)] == [1, 2, 4, 8, 10, 10]
    backoff.started -= worker.HEALTHY_AFTER + 1  # the last restart ran for longer than that
    assert backoff.failed() == 1
