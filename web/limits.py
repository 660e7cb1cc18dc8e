"""Request limits at the HTTP edge: a body size cap and a token bucket per key, both answered with a clear error."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field

from fastapi import HTTPException, Request

DEFAULT_MAX_BODY = 1024 * 1024
"""Bytes a request body may have (LOOPLINE_HTTP_MAX_BODY): `loopline publish` takes bigger files."""
DEFAULT_RATE = 600
"""Requests a key may make a minute (LOOPLINE_HTTP_RATE_LIMIT), with bursts of as many."""


async def read_body(request: Request, limit: int) -> bytes:
    """The body, refused with 413 as soon as it passes `limit` bytes (whatever Content-Length claims)."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise HTTPException(413, f"the body has {declared} bytes, more than the {limit} allowed; "
                                 "send fewer lines a request")
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > limit:
            raise HTTPException(413, f"the body is more than the {limit} bytes allowed; send fewer lines a request")
    return bytes(body)


@dataclass
class _Bucket:
    tokens: float
    updated: float


@dataclass
class RateLimiter:
    """A token bucket per name (a key id, or a webhook's tenant and source) in this process: `per_minute` requests a
    minute, refilled continuously. Each serve process limits on its own, so N processes allow N times as many."""

    per_minute: int = DEFAULT_RATE
    buckets: dict[str, _Bucket] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def take(self, name: str, now: float | None = None) -> float | None:
        """None when a request may go ahead, else the seconds until one may."""
        now = time.monotonic() if now is None else now
        rate = self.per_minute / 60.0
        with self.lock:
            bucket = self.buckets.setdefault(name, _Bucket(float(self.per_minute), now))
            bucket.tokens = min(float(self.per_minute), bucket.tokens + (now - bucket.updated) * rate)
            bucket.updated = now
            if bucket.tokens >= 1.0:
                bucket.tokens -= 1.0
                return None
            return (1.0 - bucket.tokens) / rate

    def check(self, name: str) -> None:
        """Raises 429 with Retry-After when `name` has made too many requests."""
        wait = self.take(name)
        if wait is not None:
            raise HTTPException(429, f"more than {self.per_minute} requests a minute; retry in {wait:.0f} s",
                                headers={"Retry-After": str(max(1, round(wait)))})
