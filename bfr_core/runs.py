"""The runs / results / traces tables: their schema, their writes and their reads, in one place.

Covers: the DDL (:data:`RUNS_DDL`, :func:`ensure_schema`), registering a run (:func:`register_run`,
:func:`finish_run`), an imported system's arm written whole in one transaction (:func:`write_arm`:
its run registered when new, an earlier import of it replaced, its rows and traces; a kill or a full
disk at any point leaves the store as before), which (question, arm) pairs are done
(:func:`done_pairs`), one batch of rows and traces in one transaction (:func:`write_batch`), the answer-level column updates
(:func:`update_answer_columns`, :func:`update_judge_column`) and the reads the summaries, the report,
the app and ``bfr trace`` use (:func:`run_row`, :func:`load_results`, :func:`list_runs`,
:func:`load_trace_dict`). Does not cover: what the rows mean (``evaluation.evaluate``,
``evaluation.answers``), the LLM call log (``llm.cache``).

It sits beside ``store`` in the store layer, so it takes the store as anything with ``cursor()``,
``transaction()`` and ``ensure()`` (a layer does not import across itself). Every write goes through
the store's one connection (a cursor per call), so a process has one writer; callers that run work in threads hand their rows to one thread that calls these.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import Any, Protocol

import duckdb

from bfr_core.arm_names import canonical_arm, stored_names
from bfr_core.duck import fetch_if_tables, insert_columns, rows_to_columns


class Store(Protocol):
    """What these functions need of ``bfr_core.store.Store``."""

    def cursor(self) -> Any: ...

    def transaction(self) -> AbstractContextManager[Any]: ...

    def ensure(self, ddl: str) -> None: ...


RUNS_DDL = """
CREATE TABLE IF NOT EXISTS runs (
    run_id VARCHAR PRIMARY KEY, dataset_id VARCHAR, arms VARCHAR[], budget VARCHAR, k INTEGER,
    provider VARCHAR, n_questions INTEGER, options JSON, created TIMESTAMP DEFAULT current_timestamp,
    finished TIMESTAMP);
CREATE TABLE IF NOT EXISTS results (
    run_id VARCHAR, question_id VARCHAR, arm VARCHAR, budget VARCHAR, qtype VARCHAR,
    evidence VARCHAR[], set_size INTEGER, calls INTEGER, gold_n INTEGER,
    gold_hit DOUBLE, turn_hit DOUBLE, er DOUBLE, cer DOUBLE, recall_any DOUBLE, recall_all DOUBLE,
    ndcg_any DOUBLE, elapsed_ms DOUBLE, status VARCHAR, error VARCHAR,
    answer VARCHAR, f1 DOUBLE, judge VARCHAR, suff VARCHAR, suff_detail JSON, llm_ms DOUBLE,
    PRIMARY KEY (run_id, question_id, arm));
ALTER TABLE runs ADD COLUMN IF NOT EXISTS data_sha VARCHAR;
ALTER TABLE results ADD COLUMN IF NOT EXISTS llm_ms DOUBLE;
ALTER TABLE results ADD COLUMN IF NOT EXISTS judge_reason VARCHAR;
ALTER TABLE results ADD COLUMN IF NOT EXISTS lme_judge VARCHAR;
CREATE TABLE IF NOT EXISTS traces (
    run_id VARCHAR, question_id VARCHAR, arm VARCHAR, trace JSON,
    PRIMARY KEY (run_id, question_id, arm));
"""

RESULT_COLUMNS = (
    "run_id", "question_id", "arm", "budget", "qtype", "evidence", "set_size", "calls", "gold_n",
    "gold_hit", "turn_hit", "er", "cer", "recall_any", "recall_all", "ndcg_any", "elapsed_ms",
    "status", "error", "llm_ms",
)
TRACE_COLUMNS = ("run_id", "question_id", "arm", "trace")

SELECT_ANSWER_TODO = """
SELECT r.question_id, r.arm, r.evidence, r.answer, r.judge, r.suff, r.lme_judge
FROM results r JOIN runs u ON u.run_id = r.run_id
WHERE r.run_id = ? AND r.status = 'ok'
ORDER BY r.question_id, r.arm
"""
UPDATE_FIRST = """
UPDATE results SET answer = ?, f1 = ?, suff = ?, suff_detail = coalesce(?, suff_detail), error = ?,
    llm_ms = coalesce(llm_ms, 0) + ?
WHERE run_id = ? AND question_id = ? AND arm = ?
"""
UPDATE_JUDGE = """
UPDATE results SET judge = ?, judge_reason = ?, error = coalesce(?, error), llm_ms = coalesce(llm_ms, 0) + ?
WHERE run_id = ? AND question_id = ? AND arm = ?
"""
UPDATE_LME_JUDGE = """
UPDATE results SET lme_judge = ?, error = coalesce(?, error), llm_ms = coalesce(llm_ms, 0) + ?
WHERE run_id = ? AND question_id = ? AND arm = ?
"""


def ensure_schema(store: Store) -> None:
    store.ensure(RUNS_DDL)


def register_run(store: Store, run_id: str, dataset_id: str, arms: Sequence[str], budget: str, k: int,
                 provider: str, n_questions: int, options: dict[str, Any], data_sha: str | None = None) -> None:
    """The run's row (kept as first written when the run is resumed). ``data_sha`` is the content hash
    of the dataset version the run is computed on (``datasets.source_sha256``)."""
    _register(store.cursor(), run_id, dataset_id, arms, budget, k, provider, n_questions, options, data_sha)


def _register(cur: Any, run_id: str, dataset_id: str, arms: Sequence[str], budget: str, k: int, provider: str,
              n_questions: int, options: dict[str, Any], data_sha: str | None) -> None:
    cur.execute(
        "INSERT OR IGNORE INTO runs (run_id, dataset_id, arms, budget, k, provider, n_questions, options, data_sha) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [run_id, dataset_id, list(arms), budget, k, provider, n_questions, json.dumps(options), data_sha],
    )


# A run is *current* when it was computed on the dataset version the store holds now: its recorded
# content hash is the dataset's, or (a run from before the hash was recorded) it was created after the
# dataset was last ingested. Anything else (the dataset replaced by other data, or gone) is *stale*: its
# rows cite turns the store may not hold, so no view mixes them with current rows.
CURRENT_RUN = ("(d.dataset_id IS NOT NULL AND "
               "coalesce(u.data_sha = d.source_sha256, u.created >= d.ingested_at, false))")


def _sha_column(store: Store) -> str:
    """``u.data_sha``, or NULL in a store opened read-only before that column existed."""
    cols = {r[0] for r in store.cursor().execute(
        "SELECT column_name FROM information_schema.columns WHERE table_name = 'runs'").fetchall()}
    return "u.data_sha" if "data_sha" in cols else "NULL::VARCHAR"


def run_versions(store: Store) -> str:
    """SQL of (run_id, data_sha, current) for every run."""
    sha = _sha_column(store)
    return (f"SELECT u.run_id, {sha} AS data_sha, {CURRENT_RUN.replace('u.data_sha', sha)} AS current "
            "FROM runs u LEFT JOIN datasets d ON d.dataset_id = u.dataset_id")


def stale_runs(store: Store, dataset_id: str) -> dict[str, str]:
    """Run id -> recorded content hash ("" before hashes were recorded) of the runs of ``dataset_id``
    computed on another version of its data, oldest first."""
    ensure_schema(store)
    return {r[0]: r[1] or "" for r in store.cursor().execute(
        f"SELECT v.run_id, v.data_sha FROM ({run_versions(store)}) v JOIN runs u USING (run_id) "
        "WHERE u.dataset_id = ? AND NOT v.current ORDER BY u.created, u.run_id", [dataset_id]).fetchall()}


def write_arm(store: Store, run_id: str, arm: str, rows: list[tuple[Any, ...]], traces: list[tuple[Any, ...]], *,
              new_run: dict[str, Any] | None = None, replace: bool = False, finish: bool = False) -> None:
    """An imported system's arm of a run, in one transaction: the run registered first when
    ``new_run`` holds :func:`register_run`'s keyword arguments, the arm's earlier rows and traces
    deleted when ``replace``, the arm added to the run's arms, its rows and traces inserted, and the
    run marked finished only when ``finish`` (a run of its own; another run's state is never changed)."""
    with store.transaction() as tx:
        if new_run is not None:
            _register(tx, run_id, **{"data_sha": None, **new_run})
        if replace:
            for table in ("results", "traces"):
                tx.execute(f"DELETE FROM {table} WHERE run_id = ? AND arm = ?", [run_id, arm])
        tx.execute("UPDATE runs SET arms = list_append(arms, ?) WHERE run_id = ? AND NOT list_contains(arms, ?)",
                   [arm, run_id, arm])
        _insert_batch(tx, run_id, rows, traces)
        if finish:
            _finish(tx, run_id)


def finish_run(store: Store, run_id: str) -> None:
    _finish(store.cursor(), run_id)


def _finish(cur: Any, run_id: str) -> None:
    cur.execute("UPDATE runs SET finished = ? WHERE run_id = ?", [time.strftime("%Y-%m-%d %H:%M:%S"), run_id])


def done_pairs(store: Store, run_id: str) -> set[tuple[str, str]]:
    rows = store.cursor().execute(
        "SELECT question_id, arm FROM results WHERE run_id = ? AND status = 'ok'", [run_id]
    ).fetchall()
    return {(r[0], r[1]) for r in rows}


def write_batch(store: Store, run_id: str, rows: list[tuple[Any, ...]], traces: list[tuple[Any, ...]]) -> None:
    """One transaction: this batch's rows replace failed rows of an earlier attempt at the same
    (question, arm) pairs; finished pairs are never rewritten. Bulk inserts, not one per row."""
    with store.transaction() as tx:
        _insert_batch(tx, run_id, rows, traces)


def _insert_batch(tx: Any, run_id: str, rows: list[tuple[Any, ...]], traces: list[tuple[Any, ...]]) -> None:
    batch = {(r[1], r[2]) for r in rows}
    earlier = tx.execute("SELECT question_id, arm FROM results WHERE run_id = ? AND status = 'failed'",
                         [run_id]).fetchall()
    for question_id, arm in (p for p in earlier if p in batch):
        tx.execute("DELETE FROM results WHERE run_id = ? AND question_id = ? AND arm = ?",
                   [run_id, question_id, arm])
    insert_columns(tx, "results", rows_to_columns(RESULT_COLUMNS, rows), or_ignore=True)
    insert_columns(tx, "traces", rows_to_columns(TRACE_COLUMNS, traces), or_ignore=True)


def answer_todo(store: Store, run_id: str) -> list[tuple[Any, ...]]:
    """(question_id, arm, evidence, answer, judge, suff, lme_judge) of every finished row, by question then arm."""
    return store.cursor().execute(SELECT_ANSWER_TODO, [run_id]).fetchall()


def update_answer_columns(cur: Any, run_id: str, question_id: str, arm: str, *, answer: str | None,
                          f1: float | None, suff: str | None, suff_detail: str | None, error: str | None,
                          llm_ms: float) -> None:
    cur.execute(UPDATE_FIRST, [answer, f1, suff, suff_detail, error, llm_ms, run_id, question_id, arm])


def update_judge_column(cur: Any, run_id: str, question_id: str, arm: str, *, judge: str | None,
                        error: str | None, llm_ms: float, reason: str | None = None) -> None:
    cur.execute(UPDATE_JUDGE, [judge, reason, error, llm_ms, run_id, question_id, arm])


def update_lme_judge_column(cur: Any, run_id: str, question_id: str, arm: str, *, label: str | None,
                            error: str | None, llm_ms: float) -> None:
    cur.execute(UPDATE_LME_JUDGE, [label, error, llm_ms, run_id, question_id, arm])


def run_row(store: Store, run_id: str) -> tuple[Any, ...] | None:
    """(dataset_id, arms, n_questions, budget, k, provider) of one run, or None (also when no run was
    ever written: a read-only open has no runs table to create)."""
    ensure_schema(store)  # a runs table of another shape is refused here, not half way through a report
    return fetch_if_tables(store.cursor(), "SELECT dataset_id, arms, n_questions, budget, k, provider FROM runs "
                           "WHERE run_id = ?", [run_id], one=True)


def load_results(store: Store, run_id: str) -> list[dict[str, Any]]:
    cur = store.cursor()
    cur.execute("SELECT * FROM results WHERE run_id = ? ORDER BY question_id, arm", [run_id])
    names = [d[0] for d in cur.description]
    return [dict(zip(names, r, strict=True)) for r in cur.fetchall()]


def list_runs(store: Store) -> list[dict[str, Any]]:
    """Every run, newest first, each with ``current`` (see :data:`CURRENT_RUN`) and its arms by registered
    name (``arm_names``); none on a read-only view of a store no eval has touched (no runs table)."""
    ensure_schema(store)
    cur = store.cursor()
    try:
        cur.execute(f"SELECT u.*, v.current FROM runs u JOIN ({run_versions(store)}) v USING (run_id) "
                    "ORDER BY u.created DESC, u.run_id")
    except duckdb.CatalogException:
        if not store.read_only:
            raise
        return []
    names = [d[0] for d in cur.description]
    runs = [dict(zip(names, r, strict=True)) for r in cur.fetchall()]
    return [{**r, "arms": [canonical_arm(a) for a in r["arms"]] if r["arms"] else r["arms"]} for r in runs]


def load_trace_dict(store: Store, run_id: str, question_id: str, arm: str) -> dict[str, Any] | None:
    """The stored trace of ``arm`` (by its registered name or an alias, ``arm_names``: a run stored under
    either is found) on one question of a run, as stored; None when there is none."""
    ensure_schema(store)
    row = fetch_if_tables(
        store.cursor(),
        "SELECT trace FROM traces WHERE run_id = ? AND question_id = ? AND list_contains(?, arm) ORDER BY arm",
        [run_id, question_id, list(dict.fromkeys((arm, *stored_names(arm))))], one=True)
    return json.loads(row[0]) if row else None


TIMING_COLUMNS = frozenset({"elapsed_ms", "llm_ms"})  # wall times: the only columns that may differ between reruns


def comparable_rows(cur: Any) -> tuple[list[tuple[Any, ...]], list[tuple[str, str, str]]]:
    """A run store's results rows without their timing columns, and its traces without their
    ``elapsed_ms``, both in (question, arm) order: what two runs of the same work must share, whatever
    the executor or the number of workers."""
    res = cur.execute("SELECT * FROM results ORDER BY question_id, arm")
    names = [d[0] for d in res.description]
    rows = [tuple(v for n, v in zip(names, row, strict=True) if n not in TIMING_COLUMNS) for row in res.fetchall()]
    traces = []
    for qid, arm, trace in cur.execute("SELECT question_id, arm, trace FROM traces ORDER BY 1, 2").fetchall():
        t = json.loads(trace)
        t.pop("elapsed_ms", None)
        traces.append((qid, arm, json.dumps(t, sort_keys=True)))
    return rows, traces
