"""Configures the `eventsourcing` library's persistence from an event-store URL."""

from __future__ import annotations

from pathlib import Path


class UnsupportedStore(ValueError):
    pass


def event_store_env(url: str) -> dict[str, str]:
    if url.startswith("sqlite:///"):
        path = Path(url.removeprefix("sqlite:///"))
        path.parent.mkdir(parents=True, exist_ok=True)
        return {
            "PERSISTENCE_MODULE": "eventsourcing.sqlite",
            "SQLITE_DBNAME": str(path),
            "SQLITE_LOCK_TIMEOUT": "30",
        }
    if url.startswith(("postgresql://", "postgres://")):
        raise UnsupportedStore(
            "a PostgreSQL event store comes with the scale deployment, which is not built yet; "
            "unset LOOPLINE_EVENT_STORE to use the embedded SQLite store"
        )
    raise UnsupportedStore(f"LOOPLINE_EVENT_STORE={url!r} is not a sqlite:///PATH or postgresql:// URL")
