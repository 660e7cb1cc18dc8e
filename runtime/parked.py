"""Everything set aside after failing, whatever set it aside: parked messages (the bus), read-model events (the
projection runner) and deliveries (the delivery ledger), each with the id `loopline parked` acts on it by — for
`loopline parked`, `loopline status` and the dashboard's System page."""

from __future__ import annotations

import hashlib
from typing import Any

from loopline.domain.parked import PARKED
from loopline.processors.followers import parked as parked_messages
from loopline.projections.parked import count_parked, list_parked
from loopline.runtime.system import System


def delivery_id(key: str, channel: str) -> str:
    return "d-" + hashlib.sha256(f"{key} {channel}".encode()).hexdigest()[:8]


def everything_parked(system: System, *, include_closed: bool = False) -> list[dict[str, Any]]:
    """One row per parked thing, whatever parked it, with the id to act on it by."""
    rows: list[dict[str, Any]] = []
    for message in parked_messages.parked_messages(system.app):
        if include_closed or message.status == PARKED:
            rows.append({
                "id": parked_messages.short_id(message.id), "parked": "message", "status": message.status,
                "tenant": message.tenant, "what": f"{message.kind} {message.type} {message.ref}", "at": message.at,
                "source": f"{message.source}:{message.position}", "error": f"{message.error_type}: {message.error}",
                "attempts": message.attempts, "trace": message.trace, "data": message.data, "closed_by": message.closed_by,
                "_ref": message.id,
            })
    with system.projections.engine.connect() as conn:
        events = list_parked(conn, include_closed=include_closed)
    for event in events:
        rows.append({
            "id": f"p-{event['projection']}-{event['position']}", "parked": "read model event", "status": event["status"],
            "tenant": event["tenant"], "what": f"{event['event_type']} in read model {event['projection']}",
            "at": event["parked_at"], "source": f"event {event['position']}",
            "error": f"{event['error_type']}: {event['error']}", "attempts": 1, "trace": event["trace"],
            "closed_by": event["closed_by"], "_ref": (event["projection"], event["position"]),
        })
    for delivery in system.delivery.ledger.parked():
        rows.append({
            "id": delivery_id(delivery["key"], delivery["channel"]), "parked": "delivery", "status": PARKED,
            "tenant": delivery["tenant"], "what": f"{delivery['kind']} to {delivery['to']} via {delivery['channel']}",
            "at": delivery["parked_at"], "source": delivery["key"], "error": delivery["last_error"],
            "attempts": delivery["attempts"], "_ref": (delivery["key"], delivery["channel"]),
        })
    return rows



def parked_counts(system: System) -> dict[str, int]:
    """How many messages, read-model events and deliveries are parked now, for `loopline status` and the System page."""
    with system.projections.engine.connect() as conn:
        events = sum(count_parked(conn).values())
    return {
        "messages": sum(message.status == PARKED for message in parked_messages.parked_messages(system.app)),
        "read_model_events": events,
        "deliveries": len(system.delivery.ledger.parked()),
    }
