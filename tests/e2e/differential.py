"""The inputs of the scale differential test (tests/e2e/test_scale_differential.py) and what it compares:
a few gyms' at-risk members, some of whom answer, stepped by ticks a host makes; the emails sent."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from loopline.domain.timeutil import format_time, parse_time
from tests.conftest import build_system, command, publish, signal

T0 = parse_time("2026-03-02T14:00:00Z")
GYMS = ("gym_a", "gym_b", "gym_c")
MEMBERS = 6
ANSWERS = ("Thanks, sounds good", "Maybe, I'm busy this month")
"""What some members write back after the first touch: the model answers one, waits on the other."""
TICKS = [T0 + timedelta(hours=1), T0 + timedelta(days=4), T0 + timedelta(days=9), T0 + timedelta(days=16)]


def contact(gym: str, n: int) -> str:
    return f"member{n}@{gym.replace('_', '-')}.example"


def inputs() -> list[dict[str, Any]]:
    """Each gym configured, then one `churn_risk` task per member, with its first message."""
    messages = []
    for gym in GYMS:
        messages.append(command(f"{gym}-cfg", "tenant.configure", format_time(T0 - timedelta(hours=1)), gym,
                                execution_mode="limited_auto"))
        messages += [command(
            f"{gym}-c{n}", "task.create", format_time(T0), gym, task_id=f"churn-{n}", title=f"Member {n} at risk",
            task_type="churn_risk", contact=contact(gym, n), confidence=0.95,
            draft={"subject": "We miss you", "body": f"Hi member {n},\n\nWe would love to see you again.\n\nSam"},
        ) for n in range(MEMBERS)]
    return messages


def answers(at: datetime) -> list[dict[str, Any]]:
    """The members with an even number answer the first touch, in the gym's thread."""
    return [signal(f"{gym}-r{n}", "email.received", format_time(at), gym, sender=contact(gym, n),
                   subject="Re: We miss you", body=ANSWERS[n // 2 % 2])
            for gym in GYMS for n in range(0, MEMBERS, 2)]


ANSWERED_AFTER_TICK = 0
"""The answers arrive after this tick (the first touch has gone out) and before the next one."""


Send = tuple[str, str, str, int, str, str]


def sends(outbox: list[dict[str, Any]]) -> list[Send]:
    """Each email to a contact as (tenant, task, to, touch, subject, body), in a stable order."""
    return sorted((line["tenant"], line["task_id"], line["to"], line["details"].get("touch", 0),
                   line["details"].get("subject", ""), line["details"].get("body", ""))
                  for line in outbox if line["kind"] == "send_email")


def reference(home: Path) -> list[Send]:
    """The sends of one embedded process, never killed: publish, tick, answer, tick."""
    system = build_system(home)
    try:
        publish(system, *inputs())
        for n, at in enumerate(TICKS):
            system.tick(at)
            if n == ANSWERED_AFTER_TICK:
                publish(system, *answers(at + timedelta(hours=1)))
    finally:
        system.close()
    outbox = home / "outbox.jsonl"
    return sends([json.loads(line) for line in outbox.read_text(encoding="utf-8").splitlines() if line.strip()])
