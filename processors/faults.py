"""Test-only fault injection, to prove quarantine on a real deployment.

`LOOPLINE_TEST_FAULTS="handler:MARK,projection:MARK,delivery:MARK"` (read by the composition root)
makes the named site raise `InjectedFault` for any message, event or delivery whose content holds
MARK. Restarting without the variable is then "the fix". Unset, `ACTIVE` is empty and every call
site skips its check with one truth test.
"""

from __future__ import annotations

import json
from typing import Any

SITES = ("handler", "projection", "delivery")
ACTIVE: dict[str, str] = {}


class InjectedFault(RuntimeError):
    """Raised where LOOPLINE_TEST_FAULTS asked for a failure."""


def configure(spec: str) -> None:
    """Sets the faults from `site:MARK,...`; an empty spec clears them."""
    ACTIVE.clear()
    for part in filter(None, (item.strip() for item in spec.split(","))):
        site, _, marker = part.partition(":")
        if site not in SITES or not marker:
            raise ValueError(f"LOOPLINE_TEST_FAULTS: {part!r} is not site:MARK with a site among {', '.join(SITES)}")
        ACTIVE[site] = marker


def check(site: str, subject: Any) -> None:
    marker = ACTIVE.get(site)
    if marker and marker in json.dumps(subject, default=str):
        raise InjectedFault(f"injected {site} fault for content holding {marker!r} (LOOPLINE_TEST_FAULTS)")
