"""`loopline run` SIGKILLed at random while it emails contacts, and what reached SMTP: the harness of
the test in tests/e2e/test_delivery_kills.py and of `python -m bench.delivery_kills`.

Every task waits on an email whose reply is overdue at wall-clock time, so the worker's first ticks
send one follow-up per task. Each worker is killed once SMTP took a random number of emails from it,
whatever the machine's speed; the next one takes over what the dead one had claimed. A repeat is an email whose Message-ID
(derived from its delivery key) SMTP had already taken.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from loopline.domain.timeutil import format_time
from tests.conftest import ANY_HOUR, build_system, command, publish
from tests.servers import SmtpSink

ROOT = Path(__file__).resolve().parents[2]
TASKS_PER_TENANT = 10
"""Below the tenant's daily limit of sends (15), so no follow-up waits for tomorrow."""


@dataclass(frozen=True)
class KillRun:
    emails: int
    """Distinct emails SMTP took (one per task when every follow-up went out)."""
    received: int
    """Emails SMTP took, repeats included."""
    kills: int

    @property
    def duplicates(self) -> int:
        return self.received - self.emails


def overdue_tasks(count: int) -> list[dict[str, Any]]:
    """`count` tasks, each with one contact of its own, whose email went out four days ago (the reply is overdue)."""
    at = format_time(datetime.now(timezone.utc) - timedelta(days=4))
    messages = []
    for i in range(count):
        tenant, contact = f"kill{i // TASKS_PER_TENANT}", f"contact{i}@kills.example"
        if i % TASKS_PER_TENANT == 0:  # the workers tick at wall-clock time, which may be at night
            messages.append(command(f"cfg{tenant}", "tenant.configure", at, tenant, **ANY_HOUR))
        messages += [
            command(f"c{i}", "task.create", at, tenant, task_id=f"t{i}", title=f"Meet contact {i}"),
            command(f"a{i}", "action.record", at, tenant, task_id=f"t{i}", action="send_email", to=contact,
                    thread_id=f"thread{i}", subject=f"Meeting {i}?", summary="asked for a meeting"),
        ]
    return messages


class KilledRuns:
    """A home whose tasks are overdue, the SMTP server its workers email, and the workers started on it."""

    def __init__(self, home: Path, smtp: SmtpSink, tasks: int) -> None:
        self.home, self.smtp, self.tasks = home, smtp, tasks
        self.environ = {**os.environ, "LOOPLINE_HOME": str(home), "LOOPLINE_SMTP_URL": smtp.url,
                        "LOOPLINE_EMAIL_FROM": "assistant@kills.example"}
        system = build_system(home, LOOPLINE_SMTP_URL=smtp.url)
        try:
            publish(system, *overdue_tasks(tasks))
        finally:
            system.close()

    def emails(self) -> Counter[str]:
        return Counter(str(message["Message-ID"]) for message in list(self.smtp.messages))

    def _all_sent(self) -> bool:
        return len(self.emails()) >= self.tasks

    def worker(self, *args: str) -> subprocess.Popen[bytes]:
        """`loopline run` in a process of its own, polling fast and ticking at wall-clock time."""
        return subprocess.Popen(
            [sys.executable, "-c", "from loopline.cli.main import main; main()", "run", *args],
            cwd=ROOT, env=self.environ, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )

    def run(self, kills: int, *, seed: int, most_per_worker: int = 5, timeout: float = 120.0) -> KillRun:
        """Kills `kills` workers, each once SMTP took a random number of emails from it (1 to `most_per_worker`;
        fewer kills if every email went out first), then lets one finish and one more pass (`run --once`)
        take over any send the last kill left in doubt."""
        rng, killed = random.Random(seed), 0
        deadline = time.monotonic() + timeout
        while killed < kills and not self._all_sent():
            enough = len(self.smtp.messages) + rng.randint(1, most_per_worker)
            worker = self.worker("--interval", "0.05", "--tick-every", "0.2")
            self.smtp.wait_until(lambda: len(self.smtp.messages) >= enough or self._all_sent(), deadline - time.monotonic())
            worker.kill()
            worker.wait()
            killed += 1
        last = self.worker("--interval", "0.05", "--tick-every", "0.2")
        self.smtp.wait_until(self._all_sent, deadline - time.monotonic())
        last.terminate()
        last.wait(timeout=30)
        assert self.worker("--once", "--tick-every", "0").wait(timeout=60) == 0
        emails = self.emails()
        return KillRun(emails=len(emails), received=sum(emails.values()), kills=killed)


def describe(run: KillRun) -> str:
    return json.dumps({"emails": run.emails, "received": run.received, "kills": run.kills,
                       "duplicates": run.duplicates}, sort_keys=True)
