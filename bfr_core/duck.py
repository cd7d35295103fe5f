"""DuckDB plumbing under every table: opening a file through another process's lock, and bulk inserts.

* :func:`connect` retries a lock another process holds for up to ``wait_s`` seconds, then raises
  :class:`StoreLocked` naming the holder (:func:`lock_wait_default`: ``BFR_LOCK_WAIT_S`` or :data:`LOCK_WAIT_S`);
* :func:`check_shape` refuses a store whose tables have another shape than the DDL that makes them
  (a view in a table's place, a missing column), before anything is written;
* :func:`insert_columns` writes many rows through Arrow in one statement, or one per chunk of rows
  (an ingest's turns: :data:`INSERT_CHUNK_ROWS`), so a large ingest holds one chunk's Arrow copy at a
  time, not the whole table's (:func:`rows_to_columns` turns row tuples into its columns);
* :func:`fetch_if_tables` reads a query as empty when a table it names does not exist yet: a read-only
  view of a store no writer has made that table in (the one home of that rule).

``store`` (the benchmark data) and ``runs`` (runs and traces) both write through here.
Does not cover: the tables themselves (each owner keeps its DDL beside its code).
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa

from bfr_core.errors import BfrError


class StoreError(BfrError):
    """A store operation that cannot go ahead; the message says why and what to do."""


class StoreLocked(StoreError):
    """Another process holds the store's lock for longer than we were willing to wait."""


LOCK_WAIT_S = 30.0  # default wait for a held lock (``BFR_LOCK_WAIT_S`` overrides)


def lock_wait_default() -> float:
    try:
        return float(os.environ.get("BFR_LOCK_WAIT_S", LOCK_WAIT_S))
    except ValueError:
        return LOCK_WAIT_S


def is_lock_error(exc: BaseException) -> bool:
    return "lock" in str(exc).lower() and "conflicting" in str(exc).lower()


def _holder(exc: BaseException) -> str:
    m = re.search(r"held in (\S+) \(PID (\d+)\)", str(exc))
    return f"process {m.group(2)} ({Path(m.group(1)).name})" if m else "another process"


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0][:300]


_SHAPES: dict[str, dict[str, set[str]]] = {}
_ADDED = re.compile(r"ADD\s+COLUMN\s+IF\s+NOT\s+EXISTS\s+(\w+)", re.I)


def ddl_shape(ddl: str) -> dict[str, set[str]]:
    """table -> the columns ``ddl`` gives it (read off an empty in-memory database, once per DDL)."""
    if ddl not in _SHAPES:
        con = duckdb.connect(":memory:")
        con.execute(ddl)
        shape: dict[str, set[str]] = {}  # base tables only: views the DDL makes are its own to replace
        for table, column in con.execute("SELECT c.table_name, c.column_name FROM duckdb_columns() c JOIN "
                                         "duckdb_tables() t USING (table_name)").fetchall():
            shape.setdefault(table, set()).add(column)
        con.close()
        _SHAPES[ddl] = shape
    return _SHAPES[ddl]


def check_shape(con: duckdb.DuckDBPyConnection, ddl: str, path: str) -> None:
    """StoreError when a table ``ddl`` creates already exists in another shape (a view, or a table
    lacking columns the DDL does not add itself): made by another program or version, it would
    fail later, half way through a command. Reads only."""
    want = ddl_shape(ddl)
    added = {m.lower() for m in _ADDED.findall(ddl)}
    have: dict[str, set[str]] = {}
    for table, column in con.execute("SELECT table_name, column_name FROM duckdb_columns() "
                                     "WHERE schema_name = 'main'").fetchall():
        have.setdefault(table, set()).add(column)
    views = {r[0] for r in con.execute("SELECT view_name FROM duckdb_views() WHERE NOT internal "
                                       "AND schema_name = 'main'").fetchall()}
    for table, columns in sorted(want.items()):
        if table in views:
            raise StoreError(f"store {path}: '{table}' is a view, not the table bfr keeps; this file was "
                             "not made by bfr: use another store file")
        missing = sorted(c for c in columns - have.get(table, columns) if c.lower() not in added)
        if missing:
            raise StoreError(f"store {path}: table '{table}' has no column {', '.join(missing)} (made by another "
                             "version of bfr?); ingest into a new store file")


DUCKDB_MAGIC = b"DUCK"  # DuckDB's file header carries it at bytes 8..12


def is_duckdb_file(path: str | Path) -> bool:
    """Whether ``path`` is a file that starts as a DuckDB database does."""
    try:
        with open(path, "rb") as f:
            head = f.read(12)
    except OSError:
        return False
    return head[8:12] == DUCKDB_MAGIC


def not_a_store(path: str | Path) -> bool:
    """Whether ``path`` is a file that is no DuckDB store (other bytes, or none: DuckDB opens no empty file)."""
    p = Path(path)
    return p.is_file() and not is_duckdb_file(p)


def connect(path: str, *, read_only: bool = False, wait_s: float = 0.0,
            poll_s: float = 0.1) -> duckdb.DuckDBPyConnection:
    """``duckdb.connect``, retrying a lock held by another process for up to ``wait_s`` seconds; a file
    that is no DuckDB store is refused by name (DuckDB says odd things of some, e.g. "in-memory" of a .jsonl)."""
    if path != ":memory:" and not_a_store(path):
        raise StoreError(f"cannot open store {path}: it exists but is not a DuckDB store")
    if path != ":memory:" and not read_only and not Path(path).exists() and Path(f"{path}.wal").exists():
        raise StoreError(f"cannot open store {path}: its write-ahead log {path}.wal is there without it, and a new "
                         "store would discard that log; restore the store file, or move the .wal away")
    deadline = time.monotonic() + max(0.0, wait_s)
    while True:
        try:
            return duckdb.connect(path, read_only=read_only)
        except duckdb.Error as exc:  # not a DuckDB file, a newer storage version, no permission, a lock
            if not is_lock_error(exc):
                raise StoreError(f"cannot open store {path}: {_first_line(exc)}") from None
            if time.monotonic() >= deadline:
                raise StoreLocked(
                    f"store {path} is locked by {_holder(exc)} (waited {wait_s:.0f} s). DuckDB lets one "
                    "process write a file: wait for that process (a `bfr eval` run, an ingest, or the app "
                    "in the middle of a request) to finish, or use another store file. BFR_LOCK_WAIT_S sets "
                    "how long to wait.") from exc
            time.sleep(poll_s)


INSERT_CHUNK_ROWS = 20_000  # rows per statement for a large ingest: bounds the Arrow copy held at once


def insert_columns(cur: duckdb.DuckDBPyConnection, table: str, columns: dict[str, Sequence[Any]], *,
                   or_ignore: bool = False, chunk_rows: int | None = None) -> None:
    """Insert many rows given as columns through Arrow: one statement, or one per ``chunk_rows`` rows
    in order (atomic only inside the caller's transaction). ``executemany`` runs one statement per
    row, milliseconds each: seconds for one eval batch of a few hundred rows."""
    n = len(next(iter(columns.values()))) if columns else 0
    step = max(1, chunk_rows or n)
    names = ", ".join(columns)
    verb = "INSERT OR IGNORE" if or_ignore else "INSERT"
    for start in range(0, n, step):
        arrow = pa.table({k: v[start:start + step] for k, v in columns.items()})
        cur.execute(f"{verb} INTO {table} ({names}) SELECT {names} FROM arrow")  # DuckDB reads the local `arrow`
        del arrow  # one chunk's copy at a time


def rows_to_columns(names: Sequence[str], rows: Sequence[Sequence[Any]]) -> dict[str, list[Any]]:
    """Row tuples (in ``names`` order) as the column lists :func:`insert_columns` takes."""
    return {name: [row[i] for row in rows] for i, name in enumerate(names)}


def fetch_if_tables(cur: duckdb.DuckDBPyConnection, sql: str, params: Sequence[Any] = (), *,
                    one: bool = False) -> Any:
    """The rows of ``sql`` (``one``: its first row), or None when a table it reads does not exist: a
    read-only view cannot create tables, so a store no writer has made them in reads as empty."""
    try:
        cur.execute(sql, list(params))
    except duckdb.CatalogException:
        return None
    return cur.fetchone() if one else cur.fetchall()

