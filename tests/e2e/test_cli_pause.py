"""Pause and resume through the `loopline` command with a real SMTP server (embedded deployment): a paused tenant's
due touches are held, not sent; `status`, `tenants show` and `audit` say so; the resume sends every one of them."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from loopline.domain.timeutil import format_time, parse_time
from tests.conftest import command
from tests.e2e.cli import Cli
from tests.servers import SmtpSink

T0 = parse_time("2026-03-02T14:00:00Z")
GYM = "iron_temple"
MEMBERS = ("ann", "ben", "cat")


@pytest.fixture
def cli_environ(smtp: SmtpSink) -> dict[str, str]:
    return {"LOOPLINE_SMTP_URL": smtp.url, "LOOPLINE_EMAIL_FROM": "sam@irontemple.example"}


def at(hours: float) -> str:
    return format_time(T0 + timedelta(hours=hours))


def test_a_paused_tenant_holds_its_touches_and_the_resume_sends_them(
    embedded_cli: Cli, smtp: SmtpSink, tmp_path: Path
) -> None:
    cli = embedded_cli
    setup = [command("cfg", "tenant.configure", at(0), GYM, execution_mode="limited_auto"),
             command("pause", "tenant.pause", at(0), GYM, reason="new templates under review", by="Sam")]
    setup += [command(f"create-{name}", "task.create", at(1), GYM, task_id=name, title=f"Win back {name}",
                      task_type="churn_risk", contact=f"{name}@example.com", to_name=name, confidence=0.95,
                      draft={"subject": "We miss you", "body": "Come back!"}) for name in MEMBERS]
    assert cli.publish(tmp_path, setup, "setup").returncode == 0

    assert cli("tick", "--now", at(2)).returncode == 0
    assert smtp.messages == []
    status = cli.json("status")["pauses"]
    assert status["system"] is None
    assert [(row["tenant"], row["by"], row["reason"], row["held"]) for row in status["tenants"]] == [
        (GYM, "Sam", "new templates under review", 3)]
    assert "tenant iron_temple since 2026-03-02T14:00:00Z by Sam (new templates under review); 3 step(s) held" in (
        cli("status").stdout)
    assert cli.json("tenants", "show", GYM)["pause"]["paused"] is True
    trail = [row["summary"] for row in cli.json("audit", "ann", "--tenant", GYM)]
    assert "held while paused: the task step of task ann" in trail

    resume = command("resume", "tenant.resume", at(5), GYM, reason="templates approved", by="Sam")
    assert cli.publish(tmp_path, [resume], "resume").returncode == 0
    assert cli("tick", "--now", at(5)).returncode == 0

    assert sorted(email["To"] for email in smtp.messages) == [f"{name}@example.com" for name in MEMBERS]
    assert all(email["Date"].datetime >= T0 + timedelta(hours=5) for email in smtp.messages)
    assert cli.json("status")["pauses"] == {"system": None, "tenants": []}
    assert cli.json("tenants", "show", GYM)["pause"]["resumed_at"] == at(5)
