"""An out-of-office reply through the `loopline` command, with real email (a local SMTP server): the task pauses
until the date the reply states, `tasks show` says so, and the cadence's next touch is emailed after it
(embedded; the reply path is the same code at scale)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import command, signal
from tests.e2e.cli import Cli
from tests.servers import SmtpSink


@pytest.fixture
def cli(embedded_cli: Cli) -> Cli:
    """Embedded only (see `embedded_cli`): the scale path is test_cli_flow1's and the other flows' subject."""
    return embedded_cli


@pytest.fixture
def cli_environ(smtp: SmtpSink) -> dict[str, str]:
    return {"LOOPLINE_SMTP_URL": smtp.url, "LOOPLINE_EMAIL_FROM": "coach@irontemple.example"}


GYM = "iron_temple"
ANN = "ann@example.com"
START = [
    command("gym-1", "tenant.configure", "2026-06-01T08:00:00Z", GYM, execution_mode="limited_auto",
            profile={"sign_off": "Coach Dana"}),
    command("gym-2", "task.create", "2026-06-01T09:00:00Z", GYM, task_id="ann", title="Bring Ann back",
            task_type="churn_risk", contact=ANN, to_name="Ann", confidence=0.9),
]
OUT_OF_OFFICE = signal(
    "mail-ann-1", "email.received", "2026-06-01T18:10:00Z", GYM, sender=ANN,
    subject="Automatic reply: Checking in", body="I am out of the office until June 10",
)
"""The reply of the issue, which escalated at confidence 0.30 and ended the sequence: no `Auto-Submitted` header."""


def test_an_out_of_office_reply_pauses_the_task_until_the_stated_date_and_it_then_resumes(
    cli: Cli, smtp: SmtpSink, tmp_path: Path
) -> None:
    assert cli.publish(tmp_path, START, "start").returncode == 0
    assert cli("tick", "--now", "2026-06-01T09:05:00Z").returncode == 0
    [touch_1] = smtp.wait_for(1)
    assert touch_1["To"] == ANN

    assert cli.publish(tmp_path, [OUT_OF_OFFICE], "out-of-office").returncode == 0
    paused = cli.json("tasks", "show", "ann", "--tenant", GYM, "--now", "2026-06-02T09:00:00Z")
    assert paused["status"] == "waiting"
    plan = paused["outreach"]
    assert plan["away"] == {"until": "2026-06-10T09:00:00Z", "returns_on": "2026-06-10",
                            "recognised_by": "subject “Automatic reply”"}
    assert plan["next_action"] == {"what": "touch 2 of 3", "at": "2026-06-10T09:00:00Z",
                                   "reason": "the contact is out of office, back on 2026-06-10"}
    assert plan["budget"]["turns"]["used"] == 0 and plan["decisions"] == 1  # touch 1's draft only: no model read it
    text = cli("tasks", "show", "ann", "--tenant", GYM, "--now", "2026-06-02T09:00:00Z").stdout
    print(text); print(cli("audit", "--tenant", GYM).stdout if False else "")
    assert ("away: until 2026-06-10T09:00:00Z: an automatic reply (subject “Automatic reply”) says back on "
            "2026-06-10; the cadence resumes then") in text

    assert cli("tick", "--now", "2026-06-04T09:05:00Z").returncode == 0  # touch 2 was due: Ann is away
    assert cli("tick", "--now", "2026-06-09T09:05:00Z").returncode == 0
    assert len(smtp.messages) == 1
    assert cli("tick", "--now", "2026-06-10T09:00:00Z").returncode == 0
    _, touch_2 = smtp.wait_for(2)
    assert touch_2["To"] == ANN
    resumed = cli.json("tasks", "show", "ann", "--tenant", GYM, "--now", "2026-06-10T09:00:00Z")
    assert resumed["status"] == "waiting" and resumed["outreach"]["position"] == "touch 2 of 3"
    assert resumed["outreach"]["away"] is None
    notices = [n["kind"] for n in resumed["notifications_sent"]]
    assert not any("escalat" in kind for kind in notices)
