"""What `loopline status` shows beside the deployment's own state: one tenant's loop, and workers' partitions."""

from __future__ import annotations

from typing import Any

from loopline.cli.context import opened
from loopline.cli.output import out, print_json, print_table
from loopline.domain.safety_limits import NO_OP_RUNS_BEFORE_BACKOFF
from loopline.domain.wording import count
from loopline.projections.loop_metrics import metrics_of
from loopline.projections.proactive_runs import list_runs

RATES = (
    ("proposal_acceptance_rate", "proposals accepted", "proposals_accepted", "proposals_rejected"),
    ("stuck_rate", "tasks stalled", "tasks_stalled", "tasks_created"),
    ("idle_run_rate", "runs that did nothing", "runs_idle", "runs"),
)
"""Each rate of the loop with its label and the counts it is read from (part, and the rest or the whole)."""


def print_tenant_status(tenant: str, *, as_json: bool) -> None:
    """`loopline status --tenant T`: the tenant's loop metrics (seed 001 §9) and its proactive run's pace."""
    with opened() as system, system.projections.engine.connect() as conn:
        metrics = metrics_of(conn, tenant)
        run = next((row for row in list_runs(conn) if row["tenant"] == tenant), None)
    result: dict[str, Any] = {"tenant": tenant, "loop": metrics, "proactive_run": run}
    if as_json:
        print_json(result)
        return
    if run is None and not metrics["tasks_created"]:
        out.print(f"tenant {tenant}: no task or run yet (`loopline tenants list` lists the configured tenants)",
                  highlight=False)
        return
    rows = [{"metric": label, "value": _percent(metrics[rate]), "from": f"{metrics[part]} of {metrics[rest]}"}
            for rate, label, part, rest in RATES]
    rows.insert(1, {"metric": "escalation resolution (hours, mean)",
                    "value": "-" if metrics["escalation_resolution_hours"] is None else metrics["escalation_resolution_hours"],
                    "from": f"{metrics['escalations_resolved']} resolved of {metrics['escalations']}"})
    print_table(f"loop of {tenant}", rows, ["metric", "value", "from"])
    if run is not None:
        out.print(_pace(run), highlight=False)
        out.print(f"next proactive run: {run['next_run_at']} ({run['next_run_reason']})", highlight=False)


def _pace(run: dict[str, Any]) -> str:
    """The owner's activity tier and the empty runs in a row, as the last finished run paced the next."""
    tier = f"the owner is {run['tier']}" if run["tier"] else "the owner's tier is not known (no run since they were seen)"
    empty = count(run["empty_runs_in_a_row"], "run")
    return (f"proactive run pace: {tier}; {empty} in a row took no action "
            f"(every {NO_OP_RUNS_BEFORE_BACKOFF} double the interval)")


def _percent(rate: float | None) -> str:
    return "-" if rate is None else f"{rate:.0%}"


def compact_partitions(names: list[str]) -> str:
    """`p.commands[0], p.commands[2]` as `p.commands[0,2]`: a worker's partitions on one short line."""
    by_topic: dict[str, list[str]] = {}
    for name in names:
        topic, bracket, partition = name.rstrip("]").rpartition("[")
        if bracket:
            by_topic.setdefault(topic, []).append(partition)
        else:
            by_topic[name] = []  # not a partition: the embedded log
    return ", ".join(f"{topic}[{','.join(parts)}]" if parts else topic for topic, parts in by_topic.items()) or "-"
