"""Seed 000 Flow 1 through the `loopline` command in a subprocess, asserting on its JSON output."""

from __future__ import annotations

import json
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from adapters.config import Settings
from adapters.messages import InvalidMessage, parse_message
from cli.bootstrap import System, build
from processors.router import INBOUND_TOPIC
from tests.conftest import command, signal

ROOT = Path(__file__).resolve().parents[2]

FLOW_1 = [
    command("m1", "task.create", "2026-03-13T10:00:00Z", task_id="task_abc", title="Schedule meeting with Rahul",
            context={"conversation_id": "conv_123"}),
    command("m2", "action.record", "2026-03-13T10:00:00Z", task_id="task_abc", action="send_email",
            to="rahul@company.com", thread_id="gmail_thread_xyz", summary="Sent scheduling email to Rahul"),
]
REPLY = [signal("g1", "email.received", "2026-03-17T09:00:00Z", sender="RAHUL@company.com", thread_id="gmail_thread_xyz")]
COMPLETE = [command("m3", "task.complete", "2026-03-17T09:05:00Z", task_id="task_abc", summary="Booked Thursday 3pm")]


class Cli:
    """The `loopline` command in a subprocess, for one deployment; `settle` waits until it has caught up."""

    def __init__(self, home: Path, environ: dict[str, str] | None = None) -> None:
        self.home = home
        self.environ = {"LOOPLINE_HOME": str(home), "PATH": "/usr/bin:/bin", "COLUMNS": "200", **(environ or {})}
        self.scale = "LOOPLINE_KAFKA" in self.environ
        self._observer: System | None = None
        self.expected: set[tuple[str, str]] = set()

    def __call__(self, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
        if args[0] == "publish":
            self._expect(stdin if args[1] == "-" else Path(args[1]).read_text() if Path(args[1]).exists() else "")
        result = subprocess.run(
            [sys.executable, "-c", "from cli.main import main; main()", *args],
            cwd=ROOT, env=self.environ, input=stdin, capture_output=True, text=True, timeout=120,
        )
        if args[0] in ("publish", "tick"):
            self.settle()
        return result

    def _expect(self, lines: str) -> None:
        """Remembers which messages the workers must have recorded: the broker's end offsets alone
        are not a reliable signal (Tansu reports a batch's base offset, not its end)."""
        for line in lines.splitlines():
            try:
                message = parse_message(line)
            except InvalidMessage:
                continue
            self.expected.add((message.tenant, message.ref))

    def settle(self, timeout: float = 60.0) -> None:
        """Embedded commands finish their work before exiting; at scale, wait for the workers."""
        if not self.scale:
            return
        if self._observer is None:
            self._observer = build(Settings.load(self.environ, config_file=self.home / "loopline.toml"))
        deadline, quiet, lags = time.monotonic() + timeout, 0, None
        while time.monotonic() < deadline:
            recorded = len(self._observer.app.recorder.select_notifications(start=1, limit=1_000_000, topics=[INBOUND_TOPIC]))
            lags = [len(self.expected) - recorded]
            lags += [row["lag"] for row in self._observer.input_lag()]
            lags += [status.lag for status in self._observer.projections.status()]
            quiet = quiet + 1 if not any(lags) else 0
            if quiet == 3:
                return
            time.sleep(0.1)
        raise AssertionError(f"workers did not catch up within {timeout}s: lags {lags}")

    def close(self) -> None:
        if self._observer is not None:
            self._observer.close()

    def run_json(self, *args: str) -> str:
        result = subprocess.run(
            [sys.executable, "-c", "from cli.main import main; main()", *args, "--json"],
            cwd=ROOT, env=self.environ, capture_output=True, text=True, timeout=120,
        )
        assert result.returncode == 0, result.stderr
        return result.stdout

    def json(self, *args: str) -> Any:
        return json.loads(self.run_json(*args))

    def publish(self, tmp: Path, messages: list[dict[str, Any]], name: str) -> subprocess.CompletedProcess[str]:
        path = tmp / f"{name}.jsonl"
        path.write_text("".join(json.dumps(m) + "\n" for m in messages))
        return self("publish", str(path))


@pytest.fixture(params=["embedded", "scale"])
def cli(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Cli]:
    """The same scenarios on the embedded default and on PostgreSQL + Kafka with a `loopline run` worker."""
    if request.param == "embedded":
        yield Cli(tmp_path / "home")
        return
    database = request.getfixturevalue("postgres").new_database()
    environ = {
        "LOOPLINE_EVENT_STORE": database, "LOOPLINE_READ_MODEL": database,
        "LOOPLINE_KAFKA": request.getfixturevalue("broker").bootstrap,
        "LOOPLINE_KAFKA_TOPIC_PREFIX": f"e2e{uuid.uuid4().hex[:8]}.", "LOOPLINE_KAFKA_PARTITIONS": "2",
    }
    cli = Cli(tmp_path / "home", environ)
    assert cli("status").returncode == 0  # creates the topics before the worker subscribes
    worker = subprocess.Popen(
        [sys.executable, "-c", "from cli.main import main; main()", "run", "--interval", "0.1", "--tick-every", "0"],
        cwd=ROOT, env=cli.environ, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )
    try:
        yield cli
    finally:
        cli.close()
        worker.terminate()
        try:
            worker.wait(timeout=20)
        except subprocess.TimeoutExpired:
            worker.kill()


def test_flow_1_follow_up_reply_and_completion_through_the_cli(cli: Cli, tmp_path: Path) -> None:
    assert cli.publish(tmp_path, FLOW_1, "start").returncode == 0
    [loop] = cli.json("loops", "list", "--open")
    assert (loop["task_id"], loop["channel"], loop["deadline"]) == ("task_abc", "email", "2026-03-16T10:00:00Z")

    assert cli("tick", "--now", "2026-03-16T10:00:01Z").returncode == 0
    assert cli.json("tick", "--now", "2026-03-16T10:00:01Z")["actions"] == []  # the same tick again does nothing
    loops = {row["loop_id"]: row for row in cli.json("loops", "list")}
    assert loops[loop["loop_id"]]["resolved_by"] == "expired"
    followup = loops[loop["loop_id"] + "/followup"]
    assert not followup["resolved"] and followup["watch"] == loop["watch"]

    assert cli.publish(tmp_path, REPLY, "reply").returncode == 0
    task = cli.json("tasks", "show", "task_abc")
    assert task["status"] == "executing"
    assert [item["signal_id"] for item in task["inbox_items"]] == ["g1"]
    assert cli.json("loops", "list", "--open") == []

    assert cli.publish(tmp_path, COMPLETE, "complete").returncode == 0
    task = cli.json("tasks", "show", "task_abc")
    assert task["status"] == "completed"
    assert [n["kind"] for n in task["notifications_sent"]] == ["followup_sent", "task_completed"]
    assert "conv_123" in task["notifications_sent"][-1]["message"]

    trail = cli.json("audit", "task_abc")
    assert {"Task.Created", "OpenLoop.Resolved", "Task.SignalReceived", "Task.Completed"} <= {r["event"] for r in trail}
    assert all(row["summary"] for row in trail)


def test_rebuild_gives_back_the_same_read_models(cli: Cli, tmp_path: Path) -> None:
    cli.publish(tmp_path, FLOW_1, "start")
    cli("tick", "--now", "2026-03-16T10:00:01Z")
    cli.publish(tmp_path, REPLY, "reply")
    before = [cli.json("tasks", "list"), cli.json("loops", "list"), cli.json("audit", "task_abc")]
    rebuilt = cli.json("projections", "rebuild")
    assert set(rebuilt["rebuilt"]) == {"tasks", "open_loops", "proactive_runs", "timeline"}
    assert rebuilt["events_read"] > 0 or cli.scale  # at scale a running worker may project part of it first
    cli.settle()
    assert [cli.json("tasks", "list"), cli.json("loops", "list"), cli.json("audit", "task_abc")] == before
    assert all(row["lag"] == 0 for row in cli.json("projections", "status"))


def test_bad_lines_are_rejected_with_line_numbers_and_the_rest_applied(cli: Cli, tmp_path: Path) -> None:
    path = tmp_path / "mixed.jsonl"
    path.write_text(
        json.dumps(FLOW_1[0]) + "\n"
        + "{not json\n"
        + json.dumps(command("m9", "task.create", "2026-03-13T10:00:00Z", title="no id")) + "\n"
        + json.dumps({**FLOW_1[1], "type": "task.explode"}) + "\n"
        + json.dumps(FLOW_1[1]) + "\n"
    )
    result = cli("publish", str(path))
    assert result.returncode == 1
    assert "line 2: not valid JSON" in result.stderr
    assert "line 3: data.task_id: Field required" in result.stderr
    assert "line 4: type: unknown command type 'task.explode'" in result.stderr
    assert [t["task_id"] for t in cli.json("tasks", "list")] == ["task_abc"]
    assert len(cli.json("loops", "list", "--open")) == 1


def test_repeated_message_id_is_acknowledged_and_ignored(cli: Cli, tmp_path: Path) -> None:
    cli.publish(tmp_path, FLOW_1, "first")
    before = cli.json("audit", "task_abc")
    again = cli("publish", "-", "--json", stdin="".join(json.dumps(m) + "\n" for m in FLOW_1))
    assert again.returncode == 0
    if not cli.scale:  # at scale the workers, not publish, recognise the repeat
        assert json.loads(again.stdout)["duplicates_ignored"] == 2
    assert len(cli.json("loops", "list")) == 1
    assert cli.json("audit", "task_abc") == before


def test_usage_errors_say_what_to_do(cli: Cli, tmp_path: Path) -> None:
    bad_time = cli("tick", "--now", "tomorrow")
    assert bad_time.returncode == 2 and "RFC 3339" in bad_time.stderr
    missing = cli("publish", str(tmp_path / "nope.jsonl"))
    assert missing.returncode == 2 and "cannot read" in missing.stderr
    unknown = cli("tasks", "show", "task_zzz")
    assert unknown.returncode == 1 and "loopline tasks list" in unknown.stderr


def test_demo_plays_flow_1_to_completion(tmp_path: Path) -> None:
    """The demo always runs embedded, whatever the environment says."""
    result = Cli(tmp_path / "home")("demo", "--home", str(tmp_path / "demo"))
    assert result.returncode == 0, result.stderr
    assert "hasn't replied. I sent a follow-up." in result.stdout
    assert "completed" in result.stdout
