"""The `cli` fixture: every CLI scenario runs on the embedded default and on the scale deployment."""

from __future__ import annotations

import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.cli import ROOT, Cli


@pytest.fixture
def cli_environ() -> dict[str, str]:
    """Extra settings for every `loopline` process of a test (a module overrides it, e.g. to add SMTP)."""
    return {}


@pytest.fixture(params=["embedded", "scale"])
def cli(request: pytest.FixtureRequest, tmp_path: Path, cli_environ: dict[str, str]) -> Iterator[Cli]:
    """The same scenarios on the embedded default and on PostgreSQL + Kafka with a `loopline run` worker."""
    if request.param == "embedded":
        yield Cli(tmp_path / "home", cli_environ)
        return
    database = request.getfixturevalue("postgres").new_database()
    environ = {
        "LOOPLINE_EVENT_STORE": database, "LOOPLINE_READ_MODEL": database,
        "LOOPLINE_KAFKA": request.getfixturevalue("broker").bootstrap,
        "LOOPLINE_KAFKA_TOPIC_PREFIX": f"e2e{uuid.uuid4().hex[:8]}.", "LOOPLINE_KAFKA_PARTITIONS": "2",
        **cli_environ,
    }
    cli = Cli(tmp_path / "home", environ)
    assert cli("status").returncode == 0  # creates the topics before the worker subscribes
    worker = subprocess.Popen(
        [sys.executable, "-c", "from loopline.cli.main import main; main()", "run", "--interval", "0.1", "--tick-every", "0"],
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
