"""The one way a test waits for a state another process or thread reaches: poll, then fail naming what it waited for."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any


def eventually(condition: Callable[[], Any], what: str, timeout: float = 60.0) -> Any:
    """What `condition` found once it found something; fails the test, naming `what`, after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while not (found := condition()):
        assert time.monotonic() < deadline, f"timed out after {timeout:.0f} s waiting for {what}"
        time.sleep(0.05)
    return found
