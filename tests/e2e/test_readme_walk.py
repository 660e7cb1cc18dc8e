"""Every command block of README.md, run in order as a newcomer would, with the installed `loopline`.

A ```sh block is a command block; every other block says what it is (```json, ```text). A comment
just above a block tells the walk how to run it:
  <!-- readme-walk: skip: REASON -->   not run, for the reason given (it needs Docker, say)
  <!-- readme-walk: in the checkout -->  run in the repository (`make` targets)
  <!-- readme-walk: at scale -->         run against the suite's PostgreSQL and Kafka-protocol broker, whose
                                          addresses replace compose.yml's, with one `loopline run` worker
Every other block runs in one fresh folder shared by the walk, so files written by one block (heredocs)
are there for the next. A block passes when every command in it exits 0, or the N of a `# exits N` comment
ending its line. A block may start a server in the background, writing its pid to a `*.pid` file in the
folder; a later block must stop it (the walk fails if one is still running at the end, and stops it). The
README's `loopline serve` on 127.0.0.1:8080 is served on a free port instead, so the walk never meets
another server there.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.servers import Broker, Postgres, free_port
from tests.waiting import eventually

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
BIN = Path(sys.executable).parent
FENCE = re.compile(r"^```(\w*)$")
DIRECTIVE = re.compile(r"^<!-- readme-walk: (skip: .+|in the checkout|at scale) -->$")
EXITS = re.compile(r"^(?P<command>\S.*?)\s+# exits (?P<code>\d+)\b.*$", re.MULTILINE)
COMPOSE_KAFKA = "localhost:9094"
COMPOSE_POSTGRES = "postgresql://loopline:loopline@localhost:5432/loopline"
SERVE_PORT = "8080"


@dataclass(frozen=True)
class Block:
    line: int
    language: str
    directive: str
    text: str

    @property
    def script(self) -> str:
        """The block as bash runs it: a command whose comment names its exit code must exit with that code."""
        return EXITS.sub(
            lambda m: f"{m['command']} && code=0 || code=$?; "
            f"test $code -eq {m['code']} || {{ echo \"exited $code; the README says {m['code']}\" >&2; exit 1; }}",
            self.text,
        )

    def __str__(self) -> str:
        return f"README.md line {self.line}:\n{self.text}"


def readme_blocks() -> list[Block]:
    lines = README.read_text(encoding="utf-8").splitlines()
    blocks, index = [], 0
    while index < len(lines):
        opening = FENCE.match(lines[index])
        if not opening:
            index += 1
            continue
        end = next(i for i in range(index + 1, len(lines)) if lines[i] == "```")
        above = lines[index - 1] if index else ""
        directive = DIRECTIVE.match(above)
        assert directive or not above.startswith("<!-- readme-walk"), f"README.md line {index}: unknown directive {above}"
        blocks.append(Block(index + 1, opening.group(1), directive.group(1) if directive else "", "\n".join(lines[index + 1:end])))
        index = end + 1
    return blocks


def test_every_readme_block_says_what_it_is() -> None:
    """An untagged block would slip past the walk: each is a command (sh), a message (json) or text."""
    untagged = [block for block in readme_blocks() if block.language not in ("sh", "json", "text")]
    assert not untagged, "tag these README blocks sh, json or text:\n" + "\n".join(map(str, untagged))
    assert sum(block.language == "sh" for block in readme_blocks()) >= 8


@pytest.fixture
def walk_folder() -> Iterator[Path]:
    """A fresh folder for the whole walk, removed afterwards whatever happened."""
    folder = Path(tempfile.mkdtemp(prefix="loopline-readme-walk-"))
    try:
        yield folder
    finally:
        for pid in _running(folder):
            os.kill(pid, signal.SIGKILL)
        shutil.rmtree(folder, ignore_errors=True)


def _running(folder: Path) -> list[int]:
    """The processes the walk's blocks started in the background (their `*.pid` files) that still run."""
    running = []
    for pid_file in folder.glob("*.pid"):
        pid = int(pid_file.read_text().strip())
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            continue
        running.append(pid)
    return running


def _environ(folder: Path) -> dict[str, str]:
    """A newcomer's shell: the installed `loopline` on PATH, no Loopline settings of ours, and home and temporary
    files inside the walk's folder, so removing it removes everything the walk made."""
    keep = {name: value for name, value in os.environ.items() if not name.startswith("LOOPLINE_")}
    (folder / ".tmp").mkdir()
    return {
        **keep, "PATH": f"{BIN}{os.pathsep}{keep.get('PATH', '/usr/bin:/bin')}", "HOME": str(folder),
        "TMPDIR": str(folder / ".tmp"), "COLUMNS": "120",
    }


def _run(block: Block, cwd: Path, environ: dict[str, str], script: str | None = None) -> None:
    __tracebackhide__ = True  # the block and its output say it all; the environment stays out of the report
    result = subprocess.run(
        ["bash", "-e", "-o", "pipefail", "-c", script or block.script],
        cwd=cwd, env=environ, capture_output=True, text=True, timeout=300,
    )
    assert result.returncode == 0, (
        f"{block}\nexited {result.returncode}\n--- stdout\n{result.stdout[-4000:]}\n--- stderr\n{result.stderr[-4000:]}"
    )


def _at_scale(block: Block, cwd: Path, environ: dict[str, str], postgres: Postgres, broker: Broker) -> None:
    """The block as written, with the suite's servers where compose.yml's would be and one worker running."""
    assert COMPOSE_KAFKA in block.text and COMPOSE_POSTGRES in block.text, f"{block}\nnames no compose.yml server"
    database = postgres.new_database()
    script = block.script.replace(COMPOSE_KAFKA, broker.bootstrap).replace(COMPOSE_POSTGRES, database)
    scale = {
        **environ, "LOOPLINE_KAFKA": broker.bootstrap, "LOOPLINE_EVENT_STORE": database, "LOOPLINE_READ_MODEL": database,
        "LOOPLINE_KAFKA_TOPIC_PREFIX": f"walk{uuid.uuid4().hex[:8]}.", "LOOPLINE_KAFKA_PARTITIONS": "2",
        "LOOPLINE_HOME": str(cwd / "scale-home"),
    }
    assert subprocess.run(["loopline", "status"], cwd=cwd, env=scale, capture_output=True).returncode == 0  # topics
    log = Path(environ["TMPDIR"]) / "worker.log"
    with log.open("wb") as sink:
        worker = subprocess.Popen(["loopline", "run", "--tick-every", "0"], cwd=cwd, env=scale, stdout=sink, stderr=sink)
    try:
        _run(block, cwd, {**environ, "LOOPLINE_KAFKA_TOPIC_PREFIX": scale["LOOPLINE_KAFKA_TOPIC_PREFIX"]}, script)
        _wait_for_loops(cwd, {**scale, "LOOPLINE_HOME": str(cwd / ".loopline")}, block, log)
    finally:
        worker.terminate()
        try:
            worker.wait(timeout=20)
        except subprocess.TimeoutExpired:
            worker.kill()
            worker.wait()


def _wait_for_loops(cwd: Path, environ: dict[str, str], block: Block, log: Path, timeout: float = 90.0) -> None:
    """What the README promises once the lag is gone: the worker processed what the block published."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        listed = subprocess.run(["loopline", "loops", "list", "--json"], cwd=cwd, env=environ, capture_output=True, text=True)
        if listed.returncode == 0 and json.loads(listed.stdout or "[]"):
            return
        time.sleep(0.5)
    raise AssertionError(
        f"{block}\nthe worker processed nothing it published within {timeout:.0f} s; its log:\n{log.read_text()[-4000:]}"
    )


def test_every_command_block_of_the_readme_runs(
    walk_folder: Path, request: pytest.FixtureRequest
) -> None:
    commands = [block for block in readme_blocks() if block.language == "sh"]
    environ = _environ(walk_folder)
    port = str(free_port())
    for block in commands:
        if block.directive.startswith("skip: "):
            continue
        if block.directive == "in the checkout":
            _run(block, ROOT, environ)
        elif block.directive == "at scale":
            _at_scale(block, walk_folder, environ, request.getfixturevalue("postgres"), request.getfixturevalue("broker"))
        else:
            served_here = block.script.replace(f"127.0.0.1:{SERVE_PORT}", f"127.0.0.1:{port}")
            _run(block, walk_folder, environ, served_here.replace(f"--port {SERVE_PORT}", f"--port {port}"))
    eventually(lambda: not _running(walk_folder),  # a server asked to stop finishes its shutdown first
               "the processes README blocks started in the background to stop (a later block must stop each)", 10)
