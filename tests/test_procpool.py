"""Offline evaluation in worker processes: the same rows and traces as the sequential loop."""

from __future__ import annotations

import pytest

from bfr_core import runs
from bfr_core.evaluation import evaluate as ev
from bfr_core.ingest.demo import ensure_demo_store
from bfr_core.pipeline import ARMS
from bfr_core.retrieval.scope import clear_cache
from bfr_core.store import Store

KEYS = ("question_id", "arm", "evidence", "set_size", "calls", "gold_hit", "er", "cer", "status", "error")


def _rows(store: Store, run_id: str) -> list[tuple]:
    return [tuple(r[k] for k in KEYS) for r in runs.load_results(store, run_id)]


@pytest.mark.slow
def test_processes_give_the_sequential_rows_for_every_arm(tmp_path):
    store = ensure_demo_store(tmp_path / "demo.duckdb")
    spec = ev.RunSpec("demo", tuple(ARMS))
    run_id = ev.evaluate(store, spec)
    before = _rows(store, run_id)
    traces = dict(((q, a), t) for q, a, t in store.cursor().execute(
        "SELECT question_id, arm, trace FROM traces WHERE run_id = ?", [run_id]).fetchall())
    with store.transaction() as tx:
        for table in ("results", "traces", "runs"):
            tx.execute(f"DELETE FROM {table} WHERE run_id = ?", [run_id])
    clear_cache()
    assert ev.evaluate(store, spec, processes=2) == run_id
    assert _rows(store, run_id) == before and len(before) == len(ev.select_questions(store, "demo")) * len(ARMS)
    again = dict(((q, a), t) for q, a, t in store.cursor().execute(
        "SELECT question_id, arm, trace FROM traces WHERE run_id = ?", [run_id]).fetchall())
    strip = __import__("json").loads
    for key, t in traces.items():  # the same steps; only the timings differ
        a, b = strip(t), strip(again[key])
        a.pop("elapsed_ms"), b.pop("elapsed_ms")
        assert a == b, key
    store.close()
