"""`/metrics`: the deployment's numbers in Prometheus's text format, read from the event store, the delivery ledger
and the read models at scrape time (nothing is counted in this process), so every `serve` process reports the same
totals. Scraped with the operator's key as a Bearer token."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from eventsourcing.utils import get_topic
from fastapi import APIRouter, Depends, HTTPException, Request
from fastapi.responses import Response
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from loopline.adapters.clock import SystemClock
from loopline.adapters.heartbeats import TickTimes
from loopline.domain.inbound import InboundMessage, RejectedInput
from loopline.domain.parked import ParkedMessage
from loopline.projections.model_usage import totals_by_tenant
from loopline.runtime.status import system_status
from loopline.runtime.system import System
from loopline.web.auth import Principal, api_principal

router = APIRouter(tags=["operations"])
REFUSED, UNREADABLE, PARKED = (get_topic(InboundMessage.Rejected), get_topic(RejectedInput.Recorded),
                               get_topic(ParkedMessage.Parked))
TOKENS = {"input": "input_tokens", "output": "output_tokens", "cache_read": "cache_read_tokens",
          "cache_write": "cache_write_tokens"}


class LooplineCollector(Collector):
    """Reads the numbers `loopline status` reads (and the ledger's and the model's counts) on every scrape."""

    def __init__(self, system: System) -> None:
        self.system = system

    def collect(self) -> Iterator[Metric]:
        system = self.system
        status = system_status(system, SystemClock().now())
        stored = system.app.process_recorder.count_by_topic([REFUSED, UNREADABLE, PARKED])  # type: ignore[attr-defined]
        refused, parked = stored.get(REFUSED, 0), stored.get(PARKED, 0)
        processed = status["messages_processed"]
        yield _counter("loopline_messages_processed", "Distinct messages processed, applied, refused or parked.",
                       processed)
        yield _counter("loopline_messages_applied", "Messages that took effect.", processed - refused - parked)
        yield _counter("loopline_messages_rejected", "Messages the domain refused (each with its reason).", refused)
        yield _counter("loopline_messages_parked", "Messages set aside after their handler failed every retry.", parked)
        yield _counter("loopline_rejected_inputs", "Input that never became a message (unreadable or invalid).",
                       stored.get(UNREADABLE, 0))
        yield _labelled(GaugeMetricFamily, "loopline_input_pending", "Messages waiting to be processed per source "
                        "(the embedded log, or a Kafka partition).", ["source"],
                        {(row["source"],): row["pending"] for row in status["inputs"]})
        yield _labelled(GaugeMetricFamily, "loopline_read_model_lag", "Events a read model has still to project.",
                        ["read_model"], {(row["name"],): row["lag"] for row in status["read_models"]})
        yield _labelled(GaugeMetricFamily, "loopline_deliveries", "Deliveries in the delivery ledger per channel and "
                        "status (delivered, retrying, failed = parked, ...).", ["channel", "status"],
                        system.delivery.ledger.counts())  # type: ignore[attr-defined]
        yield _labelled(GaugeMetricFamily, "loopline_parked", "What is parked now, by what it is.", ["what"],
                        {(what,): count for what, count in status["parked"].items()})
        yield _labelled(CounterMetricFamily, "loopline_limit_holds", "Times a limit held something back, per rule.",
                        ["rule"], {(rule,): held for rule, held in status["limits_held"].items()})
        yield from _model(system)
        yield from _pauses_and_workers(status)
        yield from _tick(system)


def _counter(name: str, documentation: str, value: float) -> Metric:
    return CounterMetricFamily(name, documentation, value=value)


def _labelled(family: Any, name: str, documentation: str, labels: list[str], values: dict[tuple[str, ...], float]) -> Metric:
    metric = family(name, documentation, labels=labels)
    for label_values, value in sorted(values.items()):
        metric.add_metric(list(label_values), value)
    return metric


def _model(system: System) -> Iterator[Metric]:
    with system.projections.engine.connect() as conn:
        usage = totals_by_tenant(conn)
    yield _labelled(CounterMetricFamily, "loopline_model_calls", "Model calls asked for, per tenant.", ["tenant"],
                    {(tenant,): counts["calls"] for tenant, counts in usage.items()})
    yield _labelled(CounterMetricFamily, "loopline_model_calls_held", "Model calls a limit held back, per tenant.",
                    ["tenant"], {(tenant,): counts["held"] for tenant, counts in usage.items()})
    yield _labelled(CounterMetricFamily, "loopline_model_tokens", "Tokens the model's decisions spent, per tenant and "
                    "kind (cache_read: read from the prompt cache).", ["tenant", "kind"],
                    {(tenant, kind): counts[column] for tenant, counts in usage.items() for kind, column in TOKENS.items()})


def _pauses_and_workers(status: dict[str, Any]) -> Iterator[Metric]:
    yield GaugeMetricFamily("loopline_system_paused", "1 while system.pause holds every tenant.",
                            value=int(status["pauses"]["system"] is not None))
    yield GaugeMetricFamily("loopline_tenants_paused", "Tenants paused by tenant.pause.",
                            value=len(status["pauses"]["tenants"]))
    alive = sum(worker["alive"] for worker in status["workers"])
    yield _labelled(GaugeMetricFamily, "loopline_workers", "`loopline run` workers by their heartbeats.", ["state"],
                    {("alive",): alive, ("silent",): len(status["workers"]) - alive})


def _tick(system: System) -> Iterator[Metric]:
    last = TickTimes(system.ledger_engine).last()
    if last is None:  # never ticked: no value rather than a made-up zero
        return
    yield GaugeMetricFamily("loopline_tick_duration_seconds", "How long the last scheduler tick took (its scan and "
                            "the drain of what it caused).", value=last.duration)
    yield GaugeMetricFamily("loopline_tick_last_finished_timestamp_seconds", "When the last tick ended (Unix time).",
                            value=last.finished_at.timestamp())
    yield GaugeMetricFamily("loopline_tick_actions", "What the last tick did (actions taken).", value=last.actions)


def registry_for(system: System) -> CollectorRegistry:
    """A registry of its own (not the process-wide default, which holds this process's Python metrics), holding only
    the Loopline collector; making one per scrape costs nothing (it collects only when asked)."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(LooplineCollector(system))
    return registry


@router.get("/metrics", response_class=Response)
def metrics(request: Request, principal: Principal = Depends(api_principal)) -> Response:
    """The Prometheus text exposition; needs the operator's key (`Authorization: Bearer <key>`)."""
    if not principal.operator:
        raise HTTPException(403, "/metrics is the operator's: scrape it with an operator key "
                                 "(`loopline keys create --operator`)")
    return Response(generate_latest(registry_for(request.app.state.system)), media_type=CONTENT_TYPE_LATEST)
