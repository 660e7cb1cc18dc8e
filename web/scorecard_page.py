"""`/scorecard`: the period's outcomes per task type against the period before, as a chart drawn on the server,
with the numbers `loopline scorecard` prints and the revenue's trend. An operator sees every tenant's totals or one
tenant's; a tenant key only its own."""

from __future__ import annotations

from typing import Any, get_args

from fastapi import APIRouter, Depends, HTTPException, Request
from fastapi.responses import HTMLResponse
from markupsafe import Markup
from sqlalchemy.engine import Connection

from loopline.adapters.clock import SystemClock
from loopline.domain.periods import InvalidPeriod, Period, PeriodKind, parse_period, previous
from loopline.projections.scorecard_numbers import current_period, scorecard, scorecard_tenants
from loopline.web.auth import Principal, page_principal
from loopline.web.pages import render
from loopline.web.svg import grouped_bars

router = APIRouter(include_in_schema=False)

KINDS: tuple[PeriodKind, ...] = get_args(PeriodKind)
CHART_LABEL = "Outcomes per type, this period against the last"
ADDITIVE = ("tasks_created", "messages_sent", "members_retained", "revenue_retained", "retroactive_attributions",
            "active_conversations")
"""The numbers that add up across tenants; the rates and averages are shown for one tenant only."""


def _asked_period(text: str) -> PeriodKind | Period:
    """A kind (the current period of it, in each tenant's time zone) or a period of the CLI's forms."""
    for kind in KINDS:
        if text == kind:
            return kind
    try:
        return parse_period(text)
    except InvalidPeriod as error:
        raise HTTPException(400, f"period: {error}; or one of {', '.join(KINDS)} for the current one") from None


def _cards(conn: Connection, tenants: list[str], asked: PeriodKind | Period) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """Each tenant's scorecard of the period and of the one before it."""
    now = SystemClock().now()
    pairs = []
    for tenant in tenants:
        period = asked if isinstance(asked, Period) else current_period(conn, tenant, now, asked)
        pairs.append((scorecard(conn, tenant, period), scorecard(conn, tenant, previous(period))))
    return pairs


def _outcomes_per_type(cards: list[dict[str, Any]]) -> dict[str, int]:
    totals: dict[str, int] = {}
    for card in cards:
        for task_type, codes in card["numbers"]["outcomes"].items():
            totals[task_type] = totals.get(task_type, 0) + sum(codes.values())
    return totals


def trend(now: float | None, before: float | None) -> str:
    """▲ or ▼ with the change in percent of the period before (`new` from nothing, `=` unchanged)."""
    if now is None or before is None or now == before:
        return "=" if now == before else ""
    if not before:
        return "▲ new"
    change = (now - before) / abs(before) * 100
    return f"{'▲' if change > 0 else '▼'} {abs(change):.0f}%"


def _rows(pairs: list[tuple[dict[str, Any], dict[str, Any]]]) -> list[dict[str, Any]]:
    """The table: one row per number, this period against the one before (summed over tenants where they add up)."""
    single = len(pairs) == 1
    names = [name for name in pairs[0][0]["numbers"] if name != "outcomes"] if single else ADDITIVE
    rows = []
    for name in names:
        if single:
            now, before = pairs[0][0]["numbers"][name], pairs[0][1]["numbers"][name]
        else:
            now = round(sum(card["numbers"][name] for card, _ in pairs), 2)
            before = round(sum(card["numbers"][name] for _, card in pairs), 2)
        rows.append({"name": name.replace("_", " "), "now": now, "before": before, "trend": trend(now, before),
                     "revenue": name == "revenue_retained"})
    return rows


@router.get("/scorecard", response_class=HTMLResponse)
def scorecard_page(request: Request, period: str = "week", tenant: str | None = None,
                   principal: Principal = Depends(page_principal)) -> HTMLResponse:
    asked = _asked_period(period)
    scope = principal.scope(tenant)
    with request.app.state.system.projections.engine.connect() as conn:
        known = scorecard_tenants(conn) if principal.operator else []
        pairs = _cards(conn, [scope] if scope else known, asked)
    this, before = _outcomes_per_type([p[0] for p in pairs]), _outcomes_per_type([p[1] for p in pairs])
    types = sorted(set(this) | set(before))
    labels = sorted({p[0]["period"] for p in pairs}) or [asked if isinstance(asked, str) else asked.label]
    earlier = sorted({p[1]["period"] for p in pairs})
    chart = grouped_bars(types, [(f"this period ({', '.join(labels)})", [this.get(t, 0) for t in types]),
                                 (f"the one before ({', '.join(earlier)})", [before.get(t, 0) for t in types])],
                         label=CHART_LABEL)
    outcomes = [{"type": t, "now": this.get(t, 0), "before": before.get(t, 0),
                 "trend": trend(this.get(t, 0), before.get(t, 0))} for t in types]
    return render(request, "scorecard.html", principal, chart=Markup(chart), rows=_rows(pairs), outcomes=outcomes,
                  period=period, kinds=KINDS, tenant=scope, tenants=known, labels=labels, earlier=earlier,
                  previous=previous(asked).label if isinstance(asked, Period) else None)
