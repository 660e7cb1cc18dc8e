"""`loopline scorecard [--tenant T] [--period 2026-03|2026-W10|2026-03-05] [--json] [--explain]`: what the agent
did for a tenant and what came of it (seed 002 §28.3), each number traceable to its events."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from loopline.adapters.clock import SystemClock
from loopline.cli.context import fail, flag, opened
from loopline.cli.output import out, print_json, print_table
from loopline.domain.periods import InvalidPeriod, parse_period
from loopline.projections.scorecard_numbers import current_period, described, scorecard, scorecard_tenants

Json = Annotated[bool, flag("--json", "Print JSON instead of tables.")]
Explain = Annotated[bool, flag("--explain", "List the events behind each number (position, task, event, summary).")]
TenantOption = Annotated[str | None, typer.Option("--tenant", help="Only this tenant (absent: every tenant with tasks).")]
PeriodOption = Annotated[str | None, typer.Option(
    "--period", help="A month (2026-03), an ISO week (2026-W10) or a day (2026-03-05) of the tenant's time zone; "
    "absent: this month.")]


def scorecard_command(tenant: TenantOption = None, period: PeriodOption = None, json_: Json = False,
                      explain: Explain = False) -> None:
    """Tasks created, messages sent, outcomes per type, members and revenue retained, the verbal-only rate, late
    attributions, the escalation rate, the time to an outcome, active conversations and what waits on the owner."""
    try:
        asked = parse_period(period) if period is not None else None
    except InvalidPeriod as error:
        fail(f"--period: {error}")
    with opened() as system, system.projections.engine.connect() as conn:
        names = [tenant] if tenant else scorecard_tenants(conn)
        cards = [scorecard(conn, name, asked or current_period(conn, name, SystemClock().now())) for name in names]
        for card in cards:
            if explain:
                card["events"] = described(conn, card)
            else:
                del card["events"]
    if json_:
        print_json(cards)
        return
    if not cards:
        out.print("no tenant has tasks yet: the scorecard counts a tenant's tasks once it has some", style="dim")
    for card in cards:
        print_scorecard(card)


def print_scorecard(card: dict[str, Any]) -> None:
    """A scorecard as tables: its numbers, its outcomes per task type, what needs the owner, and (explained) the
    events behind each number."""
    numbers = card["numbers"]
    rows = [{"number": name, "value": value} for name, value in numbers.items() if name != "outcomes"]
    print_table(f"scorecard of {card['tenant']}, {card['kind']} {card['period']} ({card['timezone']})", rows,
                ["number", "value"])
    outcomes = [{"task type": task_type, "outcomes": ", ".join(f"{n} {code}" for code, n in codes.items())}
                for task_type, codes in numbers["outcomes"].items()]
    print_table("outcomes", outcomes, ["task type", "outcomes"])
    print_table("needs attention", card["needs_attention"], ["task_id", "title", "why", "reason"])
    for name, events in (card.get("events") or {}).items():
        print_table(f"behind {name}", events, ["position", "task_id", "event", "at", "summary"])

