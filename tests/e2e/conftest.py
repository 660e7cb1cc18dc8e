"""The `cli` fixture: every CLI scenario runs on the embedded default and on the scale deployment."""

from __future__ import annotations

import subprocess
import sys
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.e2e.agent import MODEL
from tests.e2e.cli import ROOT, Cli
from tests.messages_api import DEFAULT_INPUTS, MessagesApi
from tests.servers import Broker, Postgres, SmtpSink


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
    as `MODEL`, when the test asks for `messages_api`."""
    environ = {"LOOPLINE_SMTP_URL": smtp.url, "LOOPLINE_EMAIL_FROM": request.module.EMAIL_FROM}
    if "messages_api" in request.fixturenames:
        api = request.getfixturevalue("messages_api")
        environ |= {"ANTHROPIC_API_KEY": "sk-ant-test", "ANTHROPIC_BASE_URL": api.url, "LOOPLINE_MODEL": MODEL}
    return environ
@dataclass
class ScaleCli:
    settings: dict[str, str]
    cli: Cli
    worker: subprocess.Popen[bytes]


class ScaleClis:
    """Scale deployments for the `cli` fixture, each with its own database, topics and `loopline run` worker.

    A worker takes seconds to start and join its consumer group, so the next test's deployment is made
    while a test runs (and used if that test asks for the same settings), and a used worker is told to
    stop without waiting for it to exit: it is reaped at the end of the module. Each test still has
    a deployment of its own."""

    def __init__(self, postgres: Postgres, broker: Broker, folder: Path) -> None:
        self.postgres, self.broker, self.folder = postgres, broker, folder
        self.ready: ScaleCli | None = None
        self.stopped: list[subprocess.Popen[bytes]] = []
        self.asked: dict[str, str] | None = None
        self.made = 0

    def take(self, settings: dict[str, str]) -> ScaleCli:
        ready, self.ready = self.ready, None
        if ready is not None and ready.settings != settings:
            self.release(ready)
            ready = None
        taken = ready or self._make(settings)
        if settings == self.asked:  # asked twice in a row, so likely again (settings naming a test's own SMTP server are not)
            self.ready = self._make(settings)
        self.asked = settings
        return taken

    def _make(self, settings: dict[str, str]) -> ScaleCli:
        self.made += 1
        folder = self.folder / f"deployment-{self.made}"
        database = self.postgres.new_database()
        environ = {
            "LOOPLINE_EVENT_STORE": database, "LOOPLINE_READ_MODEL": database, "LOOPLINE_KAFKA": self.broker.bootstrap,
            "LOOPLINE_KAFKA_TOPIC_PREFIX": f"e2e{uuid.uuid4().hex[:8]}.", "LOOPLINE_KAFKA_PARTITIONS": "2", **settings,
        }
        cli = Cli(folder / "home", environ)
        assert cli("status").returncode == 0  # creates the topics before the worker subscribes
        with (folder / "worker.log").open("wb") as log:
            worker = subprocess.Popen(
                [sys.executable, "-c", "from loopline.cli.main import main; main()", "run", "--interval", "0.1", "--tick-every", "0"],
                cwd=ROOT, env=cli.environ, stdout=subprocess.DEVNULL, stderr=log,
            )
        return ScaleCli(settings, cli, worker)

    def release(self, used: ScaleCli) -> None:
        used.cli.close()
        used.worker.terminate()
        self.stopped.append(used.worker)

    def close(self) -> None:
        if self.ready is not None:
            self.release(self.ready)
        for worker in self.stopped:
            try:
                worker.wait(timeout=20)
            except subprocess.TimeoutExpired:
                worker.kill()
                worker.wait()


@pytest.fixture(scope="module")
def scale_clis(postgres: Postgres, broker: Broker, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ScaleClis]:
    """Per module: no worker of these outlives the module, where a test may look at every lock on the server."""
    made = ScaleClis(postgres, broker, tmp_path_factory.mktemp("scale"))
    yield made
    made.close()


@pytest.fixture
def embedded_cli(tmp_path: Path, cli_environ: dict[str, str]) -> Cli:
    """The embedded deployment alone, for a module whose subject is what happens after the edge (the words
    people read, the action contracts, what `tasks show` prints): the same code at scale, and the scale path
    itself (Kafka, the workers, the leader's projections and delivery), are the flows' subject."""
    return Cli(tmp_path / "home", cli_environ)


@pytest.fixture(params=["embedded", "scale"])
def cli(request: pytest.FixtureRequest, tmp_path: Path, cli_environ: dict[str, str]) -> Iterator[Cli]:
    """The same scenarios on the embedded default and on PostgreSQL + Kafka with a `loopline run` worker."""
    if request.param == "embedded":
        yield Cli(tmp_path / "home", cli_environ)
        return
    deployments: ScaleClis = request.getfixturevalue("scale_clis")
    deployment = deployments.take(cli_environ)
    try:
        yield deployment.cli
    finally:
        deployments.release(deployment)
