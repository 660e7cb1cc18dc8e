"""The scorecard's numbers for a tenant and period, each with the positions of the events behind it (`--explain`).

A task counts in the period it was created in (tasks created, escalation rate) and in the period it first reached an
outcome (the distribution, retained, revenue, verbal-only rate, time to outcome), with the outcome and value it is
credited with now; messages, replies and late attributions count in the period they happened in. The needs-attention
list is the tenant's open tasks waiting on the owner now, whatever the period.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.engine import Connection, Engine

from loopline.domain.periods import Period, PeriodKind, labels_at, parse_period
from loopline.domain.status import TERMINAL, TaskStatus
from loopline.domain.timeutil import parse_time
from loopline.projections.scorecard import scorecard_events, scorecard_tasks, scorecard_zones
from loopline.projections.timeline import timeline

ATTENTION = {str(TaskStatus.ESCALATED): "escalated", str(TaskStatus.PENDING_REVIEW): "in review"}
"""The open statuses that wait on the owner, as the list names them; a held-back draft is the third reason."""


def timezone_of(conn: Connection, tenant: str) -> str:
    found = conn.execute(select(scorecard_zones.c.timezone).where(scorecard_zones.c.tenant == tenant)).scalar()
    return found or "UTC"


def current_period(conn: Connection, tenant: str, now: datetime, kind: PeriodKind = "month") -> Period:
    """The period of that kind `now` falls in, in the tenant's time zone."""
    return Period(kind, labels_at(now, timezone_of(conn, tenant))[kind])


def scorecard_tenants(conn: Connection) -> list[str]:
    return sorted(set(conn.execute(select(scorecard_tasks.c.tenant).distinct()).scalars()))


def _rows(conn: Connection, table: Any, tenant: str, column: str, label: str) -> list[dict[str, Any]]:
    query = select(table).where(table.c.tenant == tenant, table.c[column] == label)
    return [dict(row._mapping) for row in conn.execute(query)]


def _refs(pairs: Iterable[tuple[int | None, str]]) -> list[dict[str, Any]]:
    return [{"position": position, "task_id": task_id} for position, task_id in sorted(p for p in pairs if p[0] is not None)]


def _rate(part: int, whole: int) -> float | None:
    return round(part / whole, 4) if whole else None


def scorecard(conn: Connection, tenant: str, period: Period) -> dict[str, Any]:
    """The numbers (`numbers`), what waits on the owner (`needs_attention`) and the events behind each number
    (`events`, by the number's name; an outcome's is `outcomes.<type>.<code>`)."""
    created = _rows(conn, scorecard_tasks, tenant, f"created_{period.kind}", period.label)
    ended = [r for r in _rows(conn, scorecard_tasks, tenant, f"outcome_{period.kind}", period.label) if r["outcome"]]
    facts = _rows(conn, scorecard_events, tenant, f"at_{period.kind}", period.label)
    numbers: dict[str, Any] = {}
    events: dict[str, list[dict[str, Any]]] = {}

    def count(name: str, value: Any, pairs: Iterable[tuple[int | None, str]]) -> None:
        numbers[name] = value
        events[name] = _refs(pairs)

    count("tasks_created", len(created), ((r["created_position"], r["task_id"]) for r in created))
    of = {kind: [f for f in facts if f["kind"] == kind] for kind in ("sent", "returned", "reply", "late")}
    count("messages_sent", len(of["sent"]) - len(of["returned"]),
          ((f["position"], f["task_id"]) for f in of["sent"] + of["returned"]))
    outcomes: dict[str, dict[str, int]] = {}
    for row in sorted(ended, key=lambda r: (r["task_type"], r["outcome"])):
        codes = outcomes.setdefault(row["task_type"], {})
        codes[row["outcome"]] = codes.get(row["outcome"], 0) + 1
        events.setdefault(f"outcomes.{row['task_type']}.{row['outcome']}", []).append(
            {"position": row["outcome_position"], "task_id": row["task_id"]})
    numbers["outcomes"] = outcomes
    valued = [r for r in ended if (r["value"] or 0) > 0]
    count("members_retained", len(valued), ((r["value_position"], r["task_id"]) for r in valued))
    count("revenue_retained", round(sum(r["value"] for r in valued), 2),
          ((r["value_position"], r["task_id"]) for r in valued))
    positive = [r for r in ended if r["outcome_kind"] == "positive"]
    count("verbal_only_rate", _rate(sum(1 for r in positive if r["outcome_provisional"]), len(positive)),
          ((r["outcome_position"], r["task_id"]) for r in positive))
    count("retroactive_attributions", len(of["late"]), ((f["position"], f["task_id"]) for f in of["late"]))
    escalated = [r for r in created if r["escalated_position"] is not None]
    count("escalation_rate", _rate(len(escalated), len(created)),
          [*((r["created_position"], r["task_id"]) for r in created),
           *((r["escalated_position"], r["task_id"]) for r in escalated)])
    hours = [(parse_time(r["outcome_at"]) - parse_time(r["created_at"])).total_seconds() / 3600 for r in ended]
    count("average_hours_to_outcome", round(sum(hours) / len(hours), 1) if hours else None,
          [*((r["created_position"], r["task_id"]) for r in ended),
           *((r["first_outcome_position"], r["task_id"]) for r in ended)])
    count("active_conversations", len({f["task_id"] for f in of["reply"]}),
          ((f["position"], f["task_id"]) for f in of["reply"]))
    return {"tenant": tenant, "period": period.label, "kind": period.kind, "timezone": timezone_of(conn, tenant),
            "numbers": numbers, "needs_attention": needs_attention(conn, tenant), "events": events}


def needs_attention(conn: Connection, tenant: str) -> list[dict[str, Any]]:
    """The tenant's open tasks waiting on the owner: escalated, in review, or with a draft held back for approval."""
    query = select(scorecard_tasks).where(scorecard_tasks.c.tenant == tenant,
                                          scorecard_tasks.c.status.not_in([str(s) for s in TERMINAL]))
    waiting = []
    for row in conn.execute(query.order_by(scorecard_tasks.c.created_position)):
        why = ATTENTION.get(row.status) or ("draft held" if row.held_position is not None else None)
        if why is not None:
            held = why == "draft held"
            waiting.append({
                "task_id": row.task_id, "title": row.title, "task_type": row.task_type, "why": why,
                "reason": None if held else row.attention_reason,
                "position": row.held_position if held else row.attention_position,
            })
    return waiting


def described(conn: Connection, card: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """Each number's events as the audit trail tells them (event, time, summary), by position."""
    positions = {ref["position"] for refs in card["events"].values() for ref in refs}
    query = select(timeline.c.position, timeline.c.event, timeline.c.at, timeline.c.summary).where(
        timeline.c.position.in_(positions))
    told = {row.position: dict(row._mapping) for row in conn.execute(query)} if positions else {}
    return {name: [{**ref, **told.get(ref["position"], {})} for ref in refs] for name, refs in card["events"].items()}


def summary(card: dict[str, Any]) -> str:
    """The scorecard in a few sentences, as the owner's digest email carries it."""
    numbers = card["numbers"]
    outcomes = "; ".join(f"{task_type}: " + ", ".join(f"{n} {code}" for code, n in codes.items())
                         for task_type, codes in numbers["outcomes"].items()) or "none yet"
    waiting = ", ".join(f"{item['task_id']} ({item['why']})" for item in card["needs_attention"]) or "nothing"
    return (f"Scorecard of {card['period']} ({card['timezone']}): {numbers['tasks_created']} task(s) created, "
            f"{numbers['messages_sent']} message(s) sent. Outcomes: {outcomes}. {numbers['members_retained']} "
            f"member(s) retained, worth {numbers['revenue_retained']:g}; {numbers['retroactive_attributions']} late "
            f"attribution(s). Waiting on you: {waiting}. (`loopline scorecard --period {card['period']} --explain` "
            "shows the events behind each number.)")


def day_scorecards(engine: Engine) -> Callable[[str, str], str]:
    """Reads the summary of a tenant's scorecard of a local day (`2026-03-05`), which the owner's digests carry."""

    def of_day(tenant: str, day: str) -> str:
        with engine.connect() as conn:
            return summary(scorecard(conn, tenant, parse_period(day)))

    return of_day
