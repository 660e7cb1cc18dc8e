"""`loopline run` SIGKILLed a few times while it emails contacts: each kill resends at most the one
email that was in flight (the full measurement is `python -m bench.delivery_kills`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.kills import KilledRuns
from tests.servers import SmtpSink

TASKS = 40
KILLS = 3


@pytest.mark.slow
def test_a_worker_killed_while_emailing_sends_again_at_most_the_email_in_flight(smtp: SmtpSink, tmp_path: Path) -> None:
    run = KilledRuns(tmp_path / "home", smtp, TASKS).run(KILLS, seed=19)

    assert run.kills == KILLS  # every kill fell while follow-ups were still going out
    assert run.emails == TASKS  # none lost
    assert run.duplicates <= run.kills
