"""The owner's email budget on the real delivery ledger (SQLite and PostgreSQL) and a local SMTP server: an email in
quiet hours waits in the ledger, and approvals over the day's budget go in one digest, with the day's scorecard."""

from __future__ import annotations

from pathlib import Path

from loopline.domain.timeutil import format_time, parse_time
from tests.conftest import build_system, command, publish
from tests.servers import SmtpSink
from tests.unit.fakes import FakeClock

GYM = "gym"
NIGHT = parse_time("2026-03-03T03:00:00Z")  # 22:00 in New York


def test_owner_emails_wait_for_quiet_hours_and_those_over_the_budget_go_in_one_digest(
    home: Path, store_environ: dict[str, str], smtp: SmtpSink
) -> None:
    clock = FakeClock(NIGHT)
    system = build_system(home, LOOPLINE_SMTP_URL=smtp.url, **store_environ)
    system.delivery.clock = clock
    try:
        publish(system, command("cfg", "tenant.configure", format_time(NIGHT), GYM, timezone="America/New_York",
                                owner_email="sam@gym.example", owner_quiet_hours="21:00-07:00"), *[
            command(f"c{n}", "task.create", format_time(NIGHT), GYM, task_id=f"m{n}", title=f"win back m{n}",
                    task_type="churn_risk", contact=f"m{n}@example.com", confidence=0.3)
            for n in range(6)
        ])
        assert smtp.messages == []

        clock.moment = parse_time("2026-03-03T12:30:00Z")  # 07:30: quiet hours are over
        system.drain()
        assert [email["X-Loopline-Notice"] for email in smtp.messages] == ["review"] * 5

        clock.moment = parse_time("2026-03-03T17:00:00Z")  # 12:00: the digest
        system.drain()
        assert [email["X-Loopline-Notice"] for email in smtp.messages][5:] == ["digest"]
        digest = smtp.messages[5].get_content()
        assert "win back m" in digest
        # The day of its notices (22:00 in New York), as the scorecard read model counts it.
        assert "Scorecard of 2026-03-02 (America/New_York): 6 task(s) created, 0 message(s) sent." in digest
        assert "Waiting on you: m0 (in review), m1 (in review)" in digest
    finally:
        system.close()
