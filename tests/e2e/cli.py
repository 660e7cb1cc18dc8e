"""The `loopline` command as a user runs it, for either deployment: in this process where nothing
about a process is being tested (the same `main()`, its exit codes and printed lines), in a
subprocess where the process matters."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path
from typing import Any
from unittest import mock

import pytest

from loopline.adapters.config import Settings
from loopline.adapters.messages import InvalidMessage, parse_message
from loopline.cli import main as cli_main
from loopline.runtime.publishing import split_lines
from loopline.cli.output import err, out
from loopline.processors.followers.agent import TOPICS as REQUESTED_TOPICS
from loopline.processors.followers.delivery import TOPICS as DELIVERED_TOPICS
from loopline.processors.followers.router import INBOUND_TOPIC
from loopline.runtime.bootstrap import build
from loopline.runtime.system import System
from tests.hooks.loopline_hooks import install_from_environment

ROOT = Path(__file__).resolve().parents[2]
OWN_PROCESS = ("LOOPLINE_TEST_KILL_AFTER_SEND", "LOOPLINE_TEST_LEADER_HANG")
"""Settings whose test hooks kill or block the process: a command run with them gets a process of its own."""


class Cli:
    """The `loopline` command for one deployment; `settle` waits until it has caught up."""

    def __init__(self, home: Path, environ: dict[str, str] | None = None) -> None:
        self.home = home
        self.environ = {
            "LOOPLINE_HOME": str(home), "PATH": "/usr/bin:/bin", "COLUMNS": "200",
            "TMPDIR": tempfile.gettempdir(),  # the run's own temporary folder, which the suite checks is left empty
            **(environ or {}),
        }
        self.scale = "LOOPLINE_KAFKA" in self.environ
        self._observer: System | None = None
        self.expected: set[tuple[str, str]] = set()

    def __call__(self, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
        if args[0] == "publish":
            self._expect(stdin.encode() if args[1] == "-" and stdin else Path(args[1]).read_bytes() if Path(args[1]).is_file() else b"")
        result = self.run(args, stdin)
        if args[0] in ("publish", "tick"):
            self.settle()
        return result

    def run(self, args: tuple[str, ...], stdin: str | None = None) -> subprocess.CompletedProcess[str]:
        """One command, waiting for no worker: in this process unless it needs one of its own (a worker
        that runs until stopped, or a test hook that kills it)."""
        if args[0] == "run" or any(name in self.environ for name in OWN_PROCESS):
            return subprocess.run(
                [sys.executable, "-c", "from loopline.cli.main import main; main()", *args],
                cwd=ROOT, env=self.environ, input=stdin, capture_output=True, text=True, timeout=120,
            )
        return run_in_process(args, self.environ, stdin)

    def _expect(self, data: bytes) -> None:
        """Remembers which messages the workers must have recorded: the broker's end offsets alone
        are not a reliable signal (Tansu reports a batch's base offset, not its end)."""
        for line in split_lines(data):
            try:
                message = parse_message(line)
            except InvalidMessage:
                continue
            self.expected.add((message.tenant, message.ref))

    def settle(self, timeout: float = 60.0, *, delivered: bool = False) -> None:
        """Embedded commands finish their work before exiting; at scale, wait for the workers (and, `delivered`,
        for the leader's model decisions and deliveries too: then nothing more will be sent without a new input)."""
        if not self.scale:
            return
        if self._observer is None:
            self._observer = build(Settings.load(self.environ, config_file=self.home / "loopline.toml"))
        app = self._observer.app
        deadline, quiet, lags = time.monotonic() + timeout, 0, None
        while time.monotonic() < deadline:
            recorded = len(app.recorder.select_notifications(start=1, limit=1_000_000, topics=[INBOUND_TOPIC]))
            lags = [len(self.expected) - recorded]
            lags += [row["pending"] for row in self._observer.input_lag()]
            lags += [status.lag for status in self._observer.projections.status()]
            if delivered:
                lags += [len(app.process_recorder.select_notifications(start=app.position(name) + 1, limit=1, topics=topics))
                         for name, topics in (("agent", REQUESTED_TOPICS), ("delivery", DELIVERED_TOPICS))]
            quiet = quiet + 1 if not any(lags) else 0
            if quiet == 3:
                return
            time.sleep(0.1)
        raise AssertionError(f"workers did not catch up within {timeout}s: lags {lags}")

    def close(self) -> None:
        if self._observer is not None:
            self._observer.close()

    def run_json(self, *args: str) -> str:
        result = self.run((*args, "--json"))
        assert result.returncode == 0, result.stderr
        return result.stdout

    def json(self, *args: str) -> Any:
        return json.loads(self.run_json(*args))

    def publish(self, tmp: Path, messages: list[dict[str, Any]], name: str) -> subprocess.CompletedProcess[str]:
        path = tmp / f"{name}.jsonl"
        path.write_text("".join(json.dumps(m) + "\n" for m in messages))
        return self("publish", str(path))


def run_in_process(args: tuple[str, ...], environ: dict[str, str], stdin: str | None) -> subprocess.CompletedProcess[str]:
    """`main()` as the subprocess runs it: only `environ` in os.environ, in the repository folder, with
    standard streams of its own; an error `main()` lets through is a traceback and exit code 1, as Python's."""
    stdout, stderr = io.BytesIO(), io.BytesIO()
    streams = {
        "stdin": io.TextIOWrapper(io.BytesIO((stdin or "").encode()), encoding="utf-8"),
        "stdout": io.TextIOWrapper(stdout, encoding="utf-8", write_through=True),
        "stderr": io.TextIOWrapper(stderr, encoding="utf-8", write_through=True),
    }
    code = 0
    cwd = os.getcwd()
    # What a new process would not inherit, or would not leave behind: the consoles' colours and width
    # (chosen at import, from this process's terminal and COLUMNS), a width asked of the standard file
    # descriptors when COLUMNS is unset (a subprocess's are pipes), the temporary folder tempfile chose
    # from an earlier TMPDIR, an earlier --debug; and the faults LOOPLINE_TEST_FAULTS injects, for this command only.
    columns = environ.get("COLUMNS", "")
    width = int(columns) if columns.isdigit() else None
    with mock.patch.dict(os.environ, environ, clear=True), mock.patch.multiple(sys, argv=["-c", *args], **streams), \
            mock.patch.multiple(out, _color_system=None, _width=width), mock.patch.multiple(err, _color_system=None, _width=width), \
            mock.patch("os.get_terminal_size", side_effect=OSError("not a terminal")), \
            mock.patch.object(tempfile, "tempdir", None), mock.patch.object(cli_main, "debugging", False), \
            pytest.MonkeyPatch.context() as hooks:
        install_from_environment(environ, hooks.setattr)
        os.chdir(ROOT)
        try:
            cli_main.main()
        except SystemExit as exit_:
            code = exit_.code if isinstance(exit_.code, int) else 0 if exit_.code is None else 1
        except Exception:  # noqa: BLE001 - what an uncaught error does to a process
            sys.stderr.write(traceback.format_exc())
            code = 1
        finally:
            os.chdir(cwd)
            sys.stdout.flush()
            sys.stderr.flush()
    return subprocess.CompletedProcess(["loopline", *args], code, stdout.getvalue().decode(), stderr.getvalue().decode())
