"""Offline evaluation in worker processes: the same rows and traces as the sequential loop."""

from __future__ import annotations

import json
from typing import Any

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


def _same(a: Any, b: Any, tol: float = 2e-6) -> bool:
    """Equal JSON, except that two floats may differ by ``tol``: a trace keeps scores to 6 decimals, and
    a score computed in float32 on the far side of a rounding boundary shows in the last digit."""
    if isinstance(a, float) and isinstance(b, float):
        return abs(a - b) <= tol
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k], tol) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y, tol) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and a == b


def test_same_allows_the_last_digit_of_a_score_and_nothing_else():
    hit = {"turn_id": "s2_9", "score": 1.231583}
    assert _same({"hits": [hit]}, {"hits": [{**hit, "score": 1.231584}]})
    assert not _same({"hits": [hit]}, {"hits": [{**hit, "score": 1.23159}]})
    assert not _same({"hits": [hit]}, {"hits": [{**hit, "turn_id": "s2_8"}]})
    assert not _same({"hits": [hit]}, {"hits": [hit, hit]})
    assert not _same({"k": 10}, {"k": 10.0})


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
    for key, t in traces.items():  # the same steps; only the timings differ
        a, b = json.loads(t), json.loads(again[key])
        a.pop("elapsed_ms"), b.pop("elapsed_ms")
        assert _same(a, b), key
    store.close()
