"""What a `loopline run` worker tells its operator: one JSON object per line on standard error, one line per event,
and what it did (messages applied, actions, deliveries with `--console`) on standard output.

Every line has `at` (UTC), `level`, `event` and `worker` (host:pid of the `loopline run` process; its
leader process logs under the same id, with its own `pid`). Events: `worker.started`,
`partitions.assigned`, `partitions.revoked`, `lead.taken`, `lead.lost`, `lead.released`, `leader.stalled`,
`worker.failed` and `leader.failed` (an unexpected failure, before a restart), `leader.restarted`,
`progress` (every `--progress-every` seconds), `worker.stopped`; `message.parked` (a message that failed, to
retry with `loopline parked`) and `message.refused` (one the domain refused), each naming the message's `id`,
`type`, `tenant`, `task_id` where its data names one, and where it came in (`topic`, `partition`, `offset` at
scale; the embedded log's `position`). Other log records (warnings of the Kafka client) come as `event: "log"`
with their `message`; a dead-lettered record's also names its `topic`, `partition`, `offset`, `tenant` and
`task_id`, as far as the record can be read.
"""

from __future__ import annotations

import json
import logging
import os
import socket
import sys
from datetime import datetime, timezone
from typing import Any

from rich.console import Console

from loopline.processors.bus import Outcomes
from loopline.processors.messages import Inbound

log = logging.getLogger("loopline.worker")
out = Console(markup=False)  # what the worker did, on standard output, printed as the CLI prints


def worker_id() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


class JsonLines(logging.Formatter):
    def __init__(self, worker: str) -> None:
        super().__init__()
        self.worker = worker

    def format(self, record: logging.LogRecord) -> str:
        at = datetime.fromtimestamp(record.created, tz=timezone.utc).isoformat(timespec="milliseconds")
        entry: dict[str, Any] = {
            "at": at.replace("+00:00", "Z"), "level": record.levelname.lower(),
            "event": getattr(record, "event", "log"), "worker": self.worker,
        }
        if record.process != int(self.worker.rsplit(":", 1)[-1]):
            entry["pid"] = record.process  # the leader process, logging for its worker
        entry.update(getattr(record, "fields", {}))
        if not hasattr(record, "event"):
            entry["logger"] = record.name
            entry["message"] = record.getMessage()
        if record.exc_info:
            entry["error"] = self.formatException(record.exc_info)
        return json.dumps(entry, default=str)


def configure(worker: str) -> None:
    """Loopline's own events at INFO, everyone else's (the Kafka client's) from WARNING, all as JSON lines."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonLines(worker))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(logging.WARNING)
    logging.getLogger("loopline").setLevel(logging.INFO)


def event(name: str, level: int = logging.INFO, **fields: Any) -> None:
    log.log(level, name, extra={"event": name, "fields": fields})


def messages_set_aside(outcomes: Outcomes[Any]) -> None:
    """A line for each message of a batch that was parked or refused, naming its tenant and task."""
    for outcome in outcomes.parked:
        event("message.parked", logging.WARNING, **_about(outcome.step), reason=str(outcome.detail))
    for outcome in outcomes.rejected:
        event("message.refused", **_about(outcome.step), reason=str(outcome.detail))


def _about(step: Any) -> dict[str, Any]:
    if not isinstance(step, Inbound):
        return {"step": type(step).__name__}
    message = step.message
    fields: dict[str, Any] = {"id": message.ref, "type": message.type, "tenant": message.tenant}
    if isinstance(message.data.get("task_id"), str):
        fields["task_id"] = message.data["task_id"]
    if step.source:  # "<topic>:<partition>:<offset>"
        topic, partition, offset = step.source.rsplit(":", 2)
        return {**fields, "topic": topic, "partition": int(partition), "offset": int(offset)}
    return {**fields, "position": step.position}


def one_line(error: BaseException) -> str:
    """The error's type and the first line of its message (SQLAlchemy's runs on with the statement)."""
    text = str(error).strip()
    return f"{type(error).__name__}: {text.splitlines()[0]}" if text else type(error).__name__


def print_delivered(line: str) -> None:
    out.print(line, highlight=False, markup=False)
