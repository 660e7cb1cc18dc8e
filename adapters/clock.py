"""The wall clock, used only where no business time is given (e.g. recording a rejected input line)."""

from __future__ import annotations

from datetime import datetime, timezone


class SystemClock:
    def now(self) -> datetime:
        return datetime.now(timezone.utc)
