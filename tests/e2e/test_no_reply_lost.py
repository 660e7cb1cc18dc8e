"""No reply is lost (issue 18), end to end through the `loopline` command on the embedded deployment, with a
real SMTP server and the Anthropic adapter on a local Messages API server: Ann's second reply, while her task
is with the owner, reaches the owner in her words, and the owner's guidance makes the model write her answer,
sent in her thread; a reply while a seed-000 follow-up is held back by a limit is kept, and the follow-up is
never sent (on both deployments: at scale the reply races the leader's drafting)."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from loopline.domain.timeutil import format_time, parse_time
from tests.conftest import command, signal
from tests.e2e.agent import body
from tests.e2e.cli import Cli
from tests.messages_api import MessagesApi, Reply
from tests.servers import SmtpSink
from tests.waiting import eventually

T0 = parse_time("2026-03-02T09:00:00Z")
GYM = "iron_temple"
ANN, RAHUL = "ann@example.com", "rahul@company.com"
EMAIL_FROM = "sam@irontemple.example"
MODEL_DRAFT = {
    "subject": "We miss you at spin", "body": "Hey Ann,\n\nTuesday spin is not the same without you.\n\nSam",
    "confidence": 0.9, "reasoning": "Ann used to come to spin on Tuesdays",
}
HER_QUESTION = "I'd love to come back... is the discount still on?"
ANSWER = "Hi Ann! Yes, the 20% comeback discount runs until the 31st. See you Tuesday?\n\nSam"


@pytest.fixture
def cli_environ(mail_and_model_environ: dict[str, str]) -> dict[str, str]:
    return mail_and_model_environ


def at(days: float) -> str:
    return format_time(T0 + timedelta(days=days))


def publish(cli: Cli, tmp_path: Path, name: str, *messages: dict[str, Any]) -> None:
    result = cli.publish(tmp_path, list(messages), name)
    assert result.returncode == 0, result.stderr


def tick(cli: Cli, days: float) -> None:
    result = cli("tick", "--now", at(days))
    assert result.returncode == 0, result.stderr


def owner_notices(cli: Cli) -> list[str]:
    path = cli.home / "outbox.jsonl"
    lines = [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []
    return [line["text"] for line in lines if line.get("to") == "user"]


def shown(cli: Cli, ref: str) -> dict[str, Any]:
    found = cli.json("tasks", "show", ref, "--tenant", GYM)
    assert isinstance(found, dict)
    return found


def ann_writes(ref: str, days: float, text: str) -> dict[str, Any]:
    return signal(ref, "email.received", at(days), GYM, sender=ANN, subject="Re: We miss you at spin", body=text)


def test_anns_reply_during_an_escalation_reaches_the_owner_and_guidance_answers_her_in_her_thread(
    embedded_cli: Cli, smtp: SmtpSink, messages_api: MessagesApi, tmp_path: Path
) -> None:
    cli = embedded_cli
    publish(cli, tmp_path, "setup",
            command("cfg", "tenant.configure", at(-1), GYM, execution_mode="limited_auto",
                    profile={"display_name": "Iron Temple", "owner_first_name": "Sam", "sign_off": "Sam"}),
            command("create", "task.create", at(0), GYM, task_id="ann", title="Win Ann back", task_type="win_back",
                    contact=ANN, to_name="Ann", confidence=0.9))
    tick(cli, 0.01)
    smtp.wait_for(1)

    messages_api.script(Reply({"decision": "escalate", "confidence": 0.85, "reasoning": "she asks about the price"}))
    publish(cli, tmp_path, "first-reply", ann_writes("ann-1", 1, HER_QUESTION))
    assert shown(cli, "ann")["status"] == "escalated"
    publish(cli, tmp_path, "second-reply", ann_writes("ann-2", 1.5, "Also, can I bring my sister along?"))

    assert any("bring my sister along" in notice for notice in owner_notices(cli))
    assert shown(cli, "ann")["status"] == "escalated"
    asked = len(messages_api.requests)

    messages_api.script(Reply({"decision": "reply", "reply_body": ANSWER, "confidence": 0.9,
                               "reasoning": "the owner confirmed the discount"}))
    publish(cli, tmp_path, "guidance", command("g1", "task.guidance", at(2), GYM, task_id="ann",
                                               text="Yes, 20% off until the 31st; her sister is welcome too"))

    [guided] = [request["json"] for request in messages_api.requests[asked:]]
    [ask] = [block["content"] for block in guided["messages"]]
    asked_now = ask[ask.index("WHAT TO DO NOW"):]  # both her messages are quoted in what the model is asked to answer
    assert all(words in asked_now for words in ("20% off until the 31st", "is the discount still on?", "my sister"))
    _, answer = smtp.wait_for(2)
    assert answer["To"] == ANN and body(answer) == ANSWER.strip()
    assert answer["Subject"] == "Re: We miss you at spin"
    assert shown(cli, "ann")["status"] == "waiting"  # her reply loop is open again


def test_a_reply_while_the_followup_is_held_back_is_kept_and_the_followup_never_goes_out(
    cli: Cli, smtp: SmtpSink, messages_api: MessagesApi, tmp_path: Path
) -> None:
    """Both deployments: the limit holds the follow-up before any draft is asked for (issue 19), and at scale the
    worker applies the reply while the leader holds it."""
    publish(cli, tmp_path, "setup",
            command("cfg", "tenant.configure", at(-1), GYM, daily_send_limit=0),
            command("m1", "task.create", at(0), GYM, task_id="rahul", title="Schedule a meeting with Rahul",
                    task_type="meeting_scheduling", contact=RAHUL),
            command("m2", "action.record", at(0), GYM, task_id="rahul", action="send_email", to=RAHUL,
                    subject="Meeting next week?"))
    tick(cli, 3.1)
    held = "a follow-up to rahul@company.com waits"
    # the limit holds it, undrafted
    assert eventually(lambda: any(held in notice for notice in owner_notices(cli)), "the owner's notice of the held send")

    publish(cli, tmp_path, "reply",
            signal("rahul-1", "email.received", at(3.5), GYM, sender=RAHUL, subject="Re: Meeting next week?",
                   body="Thursday 3pm works for me."),
            command("cfg2", "tenant.configure", at(3.6), GYM, daily_send_limit=50))
    for day in (4.2, 10.2):  # the limit freed up, and the time a send held back a day would go
        tick(cli, day)

    assert eventually(lambda: "Thursday 3pm works for me." in json.dumps(shown(cli, "rahul")["inbox_items"]),
                      "Rahul's reply in his task's inbox")
    cli.settle(delivered=True)  # at scale, the leader has decided and delivered all it will; embedded, the commands did
    assert smtp.messages == []
    assert messages_api.forced_tools() == []  # no decision for a send a limit held, nor after the reply ended it
