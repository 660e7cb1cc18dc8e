"""What users wrote is printed as they wrote it: rich markup in titles, notes, reasons or ids neither
restyles nor crashes the `loopline` command. Embedded, as the printing code is shared, and a scale
worker for the lines only it prints."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from loopline.adapters.messages import InvalidMessage, parse_message
from loopline.domain.timeutil import format_time
from tests.conftest import build_system, command
from tests.e2e.cli import ROOT, Cli
from tests.e2e.scale import ScaleDeployment
from tests.integration.helpers import tick
from tests.servers import Broker, Postgres, WebhookReceiver
from tests.unit.fakes import FakeClock

MARKUP = ["[/x]", "[bold red]", "[link=file:///etc/passwd]x[/link]"]
T0 = "2026-03-13T10:00:00Z"


def _accepted_as_id(text: str) -> bool:
    try:
        parse_message(json.dumps(command("probe", "task.create", T0, task_id=text, title="probe")))
    except InvalidMessage:
        return False
    return True


# The input edge may come to refuse brackets in ids; free text is tested whatever it decides.
IDS = [text for text in MARKUP if _accepted_as_id(text)]


def flat(text: str) -> str:
    """Output with the terminal's line wrapping undone."""
    return " ".join(text.split())


def assert_printed_as_written(result: subprocess.CompletedProcess[str], *texts: str) -> None:
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    for text in texts:
        assert text in flat(result.stdout), f"{text!r} not printed as written"


@pytest.fixture(scope="module")
def cli(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cli]:
    """One home whose tasks carry markup in every free-text field, and in ids where the edge takes them."""
    tmp = tmp_path_factory.mktemp("markup")
    cli = Cli(tmp / "home")
    messages = []
    for n, text in enumerate(MARKUP):
        messages += [
            command(f"c{n}", "task.create", T0, task_id=f"t{n}", title=text, description=text),
            command(f"u{n}", "task.update", T0, task_id=f"t{n}", notes=text),
            command(f"a{n}", "action.record", T0, task_id=f"t{n}", action="send_email", to=f"p{n}@x.example", summary=text),
        ]
    for n, text in enumerate(IDS):
        messages += [
            command(f"i{n}", "task.create", T0, task_id=text, title=f"task {n}"),
            command(f"l{n}", "loop.register", T0, task_id=text, loop_id=f"{text}/early", channel="email",
                    watch={"sender": "z@x.example"}, deadline="2026-03-14T10:00:00Z", if_unresolved="notify_user"),
            command(f"k{n}", "loop.register", T0, task_id=text, loop_id=f"{text}/late", channel="email",
                    watch={"sender": "z@x.example"}, deadline="2026-03-20T10:00:00Z", if_unresolved="notify_user"),
        ]
    assert_printed_as_written(cli.publish(tmp, messages, "setup"))
    yield cli
    cli.close()


def test_publish_prints_rejection_reasons_that_quote_input_as_written(cli: Cli, tmp_path: Path) -> None:
    lines = [
        command("r1", MARKUP[0], T0, task_id="t0"),  # refused at the edge: unknown type
        command("r2", "loop.register", T0, task_id="t0", loop_id="r2", channel=MARKUP[1], watch={"sender": "a@b.c"},
                deadline="2026-03-20T10:00:00Z", if_unresolved="notify_user"),  # refused once processed
        *[command(f"r3-{n}", "task.complete", T0, task_id=f"{text}-missing", summary="done") for n, text in enumerate(IDS)],
    ]
    result = cli.publish(tmp_path, lines, f"in{MARKUP[1]}")

    assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr
    for text in [MARKUP[0], MARKUP[1], f"in{MARKUP[1]}.jsonl", *[f"{text}-missing" for text in IDS]]:
        assert text in flat(result.stderr)


def test_tasks_show_prints_title_notes_and_ids_as_written(cli: Cli) -> None:
    for n, text in enumerate(MARKUP):
        shown = cli("tasks", "show", f"t{n}")
        assert_printed_as_written(shown, f"title: {text}", f"last_note: {text}")
        assert "[bold]" not in shown.stdout  # labels are styled, not printed as tags
    for text in IDS:
        assert_printed_as_written(cli("tasks", "show", text), f"task_id: {text}", f"{text}/early")


def test_tasks_list_loops_list_and_context_print_titles_and_ids_as_written(cli: Cli) -> None:
    assert_printed_as_written(cli("tasks", "list"), *MARKUP, *IDS)
    assert_printed_as_written(cli("loops", "list"), *[f"{text}/early" for text in IDS])
    assert_printed_as_written(cli("tasks", "context", "user_xyz", "--task", "t0", "--now", T0), *MARKUP)


def test_audit_prints_summaries_and_ids_as_written(cli: Cli) -> None:
    for n, text in enumerate(MARKUP):
        assert_printed_as_written(cli("audit", f"t{n}"), text)
    for text in IDS:
        assert_printed_as_written(cli("audit", text), f"audit {text}")
    unknown = cli("audit", f"{MARKUP[0]}-none")
    assert unknown.returncode == 1 and f"no events for task '{MARKUP[0]}-none'" in flat(unknown.stderr), unknown.stderr


def test_tasks_files_prints_its_folder_and_files_as_written(cli: Cli) -> None:
    for n, text in enumerate(MARKUP):
        assert_printed_as_written(cli("tasks", "files", f"t{n}", "progress.md"), text)
    for text in IDS:
        assert_printed_as_written(cli("tasks", "files", text), f"tasks/{text}/")
    missing = cli("tasks", "files", "t0", MARKUP[1])
    assert missing.returncode == 1 and f"task t0 has no file '{MARKUP[1]}'" in flat(missing.stderr), missing.stderr


def test_tick_and_run_print_the_actions_they_took_as_written(cli: Cli) -> None:
    if not IDS:
        pytest.skip("the input edge refuses markup in ids, and tick and run print nothing else users wrote")
    assert_printed_as_written(cli("tick", "--now", "2026-03-15T10:00:00Z"), *[f"{text}/early: " for text in IDS])
    assert_printed_as_written(cli("run", "--once", "--tick-every", "0"), *[f"{text}/late: " for text in IDS])


def test_status_prints_a_parked_delivery_as_written(tmp_path: Path) -> None:
    """The delivery error quotes the configured address; the parked row names the task."""
    home, receiver = tmp_path / "home", WebhookReceiver("s3cret", failures=1_000)
    environ = {"LOOPLINE_WEBHOOK_URL": f"{receiver.url}/{MARKUP[0]}", "LOOPLINE_WEBHOOK_SECRET": "s3cret"}
    task = IDS[0] if IDS else "t1"
    system, clock = build_system(home, **environ), FakeClock()
    system.delivery.clock = clock
    try:
        system.log.append([parse_message(json.dumps(m)) for m in [
            command("c1", "task.create", T0, task_id=task, title=MARKUP[1]),
            command("c2", "action.record", T0, task_id=task, action="send_email", to="p@x.example"),
        ]], "test")
        system.drain()
        tick(system, "2026-03-17T10:00:00Z")
        for _ in range(10):
            clock.moment += timedelta(hours=1)
            system.drain()
    finally:
        system.close()
        receiver.stop()
    assert_printed_as_written(Cli(home, environ)("status"), f"/{MARKUP[0]}", task)


def test_a_scale_worker_prints_the_actions_it_took_as_written(postgres: Postgres, broker: Broker, tmp_path: Path) -> None:
    if not IDS:
        pytest.skip("the input edge refuses markup in ids, and a worker prints nothing else users wrote")
    deployment = ScaleDeployment(postgres, broker, tmp_path / "home")
    output = tmp_path / "worker.log"
    # Dated by the wall clock the worker's leader ticks at, so the deadlines have passed when it does.
    at = datetime.now(timezone.utc) - timedelta(days=2)
    deployment.publish([
        message
        for n, text in enumerate(IDS)
        for message in (
            command(f"i{n}", "task.create", format_time(at), task_id=text, title=f"task {n}"),
            command(f"l{n}", "loop.register", format_time(at), task_id=text, loop_id=f"{text}/early", channel="email",
                    watch={"sender": "z@x.example"}, deadline=format_time(at + timedelta(days=1)),
                    if_unresolved="notify_user"),
        )
    ])
    environ = {**os.environ, **deployment.environ, "PYTHONUNBUFFERED": "1", "COLUMNS": "200"}
    with output.open("wb") as sink:
        worker = subprocess.Popen(
            [sys.executable, "-c", "from loopline.cli.main import main; main()", "run", "--interval", "0.2", "--tick-every", "1"],
            cwd=ROOT, env=environ, stdout=sink, stderr=subprocess.STDOUT,
        )
    try:
        deadline = time.monotonic() + 90
        while not all(f"{text}/early: " in flat(output.read_text()) for text in IDS):
            assert worker.poll() is None and time.monotonic() < deadline, output.read_text()
            time.sleep(0.2)
        assert "Traceback" not in output.read_text()
    finally:
        worker.terminate()
        worker.wait(timeout=30)
        deployment.close()
