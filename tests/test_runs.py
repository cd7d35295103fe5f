"""The runs / results / traces tables in one module: a batch replaces failed rows, never finished
ones; reads come back as written; evaluate re-exports the old names."""

from __future__ import annotations

from bfr_core import runs
from bfr_core.evaluation import evaluate
from bfr_core.store import Store


def row(qid: str, arm: str, status: str = "ok") -> tuple:
    return ("r1", qid, arm, "", "t", ["a"] if status == "ok" else [], 1, 0, 1, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0,
            5.0, status, None if status == "ok" else "boom", None)


def test_batches_resume_and_read_back():
    s = Store()
    runs.ensure_schema(s)
    runs.register_run(s, "r1", "d", ["x", "y"], "", 10, "offline rules", 2, {"limit": None})
    runs.write_batch(s, "r1", [row("q1", "x"), row("q1", "y", "failed")], [("r1", "q1", "x", '{"arm": "x"}')])
    assert runs.done_pairs(s, "r1") == {("q1", "x")}
    runs.write_batch(s, "r1", [row("q1", "x"), row("q1", "y")], [])  # the failed pair is redone
    assert runs.done_pairs(s, "r1") == {("q1", "x"), ("q1", "y")}
    assert [(r["question_id"], r["arm"], r["status"]) for r in runs.load_results(s, "r1")] == [
        ("q1", "x", "ok"), ("q1", "y", "ok")]
    assert runs.load_trace_dict(s, "r1", "q1", "x") == {"arm": "x"}
    assert runs.run_row(s, "r1")[0] == "d"
    runs.finish_run(s, "r1")
    assert runs.list_runs(s)[0]["finished"] is not None
    assert evaluate.write_batch is runs.write_batch and evaluate.ensure_schema is runs.ensure_schema
