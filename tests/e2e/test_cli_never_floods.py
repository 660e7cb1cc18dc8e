"""Never floods (issue 21 done-when 2), through the `loopline` command with a real SMTP server: an owner away four
days while a tenant routine reports 20 changes gets, on return, one digest email of at most 5 items; nothing was
emailed in quiet hours, and nothing twice within 24 h; `loopline audit "owner notices <tenant>"` shows each step.
A notice at 23:00 for an owner seen that evening is held, and emailed by the first run after 07:00."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from email.utils import parsedate_to_datetime
from pathlib import Path

import pytest

from loopline.domain.timeutil import format_time
from tests.conftest import command, signal
from tests.e2e.cli import Cli
from tests.servers import SmtpSink

GYM = "iron_temple"
OWNER = "sam@irontemple.example"
MONDAY = datetime(2026, 4, 6, 9, 0, tzinfo=timezone.utc)  # the tenant's zone is UTC: quiet hours 22:00-07:00


EMAIL_FROM = "loopline@irontemple.example"


@pytest.fixture
def cli_environ(mail_and_model_environ: dict[str, str]) -> dict[str, str]:
    return mail_and_model_environ


def report(ref: str, at: datetime, output: str) -> dict:
    return command(ref, "routine.report", format_time(at), tenant=GYM, routine_id="ci-check", duration_seconds=60,
                   outcome="success", output=output)


def test_an_owner_back_after_four_days_gets_one_digest_of_five_and_nothing_at_night_or_twice(
    embedded_cli: Cli, smtp: SmtpSink, tmp_path: Path
) -> None:
    setup = [
        command("g1", "tenant.configure", format_time(MONDAY - timedelta(hours=1)), tenant=GYM, owner_email=OWNER),
        signal("seen-1", "user.seen", format_time(MONDAY), tenant=GYM),
        command("r1", "routine.create", format_time(MONDAY), tenant=GYM, routine_id="ci-check", action="call_webhook",
                params={"event": "ci.check"}, kind="scheduled", interval_minutes=30, notify="always"),
        report("rep-1", MONDAY + timedelta(minutes=30), "build 1 green"),
        report("rep-2", MONDAY + timedelta(minutes=60), "build 1 green"),  # the same words: not sent again
    ]
    away = MONDAY + timedelta(days=1, hours=1)  # Tuesday 10:00: a day unseen, so the owner is away
    changes = [report(f"rep-away-{k}", away + timedelta(hours=3 * k), f"build {k + 2} {'red' if k % 4 else 'green'}")
               for k in range(20)]  # every 3 h through Thursday night, quiet hours included
    assert embedded_cli.publish(tmp_path, setup + changes, "away").returncode == 0
    assert [email["X-Loopline-Notice"] for email in smtp.wait_for(1)] == ["brain_notice"]

    back = MONDAY + timedelta(days=4)  # Friday 09:00
    returned = [signal("seen-2", "user.seen", format_time(back), tenant=GYM),
                report("rep-back", back + timedelta(minutes=30), "build 21 red")]  # in the digest just now
    assert embedded_cli.publish(tmp_path, returned, "back").returncode == 0

    first, digest = smtp.wait_for(2)
    assert len(smtp.messages) == 2  # embedded, the command returns once delivery is done: no third
    assert digest["To"] == OWNER and digest["X-Loopline-Notice"] == "return_digest"
    items = [line for line in digest.get_content().splitlines() if line.startswith("- ")]
    assert items == [f"- routine ci-check success: build {n} {'red' if n % 4 != 2 else 'green'}" for n in (21, 20, 19, 18, 17)]
    sent_at = [parsedate_to_datetime(email["Date"]) for email in (first, digest)]
    assert sent_at == [MONDAY + timedelta(minutes=30), back]
    assert all(7 <= moment.hour < 22 for moment in sent_at)  # none in quiet hours

    outbox = [json.loads(line) for line in (embedded_cli.home / "outbox.jsonl").read_text().splitlines()]
    told = [line["kind"] for line in outbox if line["to"] == "user"]
    assert told == ["brain_notice", "return_digest"] and all(line["emailed"] for line in outbox if line["to"] == "user")
    trail = [row["event"] for row in embedded_cli.json("audit", f"owner notices {GYM}")]
    assert (trail.count("NotificationHold.Sent"), trail.count("NotificationHold.Held")) == (1, 20)
    assert (trail.count("NotificationHold.Skipped"), trail.count("NotificationHold.DigestSent")) == (2, 1)


def test_a_notice_at_night_for_an_owner_seen_that_evening_is_held_and_emailed_after_seven(
    embedded_cli: Cli, smtp: SmtpSink, tmp_path: Path
) -> None:
    evening = MONDAY.replace(hour=20)
    night = [
        command("g1", "tenant.configure", format_time(evening - timedelta(hours=1)), tenant=GYM, owner_email=OWNER),
        signal("seen-1", "user.seen", format_time(evening), tenant=GYM),
        command("r1", "routine.create", format_time(evening), tenant=GYM, routine_id="ci-check", action="call_webhook",
                params={"event": "ci.check"}, kind="scheduled", interval_minutes=30, notify="always"),
        report("rep-night", MONDAY.replace(hour=23), "build 7 red"),
    ]
    assert embedded_cli.publish(tmp_path, night, "night").returncode == 0
    trail = [row["event"] for row in embedded_cli.json("audit", f"owner notices {GYM}")]
    assert trail.count("NotificationHold.Held") == 1 and "NotificationHold.Sent" not in trail
    assert smtp.messages == []  # nothing emailed in quiet hours

    morning = MONDAY + timedelta(days=1, hours=-1)  # Tuesday 08:00
    assert embedded_cli("tick", "--now", format_time(morning)).returncode == 0
    (email,) = smtp.wait_for(1)
    assert email["X-Loopline-Notice"] == "return_digest"
    assert "- routine ci-check success: build 7 red" in email.get_content().splitlines()
    assert parsedate_to_datetime(email["Date"]) == morning  # the first run after quiet hours sends it
