"""Failures a newcomer meets, through the `loopline` command: one or two lines saying what failed and
what to check, and an exit code per kind of failure (README "CLI", exit codes)."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import command
from tests.e2e.cli import ROOT, Cli
from tests.servers import Broker, Postgres, free_port

DEPENDENCY_UNAVAILABLE = 3


@pytest.fixture
def silent_port() -> Iterator[int]:
    """A port that accepts connections and never says a word: a server that hangs."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    accepted: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        listener.settimeout(0.2)
        while not stop.is_set():
            try:
                accepted.append(listener.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield listener.getsockname()[1]
    stop.set()
    thread.join()
    for connection in accepted:
        connection.close()
    listener.close()


def assert_one_failure(result: object, code: int, *words: str) -> None:
    stderr = result.stderr  # type: ignore[attr-defined]
    assert result.returncode == code, stderr  # type: ignore[attr-defined]
    assert "Traceback" not in stderr and len(stderr.strip().splitlines()) <= 2, stderr
    for word in words:
        assert word in stderr, stderr


def postgres_addresses(postgres: Postgres) -> list[str]:
    """A closed TCP port, and where the suite's server is not: its socket folder on another port."""
    from psycopg.conninfo import conninfo_to_dict

    closed = [f"postgresql://postgres@127.0.0.1:{free_port()}/loopline"]
    host = str(conninfo_to_dict(postgres.url).get("host") or "")
    if host.startswith("/"):
        closed.append(f"postgresql://postgres@/loopline?host={host}&port={free_port()}")
    return closed


@pytest.fixture
def cli_embedded(tmp_path: Path) -> Cli:
    return Cli(tmp_path / "home")


def loopline(home: Path, *args: str, environ: dict[str, str] | None = None, stdin: str | None = None,
             cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    """`loopline` in a subprocess that waits for no worker (Cli.settle would, at scale), in `cwd`,
    where its loopline.toml is read."""
    return subprocess.run(
        [sys.executable, "-c", "from loopline.cli.main import main; main()", *args], cwd=cwd, input=stdin,
        env={"LOOPLINE_HOME": str(home), "PATH": "/usr/bin:/bin", "COLUMNS": "200", **(environ or {})},
        capture_output=True, text=True, timeout=120,
    )


def test_unreachable_postgresql_is_one_line_naming_the_setting_and_exit_3(tmp_path: Path, postgres: Postgres) -> None:
    for url in postgres_addresses(postgres):
        cli = Cli(tmp_path / "home", {"LOOPLINE_EVENT_STORE": url, "LOOPLINE_READ_MODEL": url})
        for args in (("status",), ("tasks", "list"), ("tick", "--now", "now")):
            assert_one_failure(cli(*args), DEPENDENCY_UNAVAILABLE, "PostgreSQL is unreachable", "LOOPLINE_EVENT_STORE")
    assert not (tmp_path / "home").exists()  # nothing was created for a command that could not run


def test_a_postgresql_that_never_answers_fails_after_the_configured_wait(tmp_path: Path, silent_port: int) -> None:
    url = f"postgresql://postgres@127.0.0.1:{silent_port}/loopline"
    cli = Cli(tmp_path / "home", {"LOOPLINE_READ_MODEL": url, "LOOPLINE_CONNECT_TIMEOUT": "1"})
    started = time.monotonic()
    result = cli("tasks", "list")
    assert_one_failure(result, DEPENDENCY_UNAVAILABLE, "no answer within 1 s", "LOOPLINE_READ_MODEL")
    assert time.monotonic() - started < 10  # libpq alone would wait its connect_timeout, Kafka clients 30 s


def test_unreachable_kafka_is_one_line_naming_the_setting_and_exit_3(tmp_path: Path) -> None:
    stopped = Broker()  # started, then stopped: its port refuses connections
    stopped.stop()
    for bootstrap in (f"127.0.0.1:{free_port()}", stopped.bootstrap):
        cli = Cli(tmp_path / "home", {"LOOPLINE_KAFKA": bootstrap})
        started = time.monotonic()
        assert_one_failure(cli("status"), DEPENDENCY_UNAVAILABLE, "Kafka is unreachable", "LOOPLINE_KAFKA", bootstrap)
        assert time.monotonic() - started < 20


def test_a_kafka_that_never_answers_fails_after_the_configured_wait(tmp_path: Path, silent_port: int) -> None:
    environ = {"LOOPLINE_KAFKA": f"127.0.0.1:{silent_port}", "LOOPLINE_CONNECT_TIMEOUT": "1"}
    started = time.monotonic()
    message = json.dumps(command("m1", "task.create", "2026-03-13T10:00:00Z", task_id="t", title="T"))
    result = loopline(tmp_path / "home", "publish", "-", environ=environ, stdin=message)
    assert_one_failure(result, DEPENDENCY_UNAVAILABLE, "Kafka is unavailable", "LOOPLINE_KAFKA")
    assert time.monotonic() - started < 15  # kafka-python's own bootstrap wait is 30 s


def test_debug_keeps_the_traceback(tmp_path: Path) -> None:
    cli = Cli(tmp_path / "home", {"LOOPLINE_KAFKA": f"127.0.0.1:{free_port()}"})
    result = cli("--debug", "status")
    assert result.returncode != 0 and "Traceback" in result.stderr and "DependencyUnavailable" in result.stderr


@pytest.mark.parametrize(("content", "words"), [
    (b'LOOPLINE_HOME = \n', ["loopline.toml is not valid TOML", "line 1"]),
    (b'LOOPLINE_HOME = "caf\xe9"\n', ["loopline.toml is not UTF-8"]),
    (b'LOOPLINE_HOMEE = "elsewhere"\n', ["unknown key LOOPLINE_HOMEE", "LOOPLINE_HOME,"]),
])
def test_a_bad_loopline_toml_is_one_line_and_exit_2(tmp_path: Path, content: bytes, words: list[str]) -> None:
    workdir = tmp_path / "project"
    workdir.mkdir()
    (workdir / "loopline.toml").write_bytes(content)
    assert_one_failure(loopline(tmp_path / "home", "tasks", "list", cwd=workdir), 2, *words)


def test_a_home_that_cannot_be_created_is_one_line_and_exit_2(tmp_path: Path) -> None:
    (tmp_path / "a-file").write_text("")
    assert_one_failure(loopline(tmp_path / "a-file" / "home", "tasks", "list"), 2, "LOOPLINE_HOME=", "cannot be created")


def test_a_utf16_file_is_refused_as_a_whole_in_one_line(cli_embedded: Cli, tmp_path: Path) -> None:
    path = tmp_path / "messages.jsonl"
    line = json.dumps(command("m1", "task.create", "2026-03-13T10:00:00Z", task_id="t", title="T")) + "\n"
    path.write_bytes(line.encode("utf-16"))
    assert_one_failure(cli_embedded("publish", str(path)), 2, "is UTF-16 text", f"iconv -f UTF-16 -t UTF-8 {path}")
    path.write_bytes(b"\xef\xbb\xbf" + line.encode())  # a UTF-8 byte-order mark, as some editors write
    assert cli_embedded("publish", str(path)).returncode == 0


def test_pretty_printed_json_gets_one_hint_and_domain_rejects_name_their_line(cli_embedded: Cli, tmp_path: Path) -> None:
    pretty = tmp_path / "pretty.json"
    pretty.write_text(json.dumps(command("m1", "task.create", "2026-03-13T10:00:00Z", task_id="t", title="T"), indent=2))
    result = cli_embedded("publish", str(pretty))
    assert result.returncode == 4
    assert result.stderr.count("one JSON object per line") == 1

    mixed = [command("m1", "task.create", "2026-03-13T10:00:00Z", task_id="t", title="T"),
             command("m2", "task.complete", "2026-03-13T10:00:00Z", task_id="nope", summary="done")]
    result = cli_embedded.publish(tmp_path, mixed, "mixed")
    assert result.returncode == 1
    assert "line 2, message m2 (task.complete): tenant 'user_xyz' has no task 'nope'" in result.stderr
    report = json.loads(cli_embedded("publish", "-", "--json", stdin="\n" + json.dumps(
        command("m3", "task.complete", "2026-03-13T10:00:00Z", task_id="other", summary="done"))).stdout)
    assert [(r["line"], r["id"]) for r in report["rejected"]] == [(2, "m3")]


def test_a_repeated_id_with_other_content_and_a_retitled_task_create_are_warned_of(cli_embedded: Cli, tmp_path: Path) -> None:
    messages = [
        command("m1", "task.create", "2026-03-13T10:00:00Z", task_id="t", title="Book the venue"),
        command("m1", "task.create", "2026-03-13T10:00:00Z", task_id="t", title="Book the venue"),
        command("m1", "task.create", "2026-03-13T10:00:00Z", task_id="t", title="Cancel the venue"),
        command("m2", "task.create", "2026-03-13T10:05:00Z", task_id="t", title="Cancel the venue"),
    ]
    result = cli_embedded.publish(tmp_path, messages, "repeats")
    assert result.returncode == 0
    warnings = [line for line in result.stderr.splitlines() if line.startswith("warning")]
    assert len(warnings) == 2, result.stderr
    assert "line 3, message m1: its id was received before with different content" in warnings[0]
    assert "line 4, message m2: task t already exists with the title 'Book the venue'" in warnings[1]
    assert [t["title"] for t in cli_embedded.json("tasks", "list")] == ["Book the venue"]  # neither applied
    report = json.loads(cli_embedded("publish", str(tmp_path / "repeats.jsonl"), "--json").stdout)
    assert [w["line"] for w in report["warnings"]] == [3]  # m2 is now a plain repeat: nothing new to say


def test_publish_says_how_many_lines_took_effect_and_why_the_others_were_refused(cli_embedded: Cli, tmp_path: Path) -> None:
    messages = [
        command("m1", "task.create", "2026-03-13T10:00:00Z", task_id="t1", title="Book the venue"),
        command("m2", "task.create", "2026-03-13T10:00:00Z", task_id="t2", title="Win Ann back", task_type="winback",
                contact="ann@example.com"),
        command("m3", "task.create", "2026-03-13T10:00:00Z", task_id="t3", title="Card failed",
                task_type="payment_recovery", contact="not-an-email"),
        command("m4", "task.complete", "2026-03-13T10:00:00Z", task_id="nope", summary="done"),
    ]
    first = cli_embedded.publish(tmp_path, messages, "mixed")
    assert first.returncode == 1
    assert first.stdout.strip() == "read 4 lines: 1 took effect, 3 refused"
    assert "line 2: data.task_type: unknown task type 'winback'; did you mean 'win_back'?" in first.stderr
    assert "line 3: data.contact: 'not-an-email' is not an email address" in first.stderr
    assert [t["task_id"] for t in cli_embedded.json("tasks", "list")] == ["t1"]  # nothing else half-applied

    again = cli_embedded("publish", str(tmp_path / "mixed.jsonl"))
    assert again.stdout.strip() == "read 4 lines: 0 took effect, 2 refused, 2 already received before (ignored)"


def test_task_status_filter_is_validated_and_case_insensitive(cli_embedded: Cli, tmp_path: Path) -> None:
    cli_embedded.publish(tmp_path, [command("m1", "task.create", "2026-03-13T10:00:00Z", task_id="t", title="T")], "one")
    bogus = cli_embedded("tasks", "list", "--status", "bogus")
    assert bogus.returncode == 2 and "'bogus' is not one of" in bogus.stderr and "'waiting'" in bogus.stderr
    assert [t["task_id"] for t in cli_embedded.json("tasks", "list", "--status", "EXECUTING")] == ["t"]
    assert cli_embedded.json("tasks", "list", "--status", "WAITING") == []


def test_tick_now_follows_the_message_time_rule_and_accepts_now(cli_embedded: Cli) -> None:
    no_zone = cli_embedded("tick", "--now", "2026-03-16T10:00:00")
    assert_one_failure(no_zone, 2, "must be an RFC 3339 time with a time zone", "or now")
    assert cli_embedded("tick", "--now", "now").returncode == 0
    assert cli_embedded("tasks", "context", "user_xyz", "--now", "2026-03-16").returncode == 2


def test_a_query_in_a_folder_without_a_home_says_it_created_one(tmp_path: Path) -> None:
    cli = Cli(tmp_path / "fresh")
    first = cli("tasks", "list")
    assert first.returncode == 0 and f"created a new Loopline home at {tmp_path / 'fresh'}" in first.stderr
    assert "created" not in cli("tasks", "list").stderr


def test_version_and_flags_shown_as_flags(tmp_path: Path) -> None:
    cli = Cli(tmp_path / "home")
    version = cli("--version")
    assert version.returncode == 0 and version.stdout.startswith("loopline 0.")
    for args in (("tasks", "list"), ("publish",), ("status",), ("loops", "list")):
        shown = cli(*args, "--help").stdout
        [json_line] = [line for line in shown.splitlines() if "--json" in line]
        assert "<bool>" not in shown and "Print JSON" in json_line
    top = cli("--help").stdout
    assert "<bool>" not in top and "--help" in top and "Play seed" not in top
