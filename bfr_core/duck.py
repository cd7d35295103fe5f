"""DuckDB plumbing under every table: opening a file through another process's lock, and bulk inserts.

* :func:`connect` retries a lock another process holds for up to ``wait_s`` seconds, then raises
  :class:`StoreLocked` naming the holder (:func:`lock_wait_default`: ``BFR_LOCK_WAIT_S`` or 30 s);
* :func:`insert_columns` writes many rows in one statement through Arrow (:func:`rows_to_columns`
  turns row tuples into its columns).

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


def connect(path: str, *, read_only: bool = False, wait_s: float = 0.0,
            poll_s: float = 0.1) -> duckdb.DuckDBPyConnection:
    """``duckdb.connect``, retrying a lock held by another process for up to ``wait_s`` seconds."""
    deadline = time.monotonic() + max(0.0, wait_s)
    while True:
        try:
            return duckdb.connect(path, read_only=read_only)
        except duckdb.IOException as exc:
            if not is_lock_error(exc):
                raise StoreError(f"cannot open store {path}: {exc}") from exc
            if time.monotonic() >= deadline:
                raise StoreLocked(
                    f"store {path} is locked by {_holder(exc)} (waited {wait_s:.0f} s). DuckDB lets one "
                    "process write a file: wait for that process (a `bfr eval` run, an ingest, or the app "
                    "in the middle of a request) to finish, or use another store file. BFR_LOCK_WAIT_S sets "
                    "how long to wait.") from exc
            time.sleep(poll_s)


def insert_columns(cur: duckdb.DuckDBPyConnection, table: str, columns: dict[str, Sequence[Any]], *,
                   or_ignore: bool = False) -> None:
    """Insert many rows given as columns in one statement through Arrow. ``executemany`` runs one
    statement per row, milliseconds each: seconds for one eval batch of a few hundred rows."""
    arrow = pa.table(columns)  # noqa: F841  (read by DuckDB's replacement scan below)
    if arrow.num_rows:
        names = ", ".join(columns)
        verb = "INSERT OR IGNORE" if or_ignore else "INSERT"
        cur.execute(f"{verb} INTO {table} ({names}) SELECT {names} FROM arrow")


def rows_to_columns(names: Sequence[str], rows: Sequence[Sequence[Any]]) -> dict[str, list[Any]]:
    """Row tuples (in ``names`` order) as the column lists :func:`insert_columns` takes."""
    return {name: [row[i] for row in rows] for i, name in enumerate(names)}
