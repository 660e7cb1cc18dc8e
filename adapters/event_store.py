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
            "PERSISTENCE_MODULE": "loopline.adapters.sqlite_store:CachingSQLiteFactory",
            "SQLITE_DBNAME": str(path),
            "SQLITE_LOCK_TIMEOUT": "30",
        }
    if url.startswith(("postgresql://", "postgres://")):
        return postgres_env(url)
    raise UnsupportedStore(f"LOOPLINE_EVENT_STORE={url!r} is not a sqlite:///PATH or postgresql:// URL")


def postgres_env(url: str) -> dict[str, str]:
    """Maps a libpq URL (TCP or `?host=/socket/dir`) onto eventsourcing's POSTGRES_* settings."""
    try:
        from psycopg.conninfo import conninfo_to_dict
    except ImportError:
        raise UnsupportedStore(
            "a PostgreSQL event store needs the scale extras: pip install 'loopline[scale]'"
        ) from None
    params = conninfo_to_dict(url)
    return {
        "PERSISTENCE_MODULE": "loopline.adapters.postgres_recorder:TimeoutsPostgresFactory",
        "PROCESS_RECORDER_TOPIC": "loopline.adapters.postgres_recorder:UnpipelinedProcessRecorder",
        "POSTGRES_DBNAME": str(params.get("dbname") or "postgres"),
        "POSTGRES_HOST": str(params.get("host") or "localhost"),
        "POSTGRES_PORT": str(params.get("port") or "5432"),
        "POSTGRES_USER": str(params.get("user") or "postgres"),
        "POSTGRES_PASSWORD": str(params.get("password") or ""),
        "POSTGRES_POOL_SIZE": "5",
        "POSTGRES_MAX_OVERFLOW": "10",
        "POSTGRES_LOCK_TIMEOUT": "10",
        "POSTGRES_CONNECT_TIMEOUT": "10",
        "POSTGRES_IDLE_IN_TRANSACTION_SESSION_TIMEOUT": "60",
    }
