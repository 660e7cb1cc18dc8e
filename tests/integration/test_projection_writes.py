"""Buffered read-model writes give the same rows as writing each change in order, on SQLite and PostgreSQL."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import JSON, Boolean, Column, Integer, MetaData, String, Table, select
from sqlalchemy.engine import Engine
from sqlalchemy.exc import IntegrityError

from loopline.adapters.read_model import read_model_engine
from loopline.projections import writes

metadata = MetaData()
things = Table(
    "things", metadata,
    Column("id", String(36), primary_key=True),
    Column("status", String(32)),
    Column("count", Integer, nullable=False),
    Column("done", Boolean, nullable=False),
    Column("data", JSON),
    Column("note", String(200)),
)
pairs = Table(
    "pairs", metadata,
    Column("a", String(10), primary_key=True),
    Column("b", String(10), primary_key=True),
    Column("data", JSON, nullable=False),
)


@pytest.fixture
def engine(tmp_path: Path, store_environ: dict[str, str]) -> Engine:
    url = store_environ.get("LOOPLINE_READ_MODEL", f"sqlite:///{tmp_path / 'writes.db'}")
    created = read_model_engine(url)
    metadata.create_all(created)
    yield created
    created.dispose()


def rows(engine: Engine, table: Table) -> list[dict]:
    with engine.connect() as conn:
        return [dict(row._mapping) for row in conn.execute(select(table).order_by(*table.primary_key.columns))]


def test_a_row_changed_in_the_batch_it_was_inserted_in_is_written_once_with_its_changes(engine: Engine) -> None:
    with engine.begin() as conn:
        writes.insert(conn, things, {"id": "t1", "status": "new", "count": 0, "done": False, "data": {"k": "tab\tline\n"}, "note": None})
        writes.update(conn, things, "t1", set={"status": "waiting"}, add={"count": 2})
        writes.update(conn, things, "t1", add={"count": -1})
        writes.flush(conn)
    assert rows(engine, things) == [
        {"id": "t1", "status": "waiting", "count": 1, "done": False, "data": {"k": "tab\tline\n"}, "note": None}
    ]


def test_changes_to_stored_rows_merge_per_row_in_order(engine: Engine) -> None:
    with engine.begin() as conn:
        for key in ("a", "b", "c"):
            writes.insert(conn, things, {"id": key, "status": "new", "count": 10, "done": False, "data": None, "note": "x"})
        writes.flush(conn)
    with engine.begin() as conn:
        writes.update(conn, things, "a", add={"count": 1})
        writes.update(conn, things, "a", add={"count": 1}, set={"note": None})
        writes.update(conn, things, "b", add={"count": 5})
        writes.update(conn, things, "b", set={"count": 0, "done": True})  # a later set wins over earlier adds
        writes.update(conn, things, "b", add={"count": 3})  # and a later add lands on top of it
        writes.update(conn, things, "c", set={"status": "it's \"quoted\" %s"})
        writes.flush(conn)
    assert [(r["id"], r["status"], r["count"], r["done"], r["note"]) for r in rows(engine, things)] == [
        ("a", "new", 12, False, None),
        ("b", "new", 3, True, "x"),
        ("c", "it's \"quoted\" %s", 10, False, "x"),
    ]


def test_many_changes_of_one_shape_go_in_one_statement(engine: Engine) -> None:
    count = 25_000  # as VALUES rows: 75,000 parameters, more than one PostgreSQL statement may carry
    with engine.begin() as conn:
        for i in range(count):
            writes.insert(conn, things, {"id": f"r{i}", "status": None, "count": 0, "done": False, "data": None, "note": None})
        writes.flush(conn)
    with engine.begin() as conn:
        for i in range(count):
            writes.update(conn, things, f"r{i}", set={"status": f"s{i}"}, add={"count": i})
        writes.flush(conn)
    stored = rows(engine, things)
    assert len(stored) == count
    assert all(r["status"] == f"s{r['count']}" and r["id"] == f"r{r['count']}" for r in stored)


def test_rows_with_a_composite_key_insert_and_a_repeated_key_is_refused(engine: Engine) -> None:
    with engine.begin() as conn:
        writes.insert(conn, pairs, {"a": "x", "b": "1", "data": [1, 2]})
        writes.insert(conn, pairs, {"a": "x", "b": "2", "data": {}})
        with pytest.raises(ValueError, match="pairs: row .* inserted twice"):
            writes.insert(conn, pairs, {"a": "x", "b": "1", "data": {}})
        writes.flush(conn)
    assert rows(engine, pairs) == [{"a": "x", "b": "1", "data": [1, 2]}, {"a": "x", "b": "2", "data": {}}]


def test_a_row_already_stored_fails_the_batch_with_sqlalchemys_integrity_error(engine: Engine) -> None:
    row = {"id": "t1", "status": None, "count": 0, "done": False, "data": None, "note": None}
    with engine.begin() as conn:
        writes.insert(conn, things, row)
        writes.flush(conn)
    with pytest.raises(IntegrityError), engine.begin() as conn:  # what the runner retries on: someone else projected it
        writes.insert(conn, things, row)
        writes.flush(conn)
    assert len(rows(engine, things)) == 1


def test_nothing_is_written_when_the_batch_is_discarded(engine: Engine) -> None:
    with engine.begin() as conn:
        writes.insert(conn, things, {"id": "gone", "status": None, "count": 0, "done": False, "data": None, "note": None})
        writes.discard(conn)
        writes.flush(conn)
    assert rows(engine, things) == []
