"""Outbound channels. The JSONL outbox is the embedded default: one line per delivered message."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


class JsonlOutbox:
    """Appends each message once per idempotency key to a JSONL file (keys already there are refused)."""

    name = "jsonl"

    def __init__(self, path: Path) -> None:
        self.path = path
        self._keys: set[str] | None = None

    def _seen(self) -> set[str]:
        if self._keys is None:
            self._keys = set()
            if self.path.exists():
                with self.path.open(encoding="utf-8") as lines:
                    self._keys = {json.loads(line)["key"] for line in lines if line.strip()}
        return self._keys

    def deliver(self, *, key: str, message: dict[str, Any]) -> bool:
        if key in self._seen():
            return False
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.path.open("a", encoding="utf-8") as out:
            out.write(json.dumps({"key": key, **message}, sort_keys=True) + "\n")
            out.flush()
        self._seen().add(key)
        return True
