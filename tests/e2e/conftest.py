"""The `cli` fixture: every CLI scenario runs on the embedded default and on the scale deployment."""

from __future__ import annotations

import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.cli import ROOT, Cli
from tests.messages_api import DEFAULT_INPUTS, MessagesApi
from tests.servers import SmtpSink


@pytest.fixture
def cli_environ() -> dict[str, str]:
    """Extra settings for every `loopline` process of a test (a module overrides it, e.g. to add SMTP)."""
    return {}


@pytest.fixture
def messages_api(request: pytest.FixtureRequest) -> Iterator[MessagesApi]:
    """A local Messages API server that drafts the test module's `MODEL_DRAFT`."""
    with MessagesApi(default_inputs={**DEFAULT_INPUTS, "draft_message": request.module.MODEL_DRAFT}) as api:
        yield api


@pytest.fixture
def mail_and_model_environ(request: pytest.FixtureRequest, smtp: SmtpSink) -> dict[str, str]:
    """SMTP from the module's `EMAIL_FROM` always; the Anthropic adapter on the local Messages API server,
    as the module's `MODEL`, when the test asks for `messages_api`."""
    environ = {"LOOPLINE_SMTP_URL": smtp.url, "LOOPLINE_EMAIL_FROM": request.module.EMAIL_FROM}
    if "messages_api" in request.fixturenames:
        api = request.getfixturevalue("messages_api")
        environ |= {"ANTHROPIC_API_KEY": "sk-ant-test", "ANTHROPIC_BASE_URL": api.url, "LOOPLINE_MODEL": request.module.MODEL}
    return environ


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
