"""What the agent scenarios (test_agent_assistant, test_agent_gym) share: the model their deployments are
configured with, and reading what was sent once the leader has sent it."""

from __future__ import annotations

import time
from collections.abc import Callable
from email.message import EmailMessage
from typing import Any

MODEL = "claude-test-model"  # LOOPLINE_MODEL where a test asks for the local Messages API server


def body(email: EmailMessage) -> str:
    """The text as written: SMTP carries lines ending in CRLF."""
    return email.get_content().replace("\r\n", "\n").strip()


def eventually(found: Callable[[], Any], timeout: float = 60.0) -> Any:
    """At scale the leader decides and delivers after the command returns: wait for it."""
    deadline = time.monotonic() + timeout
    while not (result := found()) and time.monotonic() < deadline:
        time.sleep(0.2)
    return result
