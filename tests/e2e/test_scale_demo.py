"""`make scale-demo` (cli/scale_demo.py) as a newcomer runs it: it plays, serves, and Ctrl-C leaves nothing running."""

from __future__ import annotations

import os
import queue
import re
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from http.cookiejar import CookieJar
from pathlib import Path

import psutil

from tests.servers import free_port
from tests.web.conftest import csrf_of

READY = "Ctrl-C stops everything it started."
TIMEOUT = 120.0


def _lines(process: subprocess.Popen[str]) -> queue.Queue[str | None]:
    """The process's output lines as they come (None at its end), read in a thread so waiting can time out."""
    lines: queue.Queue[str | None] = queue.Queue()

    def read() -> None:
        assert process.stdout is not None
        for line in process.stdout:
            lines.put(line)
        lines.put(None)

    threading.Thread(target=read, daemon=True).start()
    return lines


def _until(lines: queue.Queue[str | None], last: str, seen: list[str]) -> None:
    deadline = time.monotonic() + TIMEOUT
    while not seen or seen[-1].strip() != last:
        line = lines.get(timeout=max(deadline - time.monotonic(), 0.1))
        assert line is not None, "the demo ended early:\n" + "".join(seen)
        seen.append(line)


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: object, **kwargs: object) -> None:
        return None


def _logs_in(port: int, key: str) -> int:
    """The status of the dashboard's login form posted with `key` (303 to the dashboard when the key is live)."""
    browser = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(CookieJar()), _NoRedirect())
    with browser.open(f"http://127.0.0.1:{port}/login", timeout=10) as page:
        csrf = csrf_of(page.read().decode())
    form = urllib.parse.urlencode({"csrf": csrf, "key": key, "next": "/"}).encode()
    try:
        with browser.open(f"http://127.0.0.1:{port}/login", data=form, timeout=10) as answer:
            return int(answer.status)
    except urllib.error.HTTPError as error:
        return error.code


def test_the_scale_demo_plays_serves_and_stops_everything_it_started_on_ctrl_c(tmp_path: Path) -> None:
    port = free_port()
    # A session of its own, as a terminal's foreground job: Ctrl-C is SIGINT to the whole process group.
    demo = subprocess.Popen(
        [sys.executable, "-m", "loopline.cli.scale_demo", "--dir", str(tmp_path), "--port", str(port)],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    output: list[str] = []
    lines = _lines(demo)
    try:
        _until(lines, READY, output)
        text = "".join(output)
        started = [psutil.Process(int(pid)) for pid in re.findall(r"\(pid (\d+)", text)]
        started += psutil.Process(demo.pid).children(recursive=True)
        data = re.search(r"data in (\S+)\)", text)
        key = re.search(r"key \(shown once\): (\S+)", text)
        assert data and key, text
        assert "tick: 1 passed deadline acted on" in text, text
        assert len(re.findall(r"started worker-\d", text)) == 2

        with urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=10) as response:
            assert response.status == 200
        assert _logs_in(port, key[1]) == 303, "the key the demo printed does not log in to its dashboard"
        assert (tmp_path / "logs" / "serve.log").exists() and (tmp_path / "logs" / "worker-2.log").exists()
    finally:
        if demo.poll() is None:
            os.killpg(demo.pid, signal.SIGINT)
        returncode = demo.wait(timeout=90)
    _until(lines, f"stopped; the logs stay in {tmp_path / 'logs'}", output)
    assert returncode == 0, "".join(output)

    left = [process for process in started if process.is_running() and process.status() != psutil.STATUS_ZOMBIE]
    assert not left, f"still running after Ctrl-C: {left}"
    postgres_left = [process.pid for process in psutil.process_iter(["cmdline"])
                     if any(data[1] in part for part in process.info["cmdline"] or [])]
    assert not postgres_left, f"PostgreSQL processes left: {postgres_left}"
    assert not Path(data[1]).exists()
