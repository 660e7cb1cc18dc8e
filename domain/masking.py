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


SECRET_NAMES = tuple(name.encode() for name in SECRET_SETTINGS)
CUT = b" [the rest is not kept: it names a secret]"


def masked_line(raw: bytes) -> bytes:
    """A line naming no secret setting as it came (so its fingerprint and its reason stay as they were); a
    `tenant.configure` JSON line with its set secrets masked; and any other line naming one (a JSON typo, a line cut
    at the size limit) kept only up to the first secret's name, since what follows it cannot be told apart."""
    if not any(name in raw for name in SECRET_NAMES):  # most rejects: spared the parse, kept byte for byte
        return raw
    try:
        line = json.loads(raw)
    except (ValueError, RecursionError):
        line = None
    if isinstance(line, dict) and isinstance(line.get("data"), dict):
        data = line["data"]
        if not any(data.get(name) for name in SECRET_SETTINGS):
            return raw  # names a secret setting but sets none: nothing to hide
        if line.get("type") == "tenant.configure":
            return json.dumps({**line, "data": masked(data)}).encode()  # ASCII: a lone surrogate stays an escape
    return raw[:min(raw.find(name) for name in SECRET_NAMES if name in raw)] + CUT
