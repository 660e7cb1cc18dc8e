"""What `loopline status` and `loopline tenants show` say about what holds sending back: a pause (the system's or a
tenant's) and an upstream in degraded mode (seed 002 §34)."""

from __future__ import annotations

from typing import Any

from loopline.cli.output import out, styled


def print_pauses(paused: dict[str, Any]) -> None:
    """The system's pause first (it holds every tenant), then each paused tenant's."""
    system_pause = paused["system"]
    if system_pause:
        out.print(styled("PAUSED", "red", f": Loopline, every tenant, since {system_pause['since']} by "
                         f"{system_pause['by']} ({system_pause['reason']}); {system_pause['held']} step(s) held; "
                         "system.resume lifts it"), highlight=False)
    for row in paused["tenants"]:
        out.print(styled("paused", "yellow", f": tenant {row['tenant']} since {row['since']} by {row['by']} "
                         f"({row['reason']}); {row['held']} step(s) held; tenant.resume lifts it"), highlight=False)
    if not system_pause and not paused["tenants"]:
        out.print("paused: nothing (system.pause and tenant.pause stop sending)")


def print_degraded(model: list[dict[str, Any]], channels: list[dict[str, Any]]) -> None:
    """Each upstream failing now: the model per tenant, each delivery channel; a degraded one recovers by itself."""
    for row in model:
        state = f"degraded since {row['degraded_since']}" if row["degraded"] else "failing"
        out.print(styled(state, "red" if row["degraded"] else "yellow",
                         f": the model for tenant {row['tenant']}, {row['failures']} failure(s) in a row (last: "
                         f"{row['last_error']}); decisions wait and are asked again"), highlight=False)
    for row in channels:
        state = "degraded" if row["degraded"] else "failing"
        out.print(styled(state, "red" if row["degraded"] else "yellow",
                         f": channel {row['channel']}, {row['failed_attempts']} failed attempt(s) since its last "
                         f"delivery ({row['last_delivered_at'] or 'none yet'}), tenants {', '.join(row['tenants'])} "
                         f"(last: {row['last_error']}); retried with backoff, then parked"), highlight=False)
    if not model and not channels:
        out.print("upstreams: healthy (the model and every delivery channel answer)")
