"""Shared fixtures: a real embedded system on a temporary LOOPLINE_HOME, and message builders."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from loopline.adapters.config import Settings
from loopline.adapters.messages import parse_message
from loopline.runtime.bootstrap import build
from loopline.runtime.system import DrainReport, System
from tests.servers import Broker, Postgres, SmtpSink

pytest_plugins = ["tests.tmp_guard"]  # the run's own temporary folder, checked to be left empty


ANY_HOUR = {"send_window_start": 0, "send_window_end": 24}
"""A send window open all day: for `tenant.configure` in tests whose clock walks through the night."""


def command(ref: str, type_: str, at: str, tenant: str = "user_xyz", **data: Any) -> dict[str, Any]:
    return {"kind": "command", "id": ref, "type": type_, "tenant": tenant, "at": at, "data": data}


def signal(ref: str, type_: str, at: str, tenant: str = "user_xyz", **data: Any) -> dict[str, Any]:
    return {"kind": "signal", "id": ref, "type": type_, "tenant": tenant, "at": at, "data": data}


def build_system(home: Path, **environ: str) -> System:
    return build(Settings.load({"LOOPLINE_HOME": str(home), **environ}, config_file=home / "loopline.toml"))


def publish(system: System, *messages: dict[str, Any]) -> DrainReport:
    """Appends messages to the embedded log and drains every processor, as `loopline publish` does."""
    system.log.append([parse_message(json.dumps(m)) for m in messages], "test")
    return system.drain()


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


@pytest.fixture(scope="session")
def postgres() -> Iterator[Postgres]:
    started = Postgres()
    yield started
    started.stop()


@pytest.fixture(scope="session")
def broker() -> Iterator[Broker]:
    started = Broker()
    yield started
    started.stop()


@pytest.fixture(params=["sqlite", "postgres"])
def store_environ(request: pytest.FixtureRequest) -> dict[str, str]:
    """The same test body against the SQLite and the PostgreSQL event store and read models."""
    if request.param == "sqlite":
        return {}
    database = request.getfixturevalue("postgres").new_database()
    return {"LOOPLINE_EVENT_STORE": database, "LOOPLINE_READ_MODEL": database}


@pytest.fixture
def system(home: Path, store_environ: dict[str, str]) -> Iterator[System]:
    built = build_system(home, **store_environ)
    yield built
    built.close()


@pytest.fixture
def smtp() -> Iterator[SmtpSink]:
    sink = SmtpSink()
    yield sink
    sink.stop()
