"""bfr eval end to end on the demo dataset: the JSON contract, resumption, failures, the CLI."""

import json

import pytest

from bfr_core import runs
from bfr_core.cli import main
from bfr_core.evaluation import evaluate as ev
from bfr_core.evaluation.summary import summarize
from bfr_core.ingest.demo import ensure_demo_store
from bfr_core.llm.base import LLMCallFailed


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    path = tmp_path_factory.mktemp("eval") / "demo.duckdb"
    ensure_demo_store(path).close()
    return path


def test_contract_keys_and_ranges(db, tmp_path):
    out = tmp_path / "out.json"
    rc = main(["eval", "--db", str(db), "--dataset", "demo", "--arms", "mem0,bfr-mv", "--json", str(out), "--quiet"])
    assert rc == 0
    d = json.loads(out.read_text())
    assert d["benchmark"] == "demo" and d["n_questions"] >= 5
    for arm in ("mem0", "bfr-mv"):
        a = d["arms"][arm]
        for key in ("gold_hit", "turn_hit", "er", "cer", "recall_all", "mean_set_size", "mean_calls", "by_type"):
            assert key in a, key
        assert 0 <= a["gold_hit"] <= 100 and 0 <= a["cer"] <= a["er"] <= 100
    assert d["arms"]["mem0"]["mean_set_size"] == 10
    # the budgeted arm holds more evidence than top-10 and never less gold
    assert d["arms"]["bfr-mv"]["mean_set_size"] > 10
    assert d["arms"]["bfr-mv"]["er"] >= d["arms"]["mem0"]["er"]


def test_rerun_resumes_without_duplicates_and_identical_summary(db):
    from bfr_core.store import Store

    store = Store(db)
    spec = ev.RunSpec("demo", ("mem0", "amem"), k=10)
    run_id = ev.evaluate(store, spec)
    first = summarize(store, run_id)
    n_rows = store.cursor().execute("SELECT count(*) FROM results WHERE run_id = ?", [run_id]).fetchone()[0]
    # drop half the rows as if the process had been killed mid-run, then rerun
    store.cursor().execute("DELETE FROM results WHERE run_id = ? AND arm = 'amem'", [run_id])
    assert ev.evaluate(store, spec) == run_id
    again = summarize(store, run_id)
    assert again == first
    count = store.cursor().execute("SELECT count(*) FROM results WHERE run_id = ?", [run_id]).fetchone()[0]
    assert count == n_rows == len(ev.select_questions(store, "demo")) * 2
    trace = ev.load_trace(store, run_id, ev.select_questions(store, "demo")[0].question_id, "mem0")
    assert trace is not None and trace.arm == "mem0" and len(trace.evidence) == 10
    store.close()


def test_a_bfr_run_at_other_weights_is_a_new_run_not_a_resume(db, monkeypatch):
    from dataclasses import replace

    from bfr_core.method import turn_scores
    from bfr_core.store import Store

    store = Store(db)
    spec = ev.bind_data(store, ev.RunSpec("demo", ("bfr", "mem0")))
    without_bfr = ev.bind_data(store, ev.RunSpec("demo", ("mem0",))).run_id
    first = ev.evaluate(store, spec)
    assert spec.run_id == first  # same weights: the same run, resumed
    monkeypatch.setattr(turn_scores, "DEFAULT", replace(turn_scores.DEFAULT, speaker=turn_scores.DEFAULT.speaker + 1.0))
    assert spec.run_id != first and ev.bind_data(store, ev.RunSpec("demo", ("mem0",))).run_id == without_bfr
    second = ev.evaluate(store, spec)
    assert second != first
    n = len(ev.select_questions(store, "demo"))
    for run_id in (first, second):  # each run holds its own rows, none mixed in from the other
        assert store.cursor().execute("SELECT count(*) FROM results WHERE run_id = ?", [run_id]).fetchone()[0] == 2 * n
    store.close()


def test_a_failing_arm_is_recorded_and_the_run_goes_on(db, monkeypatch):
    import bfr_core.pipeline as pl
    from bfr_core.store import Store

    mem0 = pl.resolve("mem0")

    def broken(ctx, query):
        if query.question_id.endswith("1"):
            raise RuntimeError("boom")
        if query.question_id.endswith("2"):
            raise LLMCallFailed("answer: unusable reply after one re-ask")
        return mem0(ctx, query)

    monkeypatch.setattr(pl, "resolve", lambda name: broken)
    store = Store(db)
    run_id = ev.evaluate(store, ev.RunSpec("demo", ("mem0",), k=7))
    rows = runs.load_results(store, run_id)
    failed = [r for r in rows if r["status"] == "failed"]
    assert [r["question_id"] for r in failed] == ["q1", "q2"] and "boom" in failed[0]["error"]
    assert failed[1]["error"] == "llm: answer: unusable reply after one re-ask"
    assert len(rows) == len(ev.select_questions(store, "demo"))
    # a failed question stays in the denominator as an empty set
    assert failed[0]["set_size"] == 0 and failed[0]["gold_hit"] == 0.0
    # a rerun (the fault gone) replaces the failed row and keeps one row per question
    monkeypatch.setattr(pl, "resolve", lambda name: mem0)
    ev.evaluate(store, ev.RunSpec("demo", ("mem0",), k=7))
    rows = runs.load_results(store, run_id)
    assert all(r["status"] == "ok" for r in rows) and len(rows) == len(ev.select_questions(store, "demo"))
    store.close()


def test_sampled_answer_run_accounts_calls_and_a_rerun_makes_none(db, tmp_path):
    """--sample draws a seeded, type-stratified subset; --answer/--judge/--suff fill the answer
    columns and per-row LLM wall time; the rerun adds no call (totals unchanged)."""
    out = tmp_path / "a.json"
    args = ["eval", "--db", str(db), "--dataset", "demo", "--arms", "mem0,bfr-mv", "--sample", "3", "--seed", "5",
            "--answer", "--judge", "--suff", "--json", str(out), "--quiet", "--force"]  # the rerun replaces out
    assert main(args) == 0
    first = json.loads(out.read_text())
    assert first["n_questions"] == 3 and first["provider"] == "offline rules"
    calls = first["llm_calls"]
    assert calls["provider_calls"] > 0 and calls["failed"] == 0
    for arm in ("mem0", "bfr-mv"):
        a = first["arms"][arm]
        assert a["n"] == 3 and {"f1", "judge", "suff", "llm_s_p50"} <= set(a)
    assert main(args) == 0
    again = json.loads(out.read_text())
    assert again["llm_calls"] == calls and again["arms"] == first["arms"]
    other = tmp_path / "b.json"
    assert main([{"5": "6", str(out): str(other)}.get(a, a) for a in args]) == 0
    assert json.loads(other.read_text())["run_id"] != first["run_id"]  # another seed, another run


def test_a_run_redone_from_the_call_cache_alone_makes_no_provider_call(tmp_path):
    """Not only a resumed run: the whole run redone in a store that kept nothing but the call cache
    hits the cache for every call and reproduces every row (the same question vectors, pools,
    prompts and replies)."""
    import shutil

    import duckdb

    src = tmp_path / "first.duckdb"
    ensure_demo_store(src).close()
    args = ["eval", "--db", str(src), "--dataset", "demo", "--arms", "mem0,fca-ms,bfr-mv", "--answer", "--judge",
            "--suff", "--quiet", "--json", str(tmp_path / "first.json")]
    assert main(args) == 0
    first = json.loads((tmp_path / "first.json").read_text())
    assert first["llm_calls"]["provider_calls"] > 0
    query = "SELECT question_id, arm, evidence, answer, f1, judge, suff FROM results ORDER BY ALL"
    with duckdb.connect(str(src)) as con:
        rows = con.execute(query).fetchall()
        con.execute("CHECKPOINT")
    copy = tmp_path / "replay.duckdb"
    shutil.copyfile(src, copy)
    with duckdb.connect(str(copy)) as con:
        for table in ("results", "traces", "runs", "llm_calls", "embeddings"):
            con.execute(f"DELETE FROM {table}")  # vectors too: recomputed, they must come out the same
    replay = [{str(src): str(copy), str(tmp_path / "first.json"): str(tmp_path / "replay.json")}.get(a, a) for a in args]
    assert main(replay) == 0
    again = json.loads((tmp_path / "replay.json").read_text())
    assert again["llm_calls"]["provider_calls"] == 0 and again["llm_calls"]["cached"] == first["llm_calls"]["calls"]
    with duckdb.connect(str(copy)) as con:
        assert con.execute(query).fetchall() == rows

    def scores(node):  # everything but the LLM wall time (cache hits take none)
        return {k: scores(v) for k, v in node.items() if k != "llm_s_p50"} if isinstance(node, dict) else node
    assert scores(again["arms"]) == scores(first["arms"])


def _changed_demo(tmp_path):
    """The demo file with its gold-bearing texts rewritten: other data under the same dataset name."""
    from bfr_core.ingest.demo import demo_file

    lines = []
    for line in demo_file().read_text(encoding="utf-8").splitlines():
        rec = json.loads(line)
        if rec.get("type") == "session":
            for t in rec["turns"][::3]:
                t["text"] = "An unrelated remark about the weather and nothing else."
        lines.append(json.dumps(rec))
    path = tmp_path / "demo_changed.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_rerun_after_replace_gives_a_fresh_stores_figures_not_the_old_rows(tmp_path, capsys):
    """Issue 30: eval, ``ingest --replace`` of changed data under the same name, the same eval again ->
    a new run with the figures a fresh store gives, and a note naming the old run, which is kept."""
    from bfr_core.ingest.demo import demo_file
    from bfr_core.store import Store

    changed = _changed_demo(tmp_path)
    db, fresh = tmp_path / "a.duckdb", tmp_path / "fresh.duckdb"
    cmd = ["--dataset", "demo", "--arms", "mem0,amem", "--quiet"]
    assert main(["ingest", "jsonl", str(demo_file()), "--db", str(db), "--name", "demo"]) == 0
    assert main(["eval", "--db", str(db), *cmd, "--json", str(tmp_path / "old.json")]) == 0
    assert main(["ingest", "jsonl", str(changed), "--db", str(db), "--name", "demo", "--replace"]) == 0
    capsys.readouterr()
    assert main(["eval", "--db", str(db), *cmd, "--json", str(tmp_path / "new.json")]) == 0
    err = capsys.readouterr().err
    assert main(["ingest", "jsonl", str(changed), "--db", str(fresh), "--name", "demo"]) == 0
    assert main(["eval", "--db", str(fresh), *cmd, "--json", str(tmp_path / "fresh.json")]) == 0
    old, new, ref = (json.loads((tmp_path / f"{n}.json").read_text()) for n in ("old", "new", "fresh"))
    assert new["arms"] == ref["arms"]
    assert new["arms"] != old["arms"]  # the change moved the figures, so a resume would have shown
    store = Store(db, read_only=True)
    listed = runs.list_runs(store)
    assert len(listed) == 2 and sorted(r["current"] for r in listed) == [False, True]
    stale = [r["run_id"] for r in listed if not r["current"]]
    assert f"note: run {stale[0]}" in err and "replaced" in err
    assert list(runs.stale_runs(store, "demo")) == stale
    store.close()


def test_a_spec_bound_to_replaced_data_is_refused(tmp_path):
    from dataclasses import replace

    from bfr_core.errors import BfrError

    store = ensure_demo_store(tmp_path / "d.duckdb")
    spec = ev.bind_data(store, ev.RunSpec("demo", ("mem0",)))
    assert spec.data_sha == store.dataset("demo")["source_sha256"]
    assert ev.bind_data(store, spec) == spec
    with pytest.raises(BfrError, match="changed since"):
        ev.evaluate(store, replace(spec, data_sha="0" * 64))
    assert ev.RunSpec("demo", ("mem0",)).run_id != spec.run_id
    store.close()


def test_no_scoreable_question_says_why_not_to_ingest(tmp_path):
    """A dataset whose questions have no gold turns is in the store: the error must not say "ingest it first"."""
    from bfr_core.errors import BfrError
    from bfr_core.ingest import ingest
    from bfr_core.store import Store

    src = tmp_path / "d.jsonl"
    src.write_text(json.dumps({"type": "session", "session_id": "s", "turns": [{"speaker": "a", "text": "hi"}]}) + "\n"
                   + json.dumps({"type": "question", "question_id": "q", "question": "hi?", "answer": "x", "scope": "default",
                                 "gold": []}) + "\n", encoding="utf-8")  # one scope: "default"
    store = Store(tmp_path / "s.duckdb")
    ingest(store, "jsonl", src, name="d", embed=False)
    with pytest.raises(BfrError, match="has no scoreable question") as err:
        ev.select_questions(store, "d")
    assert "ingest it first" not in str(err.value)
    with pytest.raises(BfrError, match="no dataset 'other'.*ingest it first"):
        ev.select_questions(store, "other")
