"""bfr_core.duck: bulk inserts through Arrow, lock errors told apart from other open failures.

A lock held by another process (the StoreLocked path) is exercised end to end in test_store.py.
"""

from __future__ import annotations

from pathlib import Path

import duckdb
import pyarrow as pa
import pytest

from bfr_core.duck import (
    LOCK_WAIT_S,
    StoreError,
    StoreLocked,
    connect,
    fetch_if_tables,
    insert_columns,
    is_lock_error,
    lock_wait_default,
    rows_to_columns,
)


def _table() -> duckdb.DuckDBPyConnection:
    con = duckdb.connect(":memory:")
    con.execute("CREATE TABLE t (k VARCHAR PRIMARY KEY, v INTEGER)")
    return con


def test_rows_become_columns_in_name_order():
    assert rows_to_columns(("k", "v"), [("a", 1), ("b", 2)]) == {"k": ["a", "b"], "v": [1, 2]}
    assert rows_to_columns(("k", "v"), []) == {"k": [], "v": []}


def test_insert_columns_writes_every_row_in_one_statement():
    con = _table()
    insert_columns(con.cursor(), "t", rows_to_columns(("k", "v"), [("a", 1), ("b", 2)]))
    assert con.execute("SELECT k, v FROM t ORDER BY k").fetchall() == [("a", 1), ("b", 2)]


def test_insert_columns_or_ignore_keeps_the_first_row_and_plain_insert_refuses_a_duplicate():
    con = _table()
    insert_columns(con.cursor(), "t", {"k": ["a"], "v": [1]})
    insert_columns(con.cursor(), "t", {"k": ["a", "c"], "v": [9, 3]}, or_ignore=True)
    assert con.execute("SELECT k, v FROM t ORDER BY k").fetchall() == [("a", 1), ("c", 3)]
    with pytest.raises(duckdb.ConstraintException):
        insert_columns(con.cursor(), "t", {"k": ["a"], "v": [2]})


def test_insert_columns_with_no_rows_runs_nothing():
    con = _table()
    insert_columns(con.cursor(), "missing_table", {"k": [], "v": []})  # no statement, so no error
    assert con.execute("SELECT count(*) FROM t").fetchone() == (0,)


def test_lock_errors_are_told_apart_from_other_open_failures(tmp_path):
    assert is_lock_error(OSError('Could not set lock on file "x": Conflicting lock is held in /bin/python (PID 7)'))
    assert not is_lock_error(OSError("No such file or directory"))
    with pytest.raises(StoreError) as err:
        connect(str(tmp_path / "no-such-dir" / "s.duckdb"))
    assert not isinstance(err.value, StoreLocked) and "cannot open store" in str(err.value)


def test_lock_wait_default_reads_the_environment_and_survives_a_bad_value(monkeypatch):
    monkeypatch.setenv("BFR_LOCK_WAIT_S", "4.5")
    assert lock_wait_default() == 4.5
    monkeypatch.setenv("BFR_LOCK_WAIT_S", "soon")
    assert lock_wait_default() == LOCK_WAIT_S


def test_insert_columns_in_chunks_writes_every_row_in_order_and_rolls_back_as_one():
    con = _table()
    keys = [f"k{i:02d}" for i in range(7)]
    insert_columns(con.cursor(), "t", {"k": keys, "v": pa.array(range(7), pa.int32())}, chunk_rows=3)
    assert con.execute("SELECT k, v FROM t ORDER BY k").fetchall() == [(k, i) for i, k in enumerate(keys)]
    cur = con.cursor()
    cur.execute("BEGIN")
    with pytest.raises(duckdb.ConstraintException):  # the third chunk repeats a key
        insert_columns(cur, "t", {"k": ["x1", "x2", "x3", "x4", "k00"], "v": [1, 2, 3, 4, 5]}, chunk_rows=2)
    cur.execute("ROLLBACK")
    assert con.execute("SELECT count(*) FROM t").fetchone() == (7,)


def test_fetch_if_tables_reads_a_missing_table_as_none_and_other_errors_still_raise():
    con = _table()
    con.execute("INSERT INTO t VALUES ('a', 1), ('b', 2)")
    assert fetch_if_tables(con, "SELECT k, v FROM t ORDER BY k") == [("a", 1), ("b", 2)]
    assert fetch_if_tables(con, "SELECT count(*) FROM t WHERE v > ?", [1], one=True) == (1,)
    assert fetch_if_tables(con, "SELECT * FROM no_such_table") is None
    assert fetch_if_tables(con, "SELECT * FROM no_such_table", one=True) is None
    with pytest.raises(duckdb.BinderException):  # a wrong column is a bug, not an empty store
        fetch_if_tables(con, "SELECT no_such_column FROM t")


def test_a_missing_table_is_caught_in_one_home():
    """Only duck.fetch_if_tables (and runs.list_runs, which re-raises on a writable store) catch
    DuckDB's missing-table error; every other reader goes through the helper."""
    root = Path(__file__).resolve().parents[1] / "bfr_core"
    catching = sorted(str(p.relative_to(root)) for p in root.rglob("*.py") if "CatalogException" in p.read_text())
    assert catching == ["duck.py", "runs.py"]
