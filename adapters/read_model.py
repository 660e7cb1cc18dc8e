"""The read-model database: SQLAlchemy engines for SQLite (embedded) and PostgreSQL (scale)."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import create_engine, event
from sqlalchemy.engine import Engine


def read_model_engine(url: str) -> Engine:
    if url.startswith("sqlite:///"):
        Path(url.removeprefix("sqlite:///")).parent.mkdir(parents=True, exist_ok=True)
        engine = create_engine(url, connect_args={"timeout": 30})

        @event.listens_for(engine, "connect")
        def _wal(dbapi_connection, _record) -> None:  # readers do not block the projector
            dbapi_connection.execute("PRAGMA journal_mode=WAL")

        return engine
    if url.startswith(("postgresql://", "postgres://")):
        url = "postgresql+psycopg://" + url.split("://", 1)[1]
    from loopline.adapters.postgres_session import SESSION

    return create_engine(url, pool_pre_ping=True, connect_args=dict(SESSION))
