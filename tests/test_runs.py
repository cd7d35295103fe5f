"""The runs / results / traces tables in one module: a batch replaces failed rows, never finished
ones; reads come back as written."""

from __future__ import annotations

from bfr_core import runs
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


def test_legacy_runs_without_a_hash_are_current_until_their_dataset_is_reingested(tmp_path):
    """A run recorded before ``data_sha`` existed is current if made after the dataset's ingest, stale
    once the dataset is ingested again; a run whose dataset is gone is stale."""
    from bfr_core.ingest.demo import ensure_demo_store
    from bfr_core.runs import ensure_schema, list_runs, register_run, stale_runs

    store = ensure_demo_store(tmp_path / "s.duckdb")
    ensure_schema(store)
    register_run(store, "legacy", "demo", ["mem0"], "", 10, "offline rules", 7, {})
    register_run(store, "orphan", "gone", ["mem0"], "", 10, "offline rules", 7, {})
    sha = store.dataset("demo")["source_sha256"]
    register_run(store, "hashed", "demo", ["mem0"], "", 10, "offline rules", 7, {}, data_sha=sha)
    assert {r["run_id"]: r["current"] for r in list_runs(store)} == {"legacy": True, "orphan": False, "hashed": True}
    store.cursor().execute("UPDATE datasets SET ingested_at = current_timestamp + INTERVAL 1 HOUR")
    assert stale_runs(store, "demo") == {"legacy": ""}
    store.cursor().execute("UPDATE datasets SET source_sha256 = 'other'")
    assert set(stale_runs(store, "demo")) == {"legacy", "hashed"}
    store.close()
