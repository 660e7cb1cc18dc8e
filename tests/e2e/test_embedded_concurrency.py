"""Several `loopline` processes on one embedded home at once: they take turns on the home lock.

`loopline run`, two large `publish` runs and two `tick`s start together; every one exits 0,
and the home ends exactly as a single process running the same commands one after another.
"""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

from loopline.adapters.leader import HomeLock
from tests.conftest import command, signal as signal_message
from tests.e2e.cli import ROOT, Cli

T0 = "2026-03-13T10:00:00Z"
REPLY_AT = "2026-03-14T09:00:00Z"
# The concurrent ticks run before anything is due (the first proactive runs are at T0 + 30 min):
# what a tick at a given time does depends on what was published before it, so only a tick
# after all publishing can be compared with the single process. They still take their turns.
EARLY_TICK_AT = "2026-03-13T10:10:00Z"
TICK_AT = "2026-03-17T10:00:00Z"  # after every send_email deadline (3 days)
TENANTS = 600


def workload(prefix: str) -> list[dict[str, Any]]:
    """Per tenant: a task and an email; every other contact replies (in the same file, right behind it)."""
    messages = []
    for i in range(TENANTS):
        tenant, contact = f"{prefix}{i}", f"c{i}@{prefix}.example"
        messages += [
            command(f"{tenant}-1", "task.create", T0, tenant, task_id="t", title=f"Reach {contact}"),
            command(f"{tenant}-2", "action.record", T0, tenant, task_id="t", action="send_email", to=contact, thread_id="th"),
        ]
        if i % 2 == 0:
            messages.append(signal_message(f"{tenant}-3", "email.received", REPLY_AT, tenant, sender=contact, thread_id="th"))
    return messages


def loopline(home: Path, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", "from loopline.cli.main import main; main()", *args], cwd=ROOT,
        env={"LOOPLINE_HOME": str(home), "PATH": "/usr/bin:/bin", "COLUMNS": "200", "TMPDIR": tempfile.gettempdir()},
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )


def said_waiting(process: subprocess.Popen[str]) -> str:
    """What the process wrote on stderr up to and including its line saying it waits for the home lock."""
    lines = []
    for line in process.stderr or ():
        lines.append(line)
        if line.startswith("waiting for"):
            return "".join(lines)
    raise AssertionError(f"process {process.pid} ended without waiting for the home lock:\n{''.join(lines)}")


def outcome(home: Path) -> tuple[Any, ...]:
    cli = Cli(home)
    tasks = sorted((t["tenant"], t["task_id"], t["status"], t["actions"], t["inbox"]) for t in cli.json("tasks", "list"))
    loops = sorted((row["tenant"], row["loop_id"], row["resolved_by"]) for row in cli.json("loops", "list"))
    lines = [json.loads(line) for line in (home / "outbox.jsonl").read_text().splitlines()]
    keys = Counter(line["key"] for line in lines)
    assert max(keys.values()) == 1, "an outbox key was written twice"
    return tasks, loops, sorted(keys)


def test_run_two_publishes_and_two_ticks_on_one_home_take_turns_and_lose_nothing(tmp_path: Path) -> None:
    files = []
    for name in ("left", "right"):
        files.append(tmp_path / f"{name}.jsonl")
        files[-1].write_text("".join(json.dumps(m) + "\n" for m in workload(name)))

    alone = tmp_path / "alone"
    single = Cli(alone)  # one after another: no process need be a process of its own
    for args in (
        ("publish", str(files[0])), ("publish", str(files[1])), ("tick", "--now", EARLY_TICK_AT),
        ("tick", "--now", EARLY_TICK_AT), ("tick", "--now", TICK_AT),
    ):
        finished = single(*args)
        assert finished.returncode == 0, finished.stderr

    home = tmp_path / "shared"
    home.mkdir()
    with HomeLock(home).held():  # all five start against a held lock, so each must wait its turn and say so
        runner = loopline(home, "run", "--interval", "0.05", "--tick-every", "0")
        others = [
            loopline(home, "publish", str(files[0])), loopline(home, "tick", "--now", EARLY_TICK_AT),
            loopline(home, "publish", str(files[1])), loopline(home, "tick", "--now", EARLY_TICK_AT),
        ]
        said = {process.pid: said_waiting(process) for process in (runner, *others)}
    errors = []
    for process in others:
        errors.append(said[process.pid] + process.communicate(timeout=300)[1])
        assert process.returncode == 0, errors[-1]
    runner.send_signal(signal.SIGTERM)
    runner_err = said[runner.pid] + runner.communicate(timeout=60)[1]
    assert runner.returncode == 0, runner_err
    last = loopline(home, "tick", "--now", TICK_AT)
    last_err = last.communicate(timeout=300)[1]
    assert last.returncode == 0, last_err

    waits = [line for text in (*errors, runner_err) for line in text.splitlines() if line.startswith("waiting for")]
    assert len(waits) >= 5, waits  # each of the five waited at least once
    assert all(re.search(r"process \d+ \(loopline", line) for line in waits), waits  # naming who held the lock
    shared = outcome(home)
    assert shared == outcome(alone)
    assert len(shared[0]) == 2 * TENANTS
