"""Nothing is left in the temporary folder: not by `loopline demo`, and not by a test run, which fails
and names what a test left behind (tests/tmp_guard.py)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.e2e.cli import ROOT, Cli


def test_three_demos_leave_the_temporary_folder_empty(tmp_path: Path) -> None:
    scratch = _scratch(tmp_path)
    cli = Cli(tmp_path / "home", {"TMPDIR": str(scratch)})
    for _ in range(3):
        result = cli("demo")
        assert result.returncode == 0, result.stderr
        assert "task_abc" in result.stdout
        assert list(scratch.iterdir()) == []


def _pytest(folder: Path, scratch: Path, body: str) -> subprocess.Popen[str]:
    """A pytest run of one test file with the suite's temporary-folder check, with `scratch` as its TMPDIR."""
    test_file = folder / "test_inner.py"
    test_file.write_text(body)
    return subprocess.Popen(
        [sys.executable, "-m", "pytest", "-p", "tests.tmp_guard", "-p", "no:cacheprovider", "-q", str(test_file),
         "--rootdir", str(folder)],
        cwd=ROOT, env={**os.environ, "TMPDIR": str(scratch)}, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        text=True,
    )


def _finished(folder: Path, scratch: Path, body: str) -> tuple[int, str]:
    """`_pytest` run to its end: its return code and output."""
    run = _pytest(folder, scratch, body)
    output, _ = run.communicate(timeout=120)
    return run.returncode, output


def _scratch(tmp_path: Path) -> Path:
    """An empty folder for a run's TMPDIR, so what it leaves there can be seen."""
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    return scratch


def _folders(scratch: Path) -> list[str]:
    return sorted(path.name for path in scratch.iterdir())


def test_a_test_that_leaves_a_folder_fails_the_run_which_names_and_removes_it(tmp_path: Path) -> None:
    scratch = _scratch(tmp_path)
    leaks = "import tempfile\n\ndef test_leaks():\n    tempfile.mkdtemp(prefix='leaky-')\n"
    returncode, output = _finished(tmp_path, scratch, leaks)
    assert returncode == 1, output
    assert "1 passed" in output
    assert "temporary files left behind" in output and "leaky-" in output
    assert _folders(scratch) == []


def test_a_run_whose_tests_use_tmp_path_passes_and_leaves_nothing(tmp_path: Path) -> None:
    scratch = _scratch(tmp_path)
    returncode, output = _finished(tmp_path, scratch, "def test_writes(tmp_path):\n    (tmp_path / 'f').write_text('x')\n")
    assert returncode == 0, output
    assert "left behind" not in output
    assert _folders(scratch) == []


def test_the_folder_of_a_killed_run_is_removed_by_the_next_run(tmp_path: Path) -> None:
    scratch = _scratch(tmp_path)
    killed = _pytest(tmp_path, scratch, "import time\n\ndef test_sleeps():\n    time.sleep(60)\n")
    deadline = time.monotonic() + 60
    while not _folders(scratch) and time.monotonic() < deadline:
        time.sleep(0.1)
    killed.send_signal(signal.SIGKILL)
    killed.communicate(timeout=30)
    assert [name for name in _folders(scratch) if name.startswith("loopline-tests-")], "the killed run had no folder"

    returncode, output = _finished(tmp_path, scratch, "def test_nothing():\n    pass\n")
    assert returncode == 0, output
    assert _folders(scratch) == []
