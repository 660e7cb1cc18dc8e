"""The embedded event store's connections use the configured page cache."""

from __future__ import annotations

from pathlib import Path

from loopline.adapters.event_store import event_store_env
from loopline.processors.application import Loopline


def _cache_size(app: Loopline) -> int:
    with app.factory.datastore.get_connection(commit=False) as conn:
        return conn._sqlite_conn.execute("PRAGMA cache_size").fetchone()[0]


def test_connections_get_a_64_mib_page_cache_by_default(tmp_path: Path) -> None:
    app = Loopline(env=event_store_env(f"sqlite:///{tmp_path / 'events.db'}"))
    try:
        assert _cache_size(app) == -64 * 1024  # negative: KiB, as SQLite reports it
    finally:
        app.close()


def test_the_page_cache_size_is_configurable(tmp_path: Path) -> None:
    app = Loopline(env={**event_store_env(f"sqlite:///{tmp_path / 'events.db'}"), "SQLITE_CACHE_MIB": "8"})
    try:
        assert _cache_size(app) == -8 * 1024
    finally:
        app.close()
