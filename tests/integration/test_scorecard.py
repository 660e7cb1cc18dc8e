"""The scorecard read model on SQLite and PostgreSQL: escalations and reviews make the escalation rate and the
needs-attention list, guidance takes a task off it, a rebuild gives the same scorecard, and the owner's daily digest
emails the day before's."""

from __future__ import annotations

from pathlib import Path

from loopline.domain.periods import parse_period
from loopline.projections.scorecard_numbers import scorecard
from loopline.runtime.system import System
from tests.conftest import build_system, command, publish
from tests.integration.helpers import tick
from tests.servers import SmtpSink

GYM = "gym"
AT = "2026-03-05T15:00:00Z"


def card(system: System, period: str = "2026-03-05") -> dict:
    with system.projections.engine.connect() as conn:
        return scorecard(conn, GYM, parse_period(period))


def test_escalated_and_reviewed_tasks_wait_on_the_owner_until_answered(system: System) -> None:
    publish(system, *[command(f"c{n}", "task.create", AT, GYM, task_id=f"t{n}", title=f"Task {n}", confidence=confidence)
                      for n, confidence in ((1, 0.9), (2, 0.3), (3, 0.9))])
    publish(system, command("u1", "task.update", AT, GYM, task_id="t1", status="escalated", notes="needs a price"))

    day = card(system)
    assert day["numbers"]["tasks_created"] == 3 and day["numbers"]["escalation_rate"] == 0.3333
    assert [(item["task_id"], item["why"], item["reason"]) for item in day["needs_attention"]] == [
        ("t1", "escalated", "needs a price"), ("t2", "in review", day["needs_attention"][1]["reason"])]
    assert card(system, "2026-W10")["numbers"] == day["numbers"] == card(system, "2026-03")["numbers"]
    assert card(system, "2026-03-06")["numbers"]["tasks_created"] == 0

    publish(system, command("g1", "task.guidance", AT, GYM, task_id="t1", text="offer the usual price"))
    answered = card(system)
    assert [item["task_id"] for item in answered["needs_attention"]] == ["t2"]
    assert answered["numbers"]["escalation_rate"] == 0.3333  # it escalated once, answered or not

    system.projections.reset()
    system.projections.catch_up()
    assert card(system) == answered


def test_the_daily_digest_emails_the_owner_the_scorecard_of_the_day_before(
    home: Path, store_environ: dict[str, str], smtp: SmtpSink
) -> None:
    system = build_system(home, LOOPLINE_SMTP_URL=smtp.url, **store_environ)
    try:
        publish(system, command("cfg", "tenant.configure", AT, GYM, timezone="America/New_York",
                                owner_email="sam@gym.example", daily_digest_hour=8),
                command("c1", "task.create", AT, GYM, task_id="t1", title="Task 1"))
        tick(system, "2026-03-06T13:30:00Z")  # 08:30 in New York

        [email] = [e for e in smtp.messages if e["X-Loopline-Notice"] == "daily_digest"]
        assert email["Subject"] == "Loopline: daily digest of 2026-03-05" and email["To"] == "sam@gym.example"
        assert "Scorecard of 2026-03-05 (America/New_York): 1 task(s) created, 0 message(s) sent." in email.get_content()
    finally:
        system.close()
