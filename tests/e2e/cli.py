"""The `loopline` command in a subprocess, as a user runs it, for either deployment."""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from loopline.adapters.config import Settings
from loopline.adapters.messages import InvalidMessage, parse_message
from loopline.cli.main import split_lines
from loopline.processors.followers.router import INBOUND_TOPIC
from loopline.runtime.bootstrap import build
from loopline.runtime.system import System

ROOT = Path(__file__).resolve().parents[2]


class Cli:
    """The `loopline` command in a subprocess, for one deployment; `settle` waits until it has caught up."""

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
        result = subprocess.run(
            [sys.executable, "-c", "from loopline.cli.main import main; main()", *args],
            cwd=ROOT, env=self.environ, input=stdin, capture_output=True, text=True, timeout=120,
        )
        if args[0] in ("publish", "tick"):
            self.settle()
        return result

    def _expect(self, data: bytes) -> None:
        """Remembers which messages the workers must have recorded: the broker's end offsets alone
        are not a reliable signal (Tansu reports a batch's base offset, not its end)."""
        for line in split_lines(data):
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
            lags += [row["pending"] for row in self._observer.input_lag()]
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
            [sys.executable, "-c", "from loopline.cli.main import main; main()", *args, "--json"],
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
