"""Secrets as every reader but the HTTP edge sees them: a tenant's settings, and a `tenant.configure` line that was
refused and kept as a reject (its secrets replaced, the rest as it came)."""

from __future__ import annotations

import json
from typing import Any

from loopline.domain.tenant import SECRET_SETTINGS

MASKED = "set"
"""What a reader sees in place of a secret that is set."""


def masked(settings: dict[str, Any]) -> dict[str, Any]:
    """The settings with a secret that is set reading `set` (a mapping of secrets, `set` for each of its keys)."""

    def mask(value: Any) -> Any:
        if value is None:
            return None
        return {key: MASKED for key in value} if isinstance(value, dict) else MASKED

    return {key: mask(value) if key in SECRET_SETTINGS else value for key, value in settings.items()}


def masked_line(raw: bytes) -> bytes:
    """A JSON line whose `type` is `tenant.configure`, with the secrets of its `data` masked; any other line as it
    came. A line that is not JSON cannot be told to be one and is kept as it came."""
    if b"tenant.configure" not in raw:  # most rejects are not: spare them the parse
        return raw
    try:
        line = json.loads(raw)
    except (ValueError, RecursionError):
        return raw
    if not isinstance(line, dict) or line.get("type") != "tenant.configure" or not isinstance(line.get("data"), dict):
        return raw
    return json.dumps({**line, "data": masked(line["data"])}, ensure_ascii=False).encode()
