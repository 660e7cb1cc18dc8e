"""Request limits at the HTTP edge: a body size cap and a token bucket per key, both answered with a clear error."""

from __future__ import annotations

import math
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


PRUNE_EVERY = 1024
"""Takes between two sweeps of the buckets whose refill has completed (a full bucket is the same as none)."""


@dataclass
class _Bucket:
    tokens: float
    updated: float


@dataclass
class RateLimiter:
    """A token bucket per name (a key id, a webhook's tenant and source, a client's failed signatures) in this
    process: `per_minute` requests a minute, refilled continuously; full buckets are dropped now and then, so names
    seen once do not pile up. Each serve process limits on its own, so N processes allow N times as many."""

    per_minute: int = DEFAULT_RATE
    buckets: dict[str, _Bucket] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)
    takes: int = 0

    def take(self, name: str, now: float | None = None) -> float | None:
        """None when a request may go ahead (it is counted), else the seconds until one may."""
        return self._ask(name, now, take=True)

    def wait(self, name: str, now: float | None = None) -> float | None:
        """What `take` would answer, counting nothing: None while `name` has a request left."""
        return self._ask(name, now, take=False)

    def _ask(self, name: str, now: float | None, *, take: bool) -> float | None:
        now = time.monotonic() if now is None else now
        rate = self.per_minute / 60.0
        with self.lock:
            if take:
                self.takes += 1
                if self.takes % PRUNE_EVERY == 0:
                    self._prune(now, rate)
            bucket = self.buckets.get(name) or _Bucket(float(self.per_minute), now)
            bucket.tokens = min(float(self.per_minute), bucket.tokens + (now - bucket.updated) * rate)
            bucket.updated = now
            if bucket.tokens < 1.0:
                return (1.0 - bucket.tokens) / rate
            if take:
                bucket.tokens -= 1.0
                self.buckets[name] = bucket
            return None

    def _prune(self, now: float, rate: float) -> None:
        full = [name for name, bucket in self.buckets.items()
                if bucket.tokens + (now - bucket.updated) * rate >= self.per_minute]
        for name in full:
            del self.buckets[name]

    def check(self, name: str) -> None:
        """Raises 429 with Retry-After when `name` has made too many requests."""
        too_many(self.take(name), self.per_minute)


def too_many(wait: float | None, per_minute: int, what: str = "requests") -> None:
    """429 with Retry-After (whole seconds, at least 1) when there is a wait."""
    if wait is not None:
        seconds = max(1, math.ceil(wait))
        raise HTTPException(429, f"more than {per_minute} {what} a minute; retry in {seconds} s",
                            headers={"Retry-After": str(seconds)})
