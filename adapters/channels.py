"""Outbound channels: the JSONL outbox (always on) and the console (`loopline run --console`).

Email and webhooks are in `adapters/smtp.py` and `adapters/webhook.py`.
"""

from __future__ import annotations

import fcntl
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

from loopline.processors.ports import DeliveryFailed


class JsonlOutbox:
    """Appends one line per idempotency key to a JSONL file, under an exclusive file lock.

    Other processes may append too: before writing, it reads what was appended since it last
    looked, so a key already in the file is never written again. A torn last line (a writer
    died mid-line) is cut off, and the message it held is written again whole.
    """

    name = "jsonl"
    drops_repeats = True

    def __init__(self, path: Path) -> None:
        self.path = path
        self._keys: set[str] = set()
        self._read_to = 0
        self._file_id: tuple[int, int] | None = None

    def accepts(self, message: dict[str, Any]) -> bool:
        return True

    def send(self, *, key: str, message: dict[str, Any]) -> None:
        line = (json.dumps({"key": key, **message}, sort_keys=True) + "\n").encode("utf-8")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open("a+b") as out:
                fcntl.flock(out, fcntl.LOCK_EX)
                try:
                    self._catch_up(out)
                    if key in self._keys:
                        return
                    out.write(line)
                    out.flush()  # in the OS's hands: a killed process loses nothing (no fsync per line: it costs ~1 ms)
                    self._read_to += len(line)
                    self._keys.add(key)
                finally:
                    fcntl.flock(out, fcntl.LOCK_UN)
        except OSError as error:
            raise DeliveryFailed(f"cannot append to {self.path}: {error.strerror or error}") from error

    def _catch_up(self, out: IO[bytes]) -> None:
        """Reads the lines appended since the last look (all of them if the file was replaced) and cuts a torn tail."""
        stat = os.fstat(out.fileno())
        if self._file_id != (stat.st_dev, stat.st_ino) or stat.st_size < self._read_to:
            self._file_id, self._keys, self._read_to = (stat.st_dev, stat.st_ino), set(), 0
        out.seek(self._read_to)
        appended = out.read()
        whole = appended[: appended.rfind(b"\n") + 1]
        for raw in whole.splitlines():
            try:
                self._keys.add(json.loads(raw)["key"])
            except (ValueError, KeyError, TypeError):
                continue  # an old torn line a previous version left mid-file; its message was written again after it
        self._read_to += len(whole)
        if len(whole) < len(appended):
            out.truncate(self._read_to)
        out.seek(0, os.SEEK_END)


class ConsoleChannel:
    """Prints each delivered message as one readable line."""

    name = "console"
    drops_repeats = False

    def __init__(self, write: Callable[[str], None]) -> None:
        self.write = write

    def accepts(self, message: dict[str, Any]) -> bool:
        return True

    def send(self, *, key: str, message: dict[str, Any]) -> None:
        whose = f"{message.get('tenant', '?')}/{message.get('task_id', '?')}"
        self.write(f"{message.get('at', '')}  to {message.get('to')}  {message.get('kind')}  [{whose}]  {message.get('text', '')}")

