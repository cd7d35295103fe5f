"""The ``verdicts`` table: every judge's verdict on every answer of a run, each under one answer key.

Covers: the DDL (:data:`VERDICTS_DDL`), writing a batch in one transaction (:func:`write_verdicts`, :func:`insert_verdicts`;
a verdict for the same (answer, judge, key) replaced), reading them back (:func:`load_verdicts`),
the runs that have any (:func:`judged_runs`), the verdicts a judge already has and on which gold text
(:func:`done_verdicts`, what makes a rerun free) and deleting one arm's (:func:`delete_verdicts`). A row holds the judge's name (``rules``,
``openai:gpt-4o-mini/mem0``, ``gpt-4o-mini (imported)``), the model, the prompt's name and hash, the
gold answer it judged against, the label (CORRECT / WRONG / UNDECIDED) and the judge's reason.

Does not cover: deciding a verdict (``evaluation.judging``), the figures (``evaluation.judge_report``).
The store is anything with ``cursor()``, ``transaction()`` and ``ensure()`` (as in ``runs``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pyarrow as pa

from bfr_core.duck import fetch_if_tables, rows_to_columns

Store = Any  # bfr_core.store.Store, or anything with cursor(), transaction() and ensure() (a layer does not import across itself)

VERDICTS_DDL = """
CREATE TABLE IF NOT EXISTS verdicts (
    run_id VARCHAR, question_id VARCHAR, arm VARCHAR, judge VARCHAR, key VARCHAR,
    label VARCHAR, reason VARCHAR, model VARCHAR, prompt VARCHAR, prompt_hash VARCHAR, gold VARCHAR,
    elapsed_ms DOUBLE, created TIMESTAMP DEFAULT current_timestamp,
    PRIMARY KEY (run_id, question_id, arm, judge, key));
"""
COLUMNS = ("run_id", "question_id", "arm", "judge", "key", "label", "reason", "model", "prompt", "prompt_hash",
           "gold", "elapsed_ms")
ORIGINAL = "original"  # the dataset's own answer key


def ensure_verdicts(store: Store) -> None:
    store.ensure(VERDICTS_DDL)


def insert_verdicts(cur: Any, rows: Sequence[Sequence[Any]]) -> None:
    """Rows in :data:`COLUMNS` order through ``cur`` (inside the caller's transaction), in one bulk
    statement; each replaces that (answer, judge, key)'s verdict."""
    arrow = pa.table(rows_to_columns(COLUMNS, rows))  # noqa: F841  (read by DuckDB's replacement scan below)
    if rows:
        names = ", ".join(COLUMNS)
        cur.execute(f"INSERT OR REPLACE INTO verdicts ({names}) SELECT {names} FROM arrow")


def write_verdicts(store: Store, rows: Sequence[Sequence[Any]]) -> None:
    """:func:`insert_verdicts` in a transaction of its own."""
    if not rows:
        return
    ensure_verdicts(store)
    with store.transaction() as tx:
        insert_verdicts(tx, rows)


def load_verdicts(store: Store, run_id: str) -> list[dict[str, Any]]:
    """Every verdict of a run, by question, arm, judge, key."""
    ensure_verdicts(store)
    cur = store.cursor().execute(f"SELECT {', '.join(COLUMNS)} FROM verdicts WHERE run_id = ? "
                                 "ORDER BY question_id, arm, judge, key", [run_id])
    return [dict(zip(COLUMNS, r, strict=True)) for r in cur.fetchall()]


def done_verdicts(store: Store, run_id: str, judge: str) -> dict[tuple[str, str, str], tuple[str, str]]:
    """(question, arm, key) -> (prompt hash, gold) of the decided verdicts ``judge`` holds on a run."""
    ensure_verdicts(store)
    rows = store.cursor().execute(
        "SELECT question_id, arm, key, prompt_hash, gold FROM verdicts WHERE run_id = ? AND judge = ? "
        "AND label IS NOT NULL", [run_id, judge]).fetchall()
    return {(r[0], r[1], r[2]): (r[3], r[4]) for r in rows}


def delete_verdicts(store: Store, run_id: str, arm: str) -> None:
    ensure_verdicts(store)
    store.cursor().execute("DELETE FROM verdicts WHERE run_id = ? AND arm = ?", [run_id, arm])


def judged_runs(store: Store) -> list[tuple[str, str, int]]:
    """(run, dataset, verdicts) of every run with a verdict, newest run first; none on a read-only
    store where no verdict was ever written."""
    return [tuple(r) for r in fetch_if_tables(
        store.cursor(), "SELECT v.run_id, u.dataset_id, count(*) FROM verdicts v JOIN runs u USING (run_id) "
        "GROUP BY v.run_id, u.dataset_id, u.created ORDER BY u.created DESC, v.run_id") or ()]
