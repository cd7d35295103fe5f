"""Every table's rows of a closed store file (sorted; the ingest time left out), the comparison of an
old and a new code's stores; and a closed store's results and traces as ``runs.comparable_rows`` gives
them, the comparison of two runs of the same questions.

Does not cover: the comparison's report (``bench.checks.bench_store_same``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import duckdb

from bfr_core.runs import comparable_rows
from bfr_core.store import Store

SKIP = {"ingested_at", "source"}  # when it was written and from which (temp) path: not contents


def contents(path: Path) -> dict[str, list[str]]:
    """Every non-empty table's rows, sorted, as reprs (Python floats print exactly), minus :data:`SKIP`."""
    store = Store(path, read_only=True)
    cur = store.cursor()
    out = {}
    try:
        for (name,) in cur.execute("SELECT table_name FROM information_schema.tables ORDER BY 1").fetchall():
            cols = [c for (c,) in cur.execute(
                "SELECT column_name FROM information_schema.columns WHERE table_name = ? ORDER BY ordinal_position",
                [name]).fetchall() if c not in SKIP]
            out[name] = sorted(map(repr, cur.execute(f'SELECT {", ".join(cols)} FROM "{name}"').fetchall()))
    finally:
        store.close()
    return {k: v for k, v in out.items() if v}


def comparable(path: Path) -> tuple[list[tuple[Any, ...]], list[tuple[str, str, str]]]:
    """``runs.comparable_rows`` of the store file at ``path``, opened read-only."""
    con = duckdb.connect(str(path), read_only=True)
    try:
        return comparable_rows(con)
    finally:
        con.close()
