"""What the agent scenarios (test_agent_assistant, test_agent_gym) share: the model their deployments are
configured with, and reading what was sent."""

from __future__ import annotations

from email.message import EmailMessage

MODEL = "claude-test-model"  # LOOPLINE_MODEL where a test asks for the local Messages API server


def body(email: EmailMessage) -> str:
    """The text as written: SMTP carries lines ending in CRLF."""
    return email.get_content().replace("\r\n", "\n").strip()

