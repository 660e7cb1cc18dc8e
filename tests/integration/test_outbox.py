"""The outbox against real channels: the JSONL file, a local SMTP server and a local webhook receiver."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path

import pytest

from loopline.domain.timeutil import parse_time
from loopline.runtime.system import System
from tests.conftest import build_system, command, publish
from tests.e2e.cli import Cli
from tests.integration.helpers import outbox, tick
from tests.servers import SmtpSink, WebhookReceiver
from tests.unit.fakes import FakeClock

SECRET = "s3cret"
RAHUL = "rahul@company.com"
FLOW_1 = [
    command("m1", "task.create", "2026-03-13T10:00:00Z", task_id="task_abc", title="Schedule meeting with Rahul"),
    command("m2", "action.record", "2026-03-13T10:00:00Z", task_id="task_abc", action="send_email", to=RAHUL,
            thread_id="gmail_thread_xyz", subject="Meeting next week?"),
]
AFTER_DEADLINE = "2026-03-16T10:00:01Z"


@pytest.fixture
def receiver() -> Iterator[WebhookReceiver]:
    started = WebhookReceiver(SECRET)
    yield started
    started.stop()


@contextmanager
def _flow_1_past_deadline_with_webhook(
    home: Path, store_environ: dict[str, str], receiver: WebhookReceiver
) -> Iterator[tuple[System, FakeClock]]:
    """A system posting to `receiver`, with Flow 1 played past its deadline; closed on leaving.

    Its outbox runs on a fake clock the test moves (`_hours_pass`), so retries come due without waiting."""
    clock = FakeClock()
    system = build_system(home, LOOPLINE_WEBHOOK_URL=receiver.url, LOOPLINE_WEBHOOK_SECRET=SECRET, **store_environ)
    system.delivery.clock = clock
    try:
        publish(system, *FLOW_1)
        tick(system, AFTER_DEADLINE)
        yield system, clock
    finally:
        system.close()


def _hours_pass(system: System, clock: FakeClock, hours: int) -> None:
    """Hour by hour the clock moves on and the outbox drains, so each failed delivery's next retry comes due."""
    for _ in range(hours):
        clock.moment += timedelta(hours=1)
        system.drain()


def test_a_torn_last_line_is_repaired_and_later_deliveries_go_on(system: System, home: Path) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "outbox.jsonl").write_text('{"key": "dead:1", "to": "user", "te')  # a writer died mid-line

    publish(system, *FLOW_1)
    tick(system, AFTER_DEADLINE)

    lines = (home / "outbox.jsonl").read_text().splitlines()
    sent = [json.loads(line) for line in lines]  # every line is whole JSON again
    assert [line["kind"] for line in sent] == ["send_email", "followup_sent"]
    assert len({line["key"] for line in sent}) == len(sent)


def test_a_key_another_process_already_appended_is_not_written_again(system: System, home: Path, store_environ: dict[str, str]) -> None:
    publish(system, *FLOW_1)
    other = build_system(home, **store_environ)
    try:
        tick(other, AFTER_DEADLINE)
        tick(system, AFTER_DEADLINE)
    finally:
        other.close()

    keys = [line["key"] for line in outbox(home)]
    assert len(keys) == 2 and len(set(keys)) == 2


def test_without_smtp_a_follow_up_is_kept_in_the_outbox_marked_not_emailed(system: System, home: Path) -> None:
    publish(system, *FLOW_1)
    tick(system, AFTER_DEADLINE)

    [followup] = [line for line in outbox(home) if line["kind"] == "send_email"]
    assert followup["to"] == RAHUL and followup["emailed"] is False


def test_rebuilding_the_read_models_sends_nothing_again(home: Path, store_environ: dict[str, str], smtp: SmtpSink) -> None:
    system = build_system(home, LOOPLINE_SMTP_URL=smtp.url, **store_environ)
    try:
        publish(system, *FLOW_1)
        tick(system, AFTER_DEADLINE)
        before = outbox(home)

        system.rebuild()
        system.drain()
    finally:
        system.close()

    assert len(smtp.wait_for(1)) == 1
    assert outbox(home) == before


def test_two_systems_delivering_on_one_home_email_each_follow_up_once(
    home: Path, store_environ: dict[str, str], smtp: SmtpSink
) -> None:
    first = build_system(home, LOOPLINE_SMTP_URL=smtp.url, **store_environ)
    second = build_system(home, LOOPLINE_SMTP_URL=smtp.url, **store_environ)
    try:
        publish(first, *FLOW_1)
        first.scheduler.tick(parse_time(AFTER_DEADLINE))
        second.scheduler.tick(parse_time(AFTER_DEADLINE))
        first.drain()
        second.drain()
    finally:
        first.close()
        second.close()

    assert len(smtp.wait_for(1)) == 1


def test_webhook_posts_signed_json_and_a_failure_does_not_hold_up_other_channels(
    home: Path, store_environ: dict[str, str], receiver: WebhookReceiver
) -> None:
    receiver.failures = 2
    with _flow_1_past_deadline_with_webhook(home, store_environ, receiver) as (system, clock):
        assert [line["kind"] for line in outbox(home)] == ["send_email", "followup_sent"]  # not held up
        assert receiver.received == []
        _hours_pass(system, clock, 3)

    [(key, body)] = receiver.received
    assert receiver.requests == 3 and receiver.bad_signatures == 0
    assert body["kind"] == "followup_sent" and body["key"] == key
    assert key == next(line["key"] for line in outbox(home) if line["kind"] == "followup_sent")


def test_webhook_that_keeps_failing_is_parked_and_shown_by_status(
    home: Path, store_environ: dict[str, str], receiver: WebhookReceiver
) -> None:
    receiver.failures = 1_000
    with _flow_1_past_deadline_with_webhook(home, store_environ, receiver) as (system, clock):
        _hours_pass(system, clock, 10)

    assert receiver.requests == 5  # every attempt, then no more
    cli = Cli(home, {"LOOPLINE_WEBHOOK_URL": receiver.url, "LOOPLINE_WEBHOOK_SECRET": SECRET, **store_environ})
    parked = cli.json("status")["parked_deliveries"]
    assert parked["count"] == 1
    [row] = parked["deliveries"]
    assert (row["channel"], row["task_id"], row["kind"], row["attempts"]) == ("webhook", "task_abc", "followup_sent", 5)
    assert "503" in row["last_error"]
    text = cli("status")
    assert "parked deliveries (failed after every retry): 1" in text.stdout and row["key"] in text.stdout

