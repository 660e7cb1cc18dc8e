"""What a `loopline run` worker tells its operator: one JSON object per line on standard error, one line per event,
and what it did (messages applied, actions, deliveries with `--console`) on standard output.

Every line has `at` (UTC), `level`, `event` and `worker` (host:pid of the `loopline run` process; its
leader process logs under the same id, with its own `pid`). Events: `worker.started`,
`partitions.assigned`, `partitions.revoked`, `lead.taken`, `lead.lost`, `lead.released`, `leader.stalled`,
`worker.failed` and `leader.failed` (an unexpected failure, before a restart), `leader.restarted`,
`progress` (every `--progress-every` seconds), `worker.stopped`; other log records (warnings of the
Kafka client, dead-lettered input) come as `event: "log"` with their `message`.
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


def one_line(error: BaseException) -> str:
    """The error's type and the first line of its message (SQLAlchemy's runs on with the statement)."""
    text = str(error).strip()
    return f"{type(error).__name__}: {text.splitlines()[0]}" if text else type(error).__name__


def print_delivered(line: str) -> None:
    out.print(line, highlight=False, markup=False)
