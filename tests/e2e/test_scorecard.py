"""Issue 20's scorecard through the `loopline` command (embedded): a win-back batch of 20 contacts (one `task.batch`)
runs to outcomes on simulated `outcome.observed` signals and replies, and the scorecard shows the distribution and
revenue exactly as the audit trail of each task implies; `projections rebuild` gives it back unchanged and `--explain`
names, for every number, the events of the audit trails behind it."""

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
BATCH = "spring"
VERBAL, COMMITTED = "verbal", "v01@example.com"
"""A churn-risk member who promises to come back late in June: her `verbal_commitment` is still unconfirmed at the end,
so the verbal-only rate has a provisional outcome to count."""
REVISIONS = ("Task.OutcomeSet", "Task.AttributedLate", "Task.OutcomeDowngraded", "Task.OutcomeUndone",
             "Task.OutcomeOverridden")
"""The events that set what a task is credited with; `Task.ValueAttributed` sets its value."""
EXPLAINED_BY = {"tasks_created": {"Task.Created"}, "messages_sent": {"Task.TouchSent", "Task.SendReturned"},
                "members_retained": {"Task.ValueAttributed"}, "revenue_retained": {"Task.ValueAttributed"},
                "retroactive_attributions": {"Task.ValueAttributed"}, "active_conversations": {"Task.SignalReceived"}}
"""The events a number counts, as its explanation must name them."""


@pytest.fixture
def cli(embedded_cli: Cli) -> Cli:
    return embedded_cli


def at(days: float) -> str:
    return format_time(T0 + timedelta(days=days))


def observed(ref: str, days: float, contact: str, value: float | None = None) -> dict[str, Any]:
    return signal(ref, "outcome.observed", at(days), GYM, contact=contact, outcome="reactivation",
                  **({"value": value} if value is not None else {}))


def task_id(contact: str) -> str:
    """The batch's task of `contact`: the batch numbers its tasks from 1 in the order of its contacts."""
    return f"{BATCH}/{CONTACTS.index(contact) + 1}"


TASKS = [*(task_id(contact) for contact in CONTACTS), VERBAL]


def run_the_batch(cli: Cli, tmp: Path) -> None:
    """Touch 1 to all, reactivations (two with the amount paid) and refusals on day 2, the cadence spent by the
    rest (dormant on day 30), one woken by a reactivation while dormant, the rest closed unresponsive at the dormant
    end, and one of those reactivating inside the attribution window; the owner overrides one refusal. A churn-risk
    member answers her touch 1 with a promise two days before the last tick."""
    start = [command("cfg", "tenant.configure", at(0), GYM, execution_mode="limited_auto", average_value=175,
                     daily_send_limit=100, send_window_start=0, send_window_end=24, timezone="America/New_York"),
             command("batch", "task.batch", at(0), GYM, batch_id=BATCH, task_type="win_back", title="Win back",
                     confidence=0.95, contacts=[{"contact": contact} for contact in CONTACTS],
                     draft={"subject": "Come back?", "body": "We kept your spot."})]
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
    promise = [command("v", "task.create", at(118), GYM, task_id=VERBAL, title="Keep Vi", task_type="churn_risk",
                       contact=COMMITTED, confidence=0.95),
               signal("rv", "email.received", at(119), GYM, sender=COMMITTED, subject="Re: checking in",
                      body="See you Tuesday, I'll come to the 6pm class!")]
    assert cli.publish(tmp, promise[:1], "vi").returncode == 0
    assert cli("tick", "--now", at(118.05)).returncode == 0
    assert cli.publish(tmp, promise[1:], "promise").returncode == 0
    assert cli("tick", "--now", at(121)).returncode == 0
    assert cli.publish(tmp, [observed("late", 125, LATE)], "late").returncode == 0
    override = command("o", "task.override_outcome", at(126), GYM, task_id=task_id(DECLINED[0]), outcome="interested",
                       reason="she called: she wants to come back in the autumn")
    assert cli.publish(tmp, [override], "override").returncode == 0


Audited = dict[tuple[str, int], dict[str, Any]]
"""Each task's audit rows by (task, position)."""


def from_audit(cli: Cli) -> tuple[dict[str, dict[str, Any]], dict[str, float], Audited]:
    """What each task's own trail says it is credited with (its last outcome event, its last value), and its rows."""
    credited: dict[str, dict[str, Any]] = {}
    values: dict[str, float] = {}
    rows: Audited = {}
    for task in TASKS:
        trail = cli.json("audit", task, "--tenant", GYM)
        rows |= {(task, row["position"]): row for row in trail}
        revisions = [row["payload"] for row in trail if row["event"] in REVISIONS]
        if revisions:
            credited[task] = revisions[-1]
        values[task] = next((row["payload"]["value"] for row in reversed(trail)
                             if row["event"] == "Task.ValueAttributed"), 0.0)
    return credited, values, rows


def scorecards(cli: Cli, *extra: str) -> list[dict[str, Any]]:
    return [card for month in MONTHS for card in cli.json("scorecard", "--tenant", GYM, "--period", month, *extra)]


def explained_by_audit(card: dict[str, Any], credited: dict[str, dict[str, Any]], values: dict[str, float],
                       audited: Audited) -> None:
    """Every number of `card` has its events, each the event at that position of its task's audit trail, and the
    outcomes, retained members, revenue and verbal-only rate are what those tasks' trails credit them with."""
    numbers, events = card["numbers"], card["events"]
    outcome_keys = {f"outcomes.{kind}.{code}" for kind, codes in numbers["outcomes"].items() for code in codes}
    assert set(events) == (set(numbers) - {"outcomes"}) | outcome_keys, card["period"]
    for name, explained in events.items():
        for e in explained:
            row = audited.get((e["task_id"], e["position"]))
            assert row is not None and row["event"] == e["event"], (card["period"], name, e)
            assert e["event"] in EXPLAINED_BY.get(name, {e["event"]}), (card["period"], name, e)
    for kind, codes in numbers["outcomes"].items():
        for code, n in codes.items():
            tasks = [e["task_id"] for e in events[f"outcomes.{kind}.{code}"]]
            assert len(tasks) == n and all(credited[task]["code"] == code for task in tasks), (kind, code)
    for name in ("tasks_created", "members_retained", "retroactive_attributions"):
        assert len(events[name]) == numbers[name], (card["period"], name)
    # A late attribution is counted by the value it credits, which says it came late.
    assert all(audited[(e["task_id"], e["position"])]["payload"]["late"] for e in events["retroactive_attributions"])
    retained = [e["task_id"] for e in events["members_retained"]]
    assert all(values[task] > 0 for task in retained)
    assert numbers["revenue_retained"] == round(sum(values[task] for task in retained), 2)
    positive = {e["task_id"] for e in events["verbal_only_rate"]}
    assert all(credited[task]["kind"] == "positive" for task in positive)
    provisional = sum(1 for task in positive if credited[task].get("provisional"))
    assert numbers["verbal_only_rate"] == (round(provisional / len(positive), 4) if positive else None)


def test_a_win_back_batch_of_20_scores_as_its_audit_trail_implies(cli: Cli, tmp_path: Path) -> None:
    run_the_batch(cli, tmp_path)
    credited, values, audited = from_audit(cli)
    cards = scorecards(cli, "--explain")

    assert Counter(payload["code"] for payload in credited.values()) == Counter(
        {"recovered": 12, "declined": 1, "interested": 1, "unresponsive": 6, "verbal_commitment": 1})
    assert credited[VERBAL]["provisional"] and credited[task_id(CONTACTS[0])]["provisional"] is False
    retained = {task: value for task, value in values.items() if value > 0}
    assert len(retained) == 13 and sum(retained.values()) == 10 * 3 * 175 + 199 + 240 + 0.5 * 175
    for card in cards:
        explained_by_audit(card, credited, values, audited)

    def union(name: str) -> set[str]:
        return {e["task_id"] for card in cards for e in card["events"][name]}

    shown: Counter[str] = Counter()
    for card in cards:
        shown.update({code: n for codes in card["numbers"]["outcomes"].values() for code, n in codes.items()})
    assert shown == Counter(payload["code"] for payload in credited.values())
    assert union("members_retained") == set(retained)
    assert round(sum(card["numbers"]["revenue_retained"] for card in cards), 2) == round(sum(retained.values()), 2)
    assert union("verbal_only_rate") == {task for task, payload in credited.items() if payload["kind"] == "positive"}
    late = [e for card in cards for e in card["events"]["retroactive_attributions"]]
    attributed_late = [task for (task, _), row in audited.items() if row["event"] == "Task.AttributedLate"]
    assert [e["task_id"] for e in late] == attributed_late == [task_id(LATE)]  # the one late attribution made
    assert sum(card["numbers"]["retroactive_attributions"] for card in cards) == 1

    march = cards[0]
    assert march["numbers"]["tasks_created"] == len(march["events"]["tasks_created"]) == 20
    assert {e["task_id"] for e in march["events"]["tasks_created"]} == {task_id(c) for c in CONTACTS}
    assert march["numbers"]["messages_sent"] == 20 + 8 * 2  # touch 1 to all; touches 2 and 3 to the 8 left
    assert march["timezone"] == "America/New_York" and march["needs_attention"] == []
    assert {e["task_id"] for e in march["events"]["members_retained"]} == {task_id(c) for c in [*REACTIVATED, *PAID]}
    june = cards[MONTHS.index("2026-06")]
    assert june["numbers"]["outcomes"]["churn_risk"] == {"verbal_commitment": 1}
    assert june["numbers"]["messages_sent"] == 1  # her touch 1, which she answers
    assert june["numbers"]["verbal_only_rate"] == 1.0  # her promise is June's only positive outcome

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
