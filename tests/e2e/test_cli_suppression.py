"""A STOP reply in each language, through the `loopline` command with real email (a local SMTP server): every task of
the contact closes as `opted_out` in that one step with no model call, `loopline contacts suppressed` lists them,
the owner's `task.reply` is refused, a reminder to them is never sent, and `contact.resubscribe` lifts one
(embedded; the same code at scale)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import command, signal
from tests.e2e.cli import Cli
from tests.servers import SmtpSink


@pytest.fixture
def cli(embedded_cli: Cli) -> Cli:
    """Embedded only (see `embedded_cli`): suppression is handler code, the same in both deployments."""
    return embedded_cli


@pytest.fixture
def cli_environ(smtp: SmtpSink) -> dict[str, str]:
    return {"LOOPLINE_SMTP_URL": smtp.url, "LOOPLINE_EMAIL_FROM": "coach@irontemple.example"}


GYM = "iron_temple"
STOPS = {
    "en": "STOP",
    "de": "Bitte melden Sie mich ab.",
    "fr": "Ne m'écrivez plus, merci.",
    "es": "Por favor, dejen de escribirme.",
    "nl": "Haal me van de lijst alsjeblieft.",
}


def contact(language: str) -> str:
    return f"member-{language}@example.com"


def start() -> list[dict]:
    messages = [command("cfg", "tenant.configure", "2026-06-01T08:00:00Z", GYM, execution_mode="limited_auto")]
    for language in STOPS:
        for task_type in ("churn_risk", "lead_followup"):
            messages.append(command(f"c-{task_type}-{language}", "task.create", "2026-06-01T09:00:00Z", GYM,
                                    task_id=f"{task_type}-{language}", title=f"{task_type} {language}",
                                    task_type=task_type, contact=contact(language), confidence=0.95))
    messages += [command("nda", "task.create", "2026-06-01T09:00:00Z", GYM, task_id="nda", title="Waiver"),
                 command("nda-sent", "action.record", "2026-06-01T09:00:00Z", GYM, task_id="nda",
                         action="send_contract", to=contact("de"), resource_id="waiver-1")]
    return messages


def test_a_stop_in_each_language_closes_every_task_of_the_contact_and_nothing_reaches_them_again(
    cli: Cli, smtp: SmtpSink, tmp_path: Path
) -> None:
    assert cli.publish(tmp_path, start(), "start").returncode == 0
    assert cli("tick", "--now", "2026-06-01T09:05:00Z").returncode == 0
    assert sorted(message["To"] for message in smtp.wait_for(5)) == sorted(contact(language) for language in STOPS)
    decided = {task["task_id"]: task["outreach"]["decisions"] for task in
               (cli.json("tasks", "show", f"churn_risk-{language}", "--tenant", GYM) for language in STOPS)}

    stops = [signal(f"stop-{language}", "email.received", "2026-06-01T18:00:00Z", GYM, sender=contact(language),
                    subject="Re: your membership", body=words) for language, words in STOPS.items()]
    assert cli.publish(tmp_path, stops, "stops").returncode == 0

    closed = cli.json("tasks", "list", "--tenant", GYM, "--outcome", "opted_out")
    assert sorted(task["task_id"] for task in closed) == sorted(
        f"{task_type}-{language}" for language in STOPS for task_type in ("churn_risk", "lead_followup"))
    assert all(task["status"] == "cancelled" for task in closed)
    for task_id, decisions in decided.items():
        shown = cli.json("tasks", "show", task_id, "--tenant", GYM)
        assert shown["outreach"]["decisions"] == decisions  # the reply was read by a rule, not by the model
        told = [notice for notice in shown["notifications_sent"] if notice["kind"] == "contact_suppressed"]
        assert len(told) == 1
    prompt = cli("prompt", "churn_risk-fr", "--tenant", GYM)
    assert prompt.returncode == 1 and "takes no more decisions" in prompt.stdout + prompt.stderr
    audit = cli("audit", "churn_risk-es", "--tenant", GYM).stdout
    assert "opted_out" in audit and "asked to hear no more" in audit
    suppressed = cli.json("contacts", "suppressed", "--tenant", GYM)
    assert sorted(row["contact"] for row in suppressed) == sorted(contact(language) for language in STOPS)
    assert {row["reason"] for row in suppressed} == {"member_request"}

    reply = cli.publish(tmp_path, [command("reply", "task.reply", "2026-06-01T19:00:00Z", GYM, task_id="churn_risk-en",
                                           body="Sorry to see you go!")], "reply")
    assert reply.returncode != 0 and "asked to hear no more" in reply.stdout + reply.stderr
    assert cli("tick", "--now", "2026-06-08T09:05:00Z").returncode == 0  # the waiver's reminder to member-de was due
    assert len(smtp.messages) == 5
    waiver = cli.json("tasks", "show", "nda", "--tenant", GYM)
    assert any("no reminder was sent" in notice["message"] for notice in waiver["notifications_sent"])

    back = command("back", "contact.resubscribe", "2026-06-09T09:00:00Z", GYM, contact=contact("nl"), reason="rejoined")
    assert cli.publish(tmp_path, [back], "back").returncode == 0
    assert contact("nl") not in [row["contact"] for row in cli.json("contacts", "suppressed", "--tenant", GYM)]
    [lifted] = [row for row in cli.json("contacts", "suppressed", "--lifted") if row["contact"] == contact("nl")]
    assert (lifted["lifted_at"], lifted["lifted_because"]) == ("2026-06-09T09:00:00Z", "rejoined")
