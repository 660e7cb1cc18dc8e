"""A pytest plugin: the suite leaves the temporary folder as it found it.

Each run gets its own folder, `$TMPDIR/loopline-tests-PID-…`: TMPDIR points there for the test
process and every process it starts, and pytest's `tmp_path` folders live in it. At the end of the
session anything left there except pytest's own folder is a leak: the run fails and lists it, then
the folder is removed. Entries that appeared directly in the system temporary folder are listed too;
they fail the run under CI, where nothing else writes there (on a shared machine other processes do).
A folder left by a run that was killed is removed, with its PostgreSQL stopped, by the next run.
"""

from __future__ import annotations

import os
import shutil
import signal
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

PREFIX = "loopline-tests-"
PYTEST_FOLDER = "pytest"
APPEARED_SHOWN = 20


@dataclass
class TmpGuard:
    system_tmp: Path
    own: Path
    before: set[str] = field(default_factory=set)
    left: list[str] = field(default_factory=list)
    appeared: list[str] = field(default_factory=list)

    @classmethod
    def start(cls) -> TmpGuard:
        """Sweeps folders of killed runs, notes what the system temporary folder holds, and points TMPDIR at a new own folder."""
        system_tmp = Path(tempfile.gettempdir())
        _sweep_killed_runs(system_tmp)
        own = Path(tempfile.mkdtemp(prefix=f"{PREFIX}{os.getpid()}-", dir=system_tmp))
        guard = cls(system_tmp, own, set(os.listdir(system_tmp)))
        os.environ["TMPDIR"] = str(own)
        tempfile.tempdir = None  # gettempdir() caches its answer; let it read TMPDIR again
        return guard

    def finish(self) -> None:
        """Notes what was left in the run's own folder and what appeared beside it, then removes the folder."""
        self.left = sorted(path.name for path in self.own.iterdir() if path.name != PYTEST_FOLDER)
        _remove(self.own)
        appeared = set(os.listdir(self.system_tmp)) - self.before
        self.appeared = sorted(name for name in appeared if not name.startswith(PREFIX))  # other runs' own folders

    @property
    def failed(self) -> bool:
        return bool(self.left or (self.appeared and os.environ.get("CI")))


GUARD = pytest.StashKey[TmpGuard]()


@pytest.hookimpl(tryfirst=True)  # before pytest's tmp_path factory reads --basetemp
def pytest_configure(config: pytest.Config) -> None:
    guard = config.stash[GUARD] = TmpGuard.start()
    if config.option.basetemp is None:
        config.option.basetemp = str(guard.own / PYTEST_FOLDER)


@pytest.hookimpl(trylast=True)  # after the session's fixtures (servers, folders) are torn down
def pytest_sessionfinish(session: pytest.Session) -> None:
    guard = session.config.stash[GUARD]
    guard.finish()
    if guard.failed and session.exitstatus == pytest.ExitCode.OK:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_unconfigure(config: pytest.Config) -> None:
    """Also when no session ran (`pytest --help`, a usage error), the folder goes."""
    guard = config.stash.get(GUARD, None)
    if guard is not None:
        _remove(guard.own)


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    guard = config.stash[GUARD]
    if guard.left:
        terminalreporter.section("temporary files left behind", red=True)
        terminalreporter.write_line(f"the run fails: tests left these in its temporary folder {guard.own}:")
        for name in guard.left:
            terminalreporter.write_line(f"  {name}")
    if guard.appeared:
        terminalreporter.section(f"new in {guard.system_tmp}", **({"red": True} if os.environ.get("CI") else {"yellow": True}))
        terminalreporter.write_line("these appeared during the run (under CI the run fails; elsewhere they may be another process's):")
        for name in guard.appeared[:APPEARED_SHOWN]:
            terminalreporter.write_line(f"  {name}")
        if len(guard.appeared) > APPEARED_SHOWN:
            terminalreporter.write_line(f"  … and {len(guard.appeared) - APPEARED_SHOWN} more")


def _remove(folder: Path) -> None:
    """Removes a run's folder after stopping any PostgreSQL server still running on a data folder inside it."""
    for pidfile in folder.glob("*/data/postmaster.pid"):
        try:
            pid = int(pidfile.read_text().split()[0])
            os.kill(pid, signal.SIGQUIT)  # immediate shutdown, as `pg_ctl -m immediate stop`
        except (ValueError, IndexError, ProcessLookupError, PermissionError):
            continue
        deadline = time.monotonic() + 10
        while _running(pid) and time.monotonic() < deadline:
            time.sleep(0.1)
    shutil.rmtree(folder, ignore_errors=True)


def _sweep_killed_runs(system_tmp: Path) -> None:
    for folder in system_tmp.glob(f"{PREFIX}*"):
        pid = folder.name.removeprefix(PREFIX).split("-")[0]
        if pid.isdigit() and not _running(int(pid)):
            _remove(folder)


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
