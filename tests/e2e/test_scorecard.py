"""Issue 20's scorecard through the `loopline` command (embedded): a win-back batch of 20 contacts runs to outcomes on
simulated `outcome.observed` signals and replies, and the scorecard shows the distribution and revenue exactly as the
audit trail of each task implies; `projections rebuild` gives it back unchanged and `--explain` names its events."""

from __future__ import annotations

from collections import Counter
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from loopline.domain.timeutil import format_time, parse_time
from tests.conftest import command, signal
from tests.e2e.cli import Cli

GYM = "gym"
T0 = parse_time("2026-03-02T14:00:00Z")
MONTHS = ("2026-03", "2026-04", "2026-05", "2026-06", "2026-07")
CONTACTS = [f"m{n:02d}@example.com" for n in range(1, 21)]
REACTIVATED, PAID, DECLINED = CONTACTS[:8], {CONTACTS[8]: 199.0, CONTACTS[9]: 240.0}, CONTACTS[10:12]
WOKEN, LATE = CONTACTS[12], CONTACTS[13]
OUTCOME_EVENTS = ("Task.OutcomeSet", "Task.AttributedLate", "Task.OutcomeDowngraded", "Task.OutcomeUndone",
                  "Task.OutcomeOverridden", "Task.ValueAttributed")


@pytest.fixture
def cli(embedded_cli: Cli) -> Cli:
    return embedded_cli


def at(days: float) -> str:
    return format_time(T0 + timedelta(days=days))


def observed(ref: str, days: float, contact: str, value: float | None = None) -> dict[str, Any]:
    return signal(ref, "outcome.observed", at(days), GYM, contact=contact, outcome="reactivation",
                  **({"value": value} if value is not None else {}))


def task_id(contact: str) -> str:
    return contact.split("@")[0]


def run_the_batch(cli: Cli, tmp: Path) -> None:
    """Touch 1 to all, reactivations (two with the amount paid) and refusals on day 2, the cadence spent by the
    rest (dormant on day 30), one woken by a reactivation while dormant, the rest closed unresponsive at the dormant
    end, and one of those reactivating inside the attribution window; the owner overrides one refusal."""
    start = [command("cfg", "tenant.configure", at(0), GYM, execution_mode="limited_auto", average_value=175,
                     daily_send_limit=100, send_window_start=0, send_window_end=24, timezone="America/New_York")]
    start += [command(f"c{n}", "task.create", at(0), GYM, task_id=task_id(contact), title=f"Win back {contact}",
                      task_type="win_back", contact=contact, confidence=0.95,
                      draft={"subject": "Come back?", "body": "We kept your spot."})
              for n, contact in enumerate(CONTACTS)]
    assert cli.publish(tmp, start, "start").returncode == 0
    assert cli("tick", "--now", at(0.05)).returncode == 0
    day2 = [observed(f"o{n}", 2, contact) for n, contact in enumerate(REACTIVATED)]
    day2 += [observed(f"p{n}", 2, contact, value) for n, (contact, value) in enumerate(PAID.items())]
    day2 += [signal(f"r{n}", "email.received", at(2), GYM, sender=contact, subject="Re: Come back?",
                    body="No thanks, not interested.") for n, contact in enumerate(DECLINED)]
    assert cli.publish(tmp, day2, "day2").returncode == 0
    for days in (3.05, 13.05, 30.1):
        assert cli("tick", "--now", at(days)).returncode == 0
    assert cli.publish(tmp, [observed("woke", 60, WOKEN)], "woke").returncode == 0
    assert cli("tick", "--now", at(121)).returncode == 0
    assert cli.publish(tmp, [observed("late", 125, LATE)], "late").returncode == 0
    override = command("o", "task.override_outcome", at(126), GYM, task_id=task_id(DECLINED[0]), outcome="interested",
                       reason="she called: she wants to come back in the autumn")
    assert cli.publish(tmp, [override], "override").returncode == 0


def from_audit(cli: Cli) -> tuple[Counter[tuple[str, str]], dict[str, float], dict[str, int]]:
    """Each task's outcome and value as its own trail says (the last outcome event, the last value), and the
    positions of its events."""
    outcomes: Counter[tuple[str, str]] = Counter()
    values: dict[str, float] = {}
    positions: dict[str, int] = {}
    for contact in CONTACTS:
        trail = cli.json("audit", task_id(contact), "--tenant", GYM)
        positions |= {f"{row['event']}@{row['position']}": row["position"] for row in trail}
        told = [row for row in trail if row["event"] in OUTCOME_EVENTS]
        if told:
            last = told[-1]["payload"]
            outcomes[("win_back", last.get("code") or last["outcome"])] += 1
        values[task_id(contact)] = next((row["payload"]["value"] for row in reversed(told)
                                          if row["event"] == "Task.ValueAttributed"), 0.0)
    return outcomes, values, positions


def scorecards(cli: Cli, *extra: str) -> list[dict[str, Any]]:
    return [card for month in MONTHS for card in cli.json("scorecard", "--tenant", GYM, "--period", month, *extra)]


def test_a_win_back_batch_of_20_scores_as_its_audit_trail_implies(cli: Cli, tmp_path: Path) -> None:
    run_the_batch(cli, tmp_path)
    outcomes, values, positions = from_audit(cli)
    cards = scorecards(cli, "--explain")

    shown: Counter[tuple[str, str]] = Counter()
    for card in cards:
        for task_type, codes in card["numbers"]["outcomes"].items():
            shown.update({(task_type, code): n for code, n in codes.items()})
    assert shown == outcomes
    assert outcomes == Counter({("win_back", "recovered"): 12, ("win_back", "declined"): 1,
                                ("win_back", "interested"): 1, ("win_back", "unresponsive"): 6})
    retained = {task: value for task, value in values.items() if value > 0}
    assert sum(card["numbers"]["members_retained"] for card in cards) == len(retained) == 12
    assert round(sum(card["numbers"]["revenue_retained"] for card in cards), 2) == round(sum(retained.values()), 2)
    assert sum(retained.values()) == 10 * 3 * 175 + 199 + 240
    assert sum(card["numbers"]["retroactive_attributions"] for card in cards) == 1
    assert sum(card["numbers"]["tasks_created"] for card in cards) == 20

    march = cards[0]
    assert march["numbers"]["messages_sent"] == 20 + 8 * 2  # touch 1 to all; touches 2 and 3 to the 8 left
    assert march["timezone"] == "America/New_York" and march["needs_attention"] == []
    for name, events in march["events"].items():  # each number's events are in the tasks' audit trails
        assert all(f"{e['event']}@{e['position']}" in positions for e in events), name
    assert {e["event"] for e in march["events"]["revenue_retained"]} == {"Task.ValueAttributed"}
    assert {e["task_id"] for e in march["events"]["members_retained"]} == {
        task_id(c) for c in [*REACTIVATED, *PAID]}

    assert cli.json("projections", "rebuild")["rebuilt"]
    assert scorecards(cli, "--explain") == cards


def test_a_period_that_is_none_of_the_three_forms_is_refused_naming_them(cli: Cli) -> None:
    result = cli("scorecard", "--period", "March")

    assert result.returncode == 2
    assert "--period" in result.stderr and "2026-W10" in result.stderr


def test_a_period_is_read_in_the_tenants_time_zone(cli: Cli, tmp_path: Path) -> None:
    late_evening = "2026-03-31T23:30:00-04:00"  # April 1st in UTC
    messages = [command("cfg", "tenant.configure", late_evening, GYM, timezone="America/New_York"),
                command("c1", "task.create", late_evening, GYM, task_id="t1", title="A follow-up")]
    assert cli.publish(tmp_path, messages, "tz").returncode == 0

    march = cli.json("scorecard", "--tenant", GYM, "--period", "2026-03")[0]
    week = cli.json("scorecard", "--tenant", GYM, "--period", "2026-W14")[0]

    assert march["numbers"]["tasks_created"] == week["numbers"]["tasks_created"] == 1
