"""Real sends through the `loopline` command: the follow-up of Flow 1 as email to a local SMTP
server (both deployments), and sends interrupted by SIGKILL between sending and marking."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from loopline.domain.timeutil import parse_time
from tests.conftest import command, signal as signal_message
from tests.e2e.cli import ROOT, Cli
from tests.e2e.scale import ScaleDeployment
from tests.hooks import hooked
from tests.servers import Broker, Postgres, SmtpSink, WebhookReceiver

ORIGINAL_ID = "<CAF-scheduling-1@mail.company.com>"
FLOW_1 = [
    command("m1", "task.create", "2026-03-13T10:00:00Z", task_id="task_abc", title="Schedule meeting with Rahul"),
    command("m2", "action.record", "2026-03-13T10:00:00Z", task_id="task_abc", action="send_email",
            to="rahul@company.com", thread_id="gmail_thread_xyz", subject="Meeting next week?",
            message_id=ORIGINAL_ID, summary="Sent scheduling email to Rahul"),
]
AFTER_DEADLINE = "2026-03-16T10:00:01Z"
REPLY = [signal_message("g1", "email.received", "2026-03-17T09:00:00Z", sender="rahul@company.com",
                        thread_id="gmail_thread_xyz")]
SECRET = "s3cret"


@pytest.fixture
def cli_environ(smtp: SmtpSink) -> dict[str, str]:
    return {"LOOPLINE_SMTP_URL": smtp.url, "LOOPLINE_EMAIL_FROM": "assistant@loopline.example"}


def outbox(home: Path) -> list[dict]:
    path = home / "outbox.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def test_flow_1_sends_exactly_one_threaded_follow_up_email(cli: Cli, smtp: SmtpSink, tmp_path: Path) -> None:
    assert cli.publish(tmp_path, FLOW_1, "start").returncode == 0
    assert cli("tick", "--now", AFTER_DEADLINE).returncode == 0
    assert cli("tick", "--now", AFTER_DEADLINE).returncode == 0
    assert cli.publish(tmp_path, REPLY, "reply").returncode == 0

    [email] = smtp.wait_for(1)
    cli.settle(delivered=True)  # at scale, the leader has decided and delivered all it will; embedded, the commands did
    assert len(smtp.messages) == 1
    assert email["To"] == "rahul@company.com" and email["From"] == "assistant@loopline.example"
    assert email["Subject"] == "Re: Meeting next week?"
    assert email["In-Reply-To"] == ORIGINAL_ID and email["References"] == ORIGINAL_ID
    assert email["List-Unsubscribe"].startswith("<mailto:assistant@loopline.example?")
    assert email["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"
    [line] = [line for line in outbox(cli.home) if line["kind"] == "send_email"]
    assert email["Message-ID"] == f"<loopline.{line['key'].replace(':', '.')}@loopline.example>"
    assert line["emailed"] is True and line["details"]["in_reply_to"] == ORIGINAL_ID


def _kill_after_send(cli: Cli, channel: str) -> None:
    """Runs the tick that sends the follow-up in a process SIGKILLed right after `channel` sent."""
    killed = Cli(cli.home, {**cli.environ, **hooked(LOOPLINE_TEST_KILL_AFTER_SEND=channel)})
    assert killed("tick", "--now", AFTER_DEADLINE).returncode == -signal.SIGKILL


def test_email_sent_again_after_a_kill_between_sending_and_marking_keeps_its_message_id(
    smtp: SmtpSink, tmp_path: Path
) -> None:
    cli = Cli(tmp_path / "home", {"LOOPLINE_SMTP_URL": smtp.url})
    assert cli.publish(tmp_path, FLOW_1, "start").returncode == 0

    _kill_after_send(cli, "smtp")
    assert len(smtp.messages) == 1
    assert cli("tick", "--now", AFTER_DEADLINE).returncode == 0  # the next process finds the send in doubt
    assert cli("tick", "--now", AFTER_DEADLINE).returncode == 0

    first, again = smtp.wait_for(2)
    assert len(smtp.messages) == 2  # sent once more, never a third time
    assert first["Message-ID"] == again["Message-ID"]  # so the receiving side drops the repeat
    assert [line["kind"] for line in outbox(cli.home)] == ["send_email", "followup_sent"]
    assert cli.json("status")["parked_deliveries"]["count"] == 0


def test_webhook_sent_again_after_a_kill_between_sending_and_marking_keeps_its_delivery_id(tmp_path: Path) -> None:
    receiver = WebhookReceiver(SECRET)
    try:
        cli = Cli(tmp_path / "home", {"LOOPLINE_WEBHOOK_URL": receiver.url, "LOOPLINE_WEBHOOK_SECRET": SECRET})
        assert cli.publish(tmp_path, FLOW_1, "start").returncode == 0

        _kill_after_send(cli, "webhook")
        assert cli("tick", "--now", AFTER_DEADLINE).returncode == 0
        assert cli.publish(tmp_path, REPLY, "reply").returncode == 0

        received = receiver.wait_for(3)
        assert receiver.bad_signatures == 0
        keys = [key for key, _ in received]
        assert keys[0] == keys[1] and len(keys) == 3  # the notice twice under one id, then the reply's wake-up
        assert [body["kind"] for _, body in received] == ["followup_sent", "followup_sent", "task_signal"]
        assert all(body["key"] == key for key, body in received)
    finally:
        receiver.stop()


def test_two_publishes_and_a_run_on_one_home_write_each_outbox_key_once(tmp_path: Path) -> None:
    cli = Cli(tmp_path / "home")
    files = []
    for batch in ("a", "b"):
        messages = [
            m for i in range(100) for m in (
                command(f"{batch}c{i}", "task.create", "2026-03-13T10:00:00Z", task_id=f"{batch}{i}", title=f"Task {i}"),
                command(f"{batch}d{i}", "task.complete", "2026-03-13T11:00:00Z", task_id=f"{batch}{i}", summary="done"),
            )
        ]
        files.append(tmp_path / f"{batch}.jsonl")
        files[-1].write_text("".join(json.dumps(m) + "\n" for m in messages))
    loopline = [sys.executable, "-c", "from loopline.cli.main import main; main()"]
    run = subprocess.Popen([*loopline, "run", "--interval", "0.05", "--tick-every", "0"], cwd=ROOT, env=cli.environ,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        publishes = [subprocess.Popen([*loopline, "publish", str(f)], cwd=ROOT, env=cli.environ,
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) for f in files]
        for process in publishes:
            process.wait(timeout=300)
    finally:
        run.terminate()
        run.wait(timeout=30)
    assert cli.publish(tmp_path, [], "flush").returncode == 0  # whatever a process left undelivered goes out now

    keys = [line["key"] for line in outbox(cli.home)]
    completed = [t for t in cli.json("tasks", "list") if t["status"] == "completed"]
    assert len(keys) == len(set(keys))
    assert len(keys) == len(completed) > 0  # one completion notice per completed task, none twice


def test_scale_leader_killed_between_sending_and_marking_resends_with_the_same_message_id(
    postgres: Postgres, broker: Broker, smtp: SmtpSink, tmp_path: Path
) -> None:
    deployment = ScaleDeployment(postgres, broker, tmp_path / "home")
    deployment.environ.update(LOOPLINE_SMTP_URL=smtp.url, **hooked(LOOPLINE_TEST_KILL_AFTER_SEND="smtp"))
    try:
        victim = deployment.start_worker()
        deployment.publish(FLOW_1)
        deployment.settle(inbound=2)
        deployment.system.tick(parse_time(AFTER_DEADLINE))  # from the host: it never delivers itself

        smtp.wait_for(1)  # its leader is killed right after the email went out, before marking it
        victim.kill()  # before it restarts (a worker restarts after its leader fails) with a leader killed the same way
        assert len(smtp.messages) == 1
        del deployment.environ["LOOPLINE_TEST_KILL_AFTER_SEND"]
        deployment.start_worker()
        first, again = smtp.wait_for(2)
        deployment.settle(inbound=2)
    finally:
        deployment.close()

    assert len(smtp.messages) == 2 and first["Message-ID"] == again["Message-ID"]
    assert [line["kind"] for line in deployment.outbox()] == ["send_email", "followup_sent"]


def test_a_wrong_channel_setting_is_named_with_the_form_it_needs(tmp_path: Path) -> None:
    bad_url = Cli(tmp_path / "home", {"LOOPLINE_SMTP_URL": "mail:25"})("status")
    assert bad_url.returncode == 2 and "smtp://[user:pass@]host:port" in bad_url.stderr
    no_secret = Cli(tmp_path / "home", {"LOOPLINE_WEBHOOK_URL": "http://127.0.0.1:9/hook"})("status")
    assert no_secret.returncode == 2 and "LOOPLINE_WEBHOOK_SECRET" in no_secret.stderr
