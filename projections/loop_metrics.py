"""The `loop_metrics` read model: what the loop learns per tenant (seed 001 §9, issue 21 item 5).

Counts, not rates, are stored, so every event adds to its row; `metrics_of` divides. The acceptance rate counts the
owner's answers to proposals (seed 001 §3) and to tasks waiting for approval, which are Loopline proposing work too;
an escalation is resolved by the owner's guidance or by the task closing, and its time is summed from when it first
went to the owner. A proactive run did nothing when it handled no escalation and took no action (a synthesis run acts
through its tools: the `ProactiveRun.ActionTaken` events before its `RunRecorded`).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import Column, Integer, String, Table, select
from sqlalchemy.engine import Connection

from loopline.domain.proactive_run import ProactiveRun
from loopline.domain.proposal import Proposal
from loopline.domain.task import Task
from loopline.domain.timeutil import format_time, parse_time
from loopline.projections import writes
from loopline.projections.runner import metadata

loop_metrics = Table(
    "loop_metrics", metadata,
    Column("tenant", String(200), primary_key=True),
    Column("tasks_created", Integer, nullable=False),
    Column("proposals_accepted", Integer, nullable=False),
    Column("proposals_rejected", Integer, nullable=False),
    Column("escalations", Integer, nullable=False),
    Column("escalations_resolved", Integer, nullable=False),
    Column("escalation_resolution_seconds", Integer, nullable=False),
    Column("tasks_stalled", Integer, nullable=False),
    Column("runs", Integer, nullable=False),
    Column("runs_idle", Integer, nullable=False),
)
COUNTS = tuple(column.name for column in loop_metrics.columns if column.name != "tenant")

open_escalations = Table(
    "loop_metrics_escalations", metadata,
    Column("task_id", String(36), primary_key=True),
    Column("escalated_at", String(40)),  # when the open escalation first went to the owner; None once resolved
)

runs_acting = Table(
    "loop_metrics_runs", metadata,
    Column("tenant", String(200), primary_key=True),
    Column("actions", Integer, nullable=False),  # actions the tenant's proactive run took since its last RunRecorded
)


def _add(conn: Connection, tenant: str, **counts: int) -> None:
    if writes.row(conn, loop_metrics, tenant) is None:
        writes.insert(conn, loop_metrics, {"tenant": tenant, **dict.fromkeys(COUNTS, 0), **counts})
        return
    writes.update(conn, loop_metrics, tenant, add=counts)


def _created(conn: Connection, event: Task.Created, position: int) -> None:
    _add(conn, event.tenant, tasks_created=1)


def _reviewed(conn: Connection, event: Task.Reviewed, position: int) -> None:
    _add(conn, event.tenant, **{"proposals_accepted" if event.decision == "approved" else "proposals_rejected": 1})


def _approved(conn: Connection, event: Proposal.Approved, position: int) -> None:
    _add(conn, event.tenant, proposals_accepted=1)


def _rejected(conn: Connection, event: Proposal.Rejected, position: int) -> None:
    _add(conn, event.tenant, proposals_rejected=1)


def _escalated(conn: Connection, event: Task.Escalated, position: int) -> None:
    key = str(event.originator_id)
    row = writes.row(conn, open_escalations, key)
    if row is None:
        writes.insert(conn, open_escalations, {"task_id": key, "escalated_at": format_time(event.timestamp)})
    elif row["escalated_at"] is None:
        writes.update(conn, open_escalations, key, set={"escalated_at": format_time(event.timestamp)})
    else:
        return  # escalated again while still with the owner: one escalation, timed from the first
    _add(conn, event.tenant, escalations=1)


def _resolved(conn: Connection, event: Any, position: int) -> None:
    """Guidance, a completion, a cancellation or an expiry ends the task's open escalation, if it has one."""
    key = str(event.originator_id)
    row = writes.row(conn, open_escalations, key)
    if row is None or row["escalated_at"] is None:
        return
    seconds = _seconds_between(parse_time(row["escalated_at"]), event.timestamp)  # before the update changes `row`
    writes.update(conn, open_escalations, key, set={"escalated_at": None})
    _add(conn, event.tenant, escalations_resolved=1, escalation_resolution_seconds=seconds)


def _seconds_between(start: datetime, end: datetime) -> int:
    return max(0, int((end - start).total_seconds()))


def _stalled(conn: Connection, event: Task.StallFlagged, position: int) -> None:
    _add(conn, event.tenant, tasks_stalled=1)


def _acted(conn: Connection, event: ProactiveRun.ActionTaken, position: int) -> None:
    if writes.row(conn, runs_acting, event.tenant) is None:
        writes.insert(conn, runs_acting, {"tenant": event.tenant, "actions": 1})
    else:
        writes.update(conn, runs_acting, event.tenant, add={"actions": 1})


def _ran(conn: Connection, event: ProactiveRun.RunRecorded, position: int) -> None:
    acting = writes.row(conn, runs_acting, event.tenant)
    actions = acting["actions"] if acting else 0
    if actions:
        writes.update(conn, runs_acting, event.tenant, set={"actions": 0})
    _add(conn, event.tenant, runs=1, runs_idle=int(event.escalations_handled == 0 and actions == 0))


ENDS_ESCALATION = (Task.Escalated, Task.GuidanceGiven, Task.Completed, Task.Cancelled, Task.Expired)


def prefetch(conn: Connection, events: list[Any]) -> None:
    """Reads the rows a batch's events touch in three queries, not one per event."""
    followed = [event for event in events if type(event) in handlers]
    writes.preload(conn, loop_metrics, list({event.tenant for event in followed}))
    writes.preload(conn, open_escalations,
                   list({str(event.originator_id) for event in followed if isinstance(event, ENDS_ESCALATION)}))
    writes.preload(conn, runs_acting, list({event.tenant for event in followed if isinstance(event, (
        ProactiveRun.ActionTaken, ProactiveRun.RunRecorded))}))


name = "loop_metrics"
cost = 0.3  # a guess, not measured with bench/rebuild.py: every task's creation, like proactive_runs' share
tables = (loop_metrics, open_escalations, runs_acting)
handlers = {
    Task.Created: _created,
    Task.Reviewed: _reviewed,
    Proposal.Approved: _approved,
    Proposal.Rejected: _rejected,
    Task.Escalated: _escalated,
    Task.GuidanceGiven: _resolved,
    Task.Completed: _resolved,
    Task.Cancelled: _resolved,
    Task.Expired: _resolved,
    Task.StallFlagged: _stalled,
    ProactiveRun.ActionTaken: _acted,
    ProactiveRun.RunRecorded: _ran,
}


def _rate(part: int, whole: int) -> float | None:
    return round(part / whole, 3) if whole else None


def metrics_of(conn: Connection, tenant: str) -> dict[str, Any]:
    """The tenant's counts and the rates seed 001 §9 watches; a rate is None while nothing was counted for it."""
    row = conn.execute(select(loop_metrics).where(loop_metrics.c.tenant == tenant)).first()
    counts = {count: row._mapping[count] if row else 0 for count in COUNTS}
    reviewed = counts["proposals_accepted"] + counts["proposals_rejected"]
    resolved = counts["escalations_resolved"]
    return {
        "tenant": tenant, **counts,
        "proposal_acceptance_rate": _rate(counts["proposals_accepted"], reviewed),
        "escalation_resolution_hours": (
            round(counts["escalation_resolution_seconds"] / resolved / 3600, 2) if resolved else None
        ),
        "stuck_rate": _rate(counts["tasks_stalled"], counts["tasks_created"]),
        "idle_run_rate": _rate(counts["runs_idle"], counts["runs"]),
    }
