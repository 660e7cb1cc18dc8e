"""Delivery against fake channels and a fake ledger, over eventsourcing's in-memory persistence."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from loopline.adapters.config import InvalidSetting, Settings
from loopline.adapters.smtp import SmtpServer, compose
from loopline.adapters.webhook import signature
from loopline.domain import ids
from loopline.domain.task import Task
from loopline.processors.application import Loopline, UnitOfWork
from loopline.processors.followers.delivery import Delivery, is_contact_email
from loopline.runtime.bootstrap import channels_for
from tests.unit.fakes import FakeChannel, FakeClock, FakeLedger

NOW = datetime(2026, 3, 16, 10, 0, tzinfo=timezone.utc)
RAHUL = "rahul@company.com"




@pytest.fixture
def app() -> Loopline:
    return Loopline(env={"PERSISTENCE_MODULE": "eventsourcing.popo"})


def _task(app: Loopline, change) -> None:  # noqa: ANN001
    """Creates task t1 waiting on an email, then applies `change` to it and saves."""
    uow = UnitOfWork(app)
    task = uow.add(Task.create(
        id=ids.task_id("user_xyz", "t1"), now=NOW, tenant="user_xyz", ref="t1", title="Meet Rahul", description="",
        task_type="ad_hoc", status="executing", expires_at=None, priority=None, contact=None, confidence=None,
        context={}, reason="test",
    ))
    task.record_action(action="send_email", details={"to": RAHUL}, summary="asked", performed_by="agent", now=NOW)
    change(task)
    uow.commit()


def _followup(task: Task) -> None:
    task.record_action(action="send_email", details={"to": RAHUL, "subject": "Re: Meet"}, summary="Sent follow-up",
                       performed_by="loopline", now=NOW)
    task.notify_user(kind="followup_sent", message="I sent a follow-up.", now=NOW)


def test_each_message_goes_to_the_channels_that_take_it(app: Loopline) -> None:
    _task(app, _followup)
    jsonl, email = FakeChannel("jsonl"), FakeChannel("smtp", accepts=is_contact_email)
    owner = FakeChannel("webhook", accepts=lambda message: message["to"] in ("user", "agent"))

    Delivery(app, FakeLedger(), [jsonl, email, owner], clock=FakeClock()).run_once()

    assert [m["kind"] for _, m in jsonl.sent] == ["send_email", "followup_sent"]
    assert [(m["to"], m["emailed"]) for _, m in email.sent] == [(RAHUL, True)]
    assert [(m["to"], m["task_id"], m["tenant"]) for _, m in owner.sent] == [("user", "t1", "user_xyz")]


def test_events_read_again_after_a_crash_send_nothing_the_ledger_has_as_delivered(
    app: Loopline, monkeypatch: pytest.MonkeyPatch
) -> None:
    _task(app, _followup)
    ledger, first, again = FakeLedger(), FakeChannel("jsonl"), FakeChannel("jsonl")
    with monkeypatch.context() as crash:  # the process dies after marking, before recording its position
        crash.setattr(app.process_recorder, "insert_tracking", lambda tracking: None)
        Delivery(app, ledger, [first], clock=FakeClock()).run_once()

    assert Delivery(app, ledger, [again], clock=FakeClock()).run_once() == 3  # the same three events read again…
    assert len(first.sent) == 2 and again.sent == []  # …and nothing sent twice


def test_a_failing_channel_is_retried_with_backoff_then_parked_without_holding_up_others(app: Loopline) -> None:
    _task(app, _followup)
    clock, ledger = FakeClock(), FakeLedger()
    start = clock.moment
    down, jsonl = FakeChannel("webhook", accepts=lambda m: m["to"] == "user", failures=99), FakeChannel("jsonl")
    delivery = Delivery(app, ledger, [jsonl, down], clock=clock, max_attempts=3, backoff=10)

    delivery.run_once()
    assert len(jsonl.sent) == 2 and down.tries == 1
    clock.moment = start + timedelta(seconds=9)
    delivery.run_once()
    assert down.tries == 1  # not due yet
    clock.moment = start + timedelta(seconds=10)
    delivery.run_once()
    clock.moment = start + timedelta(seconds=29)
    delivery.run_once()
    assert down.tries == 2  # the second retry waits twice as long
    clock.moment = start + timedelta(seconds=30)
    delivery.run_once()
    clock.moment = start + timedelta(seconds=10_000)
    delivery.run_once()

    assert down.tries == 3
    [parked] = ledger.parked()
    assert (parked["channel"], parked["attempts"], parked["error"]) == ("webhook", 3, "webhook is down (try 3)")


def test_a_signal_that_wakes_a_waiting_task_tells_the_agent(app: Loopline) -> None:
    _task(app, lambda task: task.receive_signal(
        signal_ref="g1", signal_type="email.received", data={"sender": RAHUL}, resolved_loops=[], now=NOW
    ))
    jsonl = FakeChannel("jsonl")

    Delivery(app, FakeLedger(), [jsonl], clock=FakeClock()).run_once()

    [(_, told)] = jsonl.sent
    assert (told["to"], told["kind"], told["signal_type"], told["signal_id"]) == ("agent", "task_signal", "email.received", "g1")


def test_every_signal_that_reaches_a_task_tells_the_agent_even_when_it_was_executing(app: Loopline) -> None:
    def two_signals(task: Task) -> None:
        for ref in ("g1", "g2"):
            task.receive_signal(signal_ref=ref, signal_type="email.received", data={}, resolved_loops=[], now=NOW)

    _task(app, two_signals)
    jsonl = FakeChannel("jsonl")

    Delivery(app, FakeLedger(), [jsonl], clock=FakeClock()).run_once()

    assert [m["signal_id"] for _, m in jsonl.sent] == ["g1", "g2"]


def test_follow_up_email_is_threaded_and_carries_one_click_unsubscribe() -> None:
    message = {"to": RAHUL, "kind": "send_email", "tenant": "user_xyz", "text": "Sent follow-up", "at": "2026-03-16T10:00:01Z",
               "details": {"subject": "Re: Meet", "body": "Hi Rahul", "in_reply_to": "orig-1@mail.com"}}

    email = compose(key="6f1c:3", message=message, sender="me@acme.com")

    assert email["Message-ID"] == "<loopline.6f1c.3@acme.com>"
    assert email["In-Reply-To"] == email["References"] == "<orig-1@mail.com>"
    assert email["Subject"] == "Re: Meet" and email["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"
    assert compose(key="6f1c:3", message=message, sender="me@acme.com")["Message-ID"] == email["Message-ID"]


def test_a_touch_answers_the_task_messages_before_it_by_their_delivery_keys() -> None:
    message = {"to": RAHUL, "kind": "send_email", "tenant": "user_xyz", "text": "Emailed", "at": "2026-03-16T10:00:01Z",
               "details": {"subject": "Re: We miss you", "body": "Hi", "thread": {"references": ["6f1c:3", "6f1c:9"]}}}

    email = compose(key="6f1c:14", message=message, sender="me@acme.com")

    assert email["In-Reply-To"] == "<loopline.6f1c.9@acme.com>"
    assert email["References"] == "<loopline.6f1c.3@acme.com> <loopline.6f1c.9@acme.com>"


def test_a_subject_with_line_breaks_goes_out_on_one_line() -> None:
    message = {"to": RAHUL, "kind": "send_email", "tenant": "user_xyz", "text": "Emailed", "at": "2026-03-16T10:00:01Z",
               "details": {"subject": "Re: Meet\r\nBcc: everyone@acme.com", "body": "Hi"}}

    email = compose(key="6f1c:3", message=message, sender="me@acme.com")

    assert email["Subject"] == "Re: Meet Bcc: everyone@acme.com" and email["Bcc"] is None


def test_the_first_message_of_a_thread_answers_nothing() -> None:
    message = {"to": RAHUL, "kind": "send_email", "tenant": "user_xyz", "text": "Emailed", "at": "2026-03-16T10:00:01Z",
               "details": {"subject": "We miss you", "body": "Hi", "thread": {"references": []}}}

    email = compose(key="6f1c:3", message=message, sender="me@acme.com")

    assert email["In-Reply-To"] is None and email["References"] is None


def test_smtp_url_is_read_and_a_wrong_one_is_named() -> None:
    server = SmtpServer.from_url("smtp://ann:p%40ss@mail.acme.com:587?starttls=true")
    assert (server.host, server.port, server.user, server.password, server.starttls) == ("mail.acme.com", 587, "ann", "p@ss", True)
    with pytest.raises(InvalidSetting, match="LOOPLINE_SMTP_URL"):
        SmtpServer.from_url("http://mail.acme.com")


def test_a_webhook_without_its_secret_is_refused(tmp_path) -> None:  # noqa: ANN001
    settings = Settings.load({"LOOPLINE_HOME": str(tmp_path), "LOOPLINE_WEBHOOK_URL": "http://127.0.0.1:9/x"},
                             config_file=tmp_path / "absent.toml")
    with pytest.raises(InvalidSetting, match="LOOPLINE_WEBHOOK_SECRET"):
        channels_for(settings)


def test_webhook_signature_is_the_hex_hmac_sha256_of_the_body() -> None:
    assert signature(b"The quick brown fox jumps over the lazy dog", "key") == (
        "sha256=f7bc83f430538424b13298e6aa6fb143ef4d59a14946175997479dbc2d1a3cd8"
    )
