"""Read-model writes buffered per batch and written in bulk: one statement per table and kind, not one per event.

Handlers call `insert` and `update`; nothing reaches the database until `flush`, which the runner
calls once per batch inside the batch's transaction. A row inserted and then changed in the same
batch is changed in memory and inserted once. Changes to rows already stored are merged per row
(a later `set` wins; `add`s sum, on top of a `set` if there was one) and written with one UPDATE
per distinct shape of change. On PostgreSQL new rows go in with COPY and changes with one
`UPDATE … FROM unnest(arrays)`; elsewhere through the driver's executemany.
"""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy import JSON, Table, bindparam
from sqlalchemy.engine import Connection
from sqlalchemy.exc import IntegrityError

PENDING = "loopline.pending"

Change = dict[str, tuple[str, Any]]  # column -> ("set", value) | ("add", delta)


class _TableWrites:
    def __init__(self, table: Table) -> None:
        self.table = table
        self.key_columns = [column.name for column in table.primary_key.columns]
        self.single_key = self.key_columns[0] if len(self.key_columns) == 1 else None
        self.new: dict[Any, dict[str, Any]] = {}
        self.changes: dict[Any, Change] = {}
        self.stored: dict[Any, dict[str, Any] | None] = {}  # rows read this batch, as stored

    def insert(self, row: dict[str, Any]) -> None:
        key = row[self.single_key] if self.single_key else tuple(row[column] for column in self.key_columns)
        if key in self.new or key in self.changes:
            raise ValueError(f"{self.table.name}: row {key!r} inserted twice in one batch")
        self.new[key] = row

    def update(self, key: Any, set_: dict[str, Any], add: dict[str, int]) -> None:
        row = self.new.get(key)
        if row is not None:
            row.update(set_)
            for column, delta in add.items():
                row[column] += delta
            return
        change = self.changes.setdefault(key, {})
        for column, value in set_.items():
            change[column] = ("set", value)
        for column, delta in add.items():
            op, old = change.get(column, ("add", 0))
            change[column] = (op, old + delta)

    def row(self, conn: Connection, key: Any) -> dict[str, Any] | None:
        if key in self.new:
            return self.new[key]
        if key not in self.stored:
            self.preload(conn, [key])
        row = self.stored[key]
        if row is None:
            return None
        row = dict(row)
        for column, (op, value) in self.changes.get(key, {}).items():
            row[column] = row[column] + value if op == "add" else value
        return row

    def preload(self, conn: Connection, keys: list[Any]) -> None:
        (key_column,) = self.key_columns
        wanted = [key for key in dict.fromkeys(keys) if key not in self.new and key not in self.stored]
        for start in range(0, len(wanted), 1000):
            part = wanted[start:start + 1000]
            found = {row._mapping[key_column]: dict(row._mapping) for row in conn.execute(
                self.table.select().where(self.table.c[key_column].in_(part))
            )}
            for key in part:
                self.stored[key] = found.get(key)

    def flush(self, conn: Connection) -> None:
        if self.new:
            _insert_rows(conn, self.table, list(self.new.values()))
        shapes: dict[tuple[tuple[str, str], ...], list[tuple[Any, Change]]] = {}
        for key, change in self.changes.items():
            shape = tuple(sorted((column, op) for column, (op, _) in change.items()))
            shapes.setdefault(shape, []).append((key, change))
        for shape, changes in shapes.items():
            (key_column,) = self.key_columns  # changes are addressed by a single-column primary key
            _update_rows(conn, self.table, key_column, shape, changes)
        self.new, self.changes, self.stored = {}, {}, {}


def _writes(conn: Connection, table: Table) -> _TableWrites:
    pending = conn.info.setdefault(PENDING, {})
    if table not in pending:
        pending[table] = _TableWrites(table)
    return pending[table]


def insert(conn: Connection, table: Table, row: dict[str, Any]) -> None:
    """Queues a new row; the queue keeps the dict itself, so build a fresh one per row."""
    _writes(conn, table).insert(row)


def update(conn: Connection, table: Table, key: Any, *, set: dict[str, Any] | None = None, add: dict[str, int] | None = None) -> None:  # noqa: A002
    """Queues a change to the row with this primary key: columns to set, counters to add to."""
    _writes(conn, table).update(key, set or {}, add or {})


def row(conn: Connection, table: Table, key: Any) -> dict[str, Any] | None:
    """The row with this primary key as the batch will leave it (queued inserts and changes applied).
    Read it; change it only through `update`."""
    return _writes(conn, table).row(conn, key)


def preload(conn: Connection, table: Table, keys: list[Any]) -> None:
    """Reads the stored rows with these primary keys in a few queries, for `row` to find them."""
    _writes(conn, table).preload(conn, keys)


def execute(conn: Connection, table: Table, statement: Any) -> Any:
    """Runs a set-based statement on a table after writing what is queued for it, so order is kept."""
    pending = conn.info.get(PENDING, {})
    if table in pending:
        pending.pop(table).flush(conn)
    return conn.execute(statement)


def flush(conn: Connection) -> None:
    """Writes everything queued on this connection."""
    for writes in conn.info.pop(PENDING, {}).values():
        writes.flush(conn)


def discard(conn: Connection) -> None:
    conn.info.pop(PENDING, None)


def _json_columns(table: Table) -> set[str]:
    return {column.name for column in table.columns if isinstance(column.type, JSON)}


def _insert_rows(conn: Connection, table: Table, rows: list[dict[str, Any]]) -> None:
    if conn.dialect.name != "postgresql":
        conn.execute(table.insert(), rows)
        return
    columns = [column.name for column in table.columns]
    as_json = _json_columns(table)
    cursor = conn.connection.dbapi_connection.cursor()
    quoted = ", ".join(f'"{name}"' for name in columns)
    statement = f'COPY "{table.name}" ({quoted}) FROM STDIN'
    try:
        with cursor.copy(statement) as copy:
            for row in rows:
                copy.write_row([json.dumps(row[c]) if c in as_json and row[c] is not None else row[c] for c in columns])
    except conn.dialect.dbapi.IntegrityError as error:
        # The driver's own error, raised as SQLAlchemy's, as every other write here does: the runner
        # treats it as "another runner projected these rows first".
        raise IntegrityError(statement, None, error) from error


def _update_rows(
    conn: Connection, table: Table, key: str, shape: tuple[tuple[str, str], ...], changes: list[tuple[Any, Change]]
) -> None:
    if conn.dialect.name != "postgresql":
        values = {
            column: (table.c[column] + bindparam(f"v_{column}")) if op == "add" else bindparam(f"v_{column}")
            for column, op in shape
        }
        statement = table.update().where(table.c[key] == bindparam("v__key")).values(values)
        conn.execute(statement, [{"v__key": k, **{f"v_{c}": v for c, (_, v) in change.items()}} for k, change in changes])
        return
    # One statement per shape with one array parameter per column: the SQL text stays the same
    # for every batch (so the driver parses it once), however many rows change.
    dialect = conn.dialect
    as_json = _json_columns(table)
    columns = [column for column, _ in shape]

    def typed(name: str) -> str:
        return f'CAST(v."{name}" AS {table.c[name].type.compile(dialect=dialect)})'

    def array_of(name: str) -> str:
        python_type = table.c[name].type.python_type if not isinstance(table.c[name].type, JSON) else str
        return {int: "bigint[]", bool: "boolean[]"}.get(python_type, "text[]")

    assignments = ", ".join(
        f'"{column}" = t."{column}" + {typed(column)}' if op == "add" else f'"{column}" = {typed(column)}'
        for column, op in shape
    )
    arrays = ", ".join(f"%b::{array_of(name)}" for name in [key, *columns])  # binary: no escaping of quotes in text
    names = ", ".join(f'"{c}"' for c in ["_key", *columns])
    params: list[list[Any]] = [[row_key for row_key, _ in changes]]
    for column in columns:
        values = [change[column][1] for _, change in changes]
        if column in as_json:
            values = [json.dumps(value) if value is not None else None for value in values]
        params.append(values)
    conn.exec_driver_sql(
        f'UPDATE "{table.name}" AS t SET {assignments} FROM unnest({arrays}) AS v({names}) '
        f'WHERE t."{key}" = {_typed_key(table, key, dialect)}',
        tuple(params),
    )


def _typed_key(table: Table, key: str, dialect: Any) -> str:
    return f'CAST(v."_key" AS {table.c[key].type.compile(dialect=dialect)})'
