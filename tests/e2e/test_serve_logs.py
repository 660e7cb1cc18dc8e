"""`loopline serve` as an operator runs it: every request is one JSON line on standard error (who asked, the
status, how long), and uvicorn's own messages come as JSON lines too, never as its plain access log."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import httpx

from tests.e2e.cli import ROOT, Cli
from tests.servers import free_port
from tests.waiting import eventually


def wait_until_answering(url: str, server: subprocess.Popen[str], timeout: float = 30.0) -> None:
    def answers() -> bool:
        assert server.poll() is None, server.stderr.read() if server.stderr else "serve exited"
        try:
            httpx.get(url, timeout=1.0)
        except httpx.TransportError:
            return False
        return True

    eventually(answers, f"serve to answer {url}", timeout)


def test_serve_logs_one_json_line_a_request_and_uvicorns_messages_as_json(tmp_path: Path) -> None:
    cli = Cli(tmp_path / "home")
    issued = json.loads(cli.run_json("keys", "create", "--operator", "--label", "scraper"))
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-c", "from loopline.cli.main import main; main()", "serve", "--port", str(port)],
        cwd=ROOT, env=cli.environ, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )
    try:
        wait_until_answering(f"http://127.0.0.1:{port}/healthz", server)
        metrics = httpx.get(f"http://127.0.0.1:{port}/metrics", headers={"authorization": f"Bearer {issued['key']}"})
        assert metrics.status_code == 200 and "loopline_messages_processed_total 0.0" in metrics.text
    finally:
        server.send_signal(signal.SIGINT)
        _, stderr = server.communicate(timeout=30)
    lines = stderr.splitlines()
    assert lines[0].startswith("serving the dashboard on http://127.0.0.1:")
    assert lines[0].endswith("applied at once; run `loopline run` beside it to deliver and decide")
    logged = [json.loads(line) for line in lines[1:]]  # every other line is JSON: no plain uvicorn line
    requests = [entry for entry in logged if entry["event"] == "http.request"]
    scrape = next(entry for entry in requests if entry["path"] == "/metrics")
    assert scrape["status"] == 200 and scrape["key_id"] == issued["key_id"] and scrape["tenant"] is None
    assert scrape["method"] == "GET" and scrape["duration_ms"] >= 0 and scrape["at"].endswith("Z")
    assert any(entry["event"] == "log" and entry["logger"].startswith("uvicorn") for entry in logged)
