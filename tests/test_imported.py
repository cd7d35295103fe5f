"""Other systems' runs as arms: import, export, the TREC round trip, and LongMemEval's log against its
own ``eval_utils.py`` (imported from ../shared/reference/longmemeval, MIT, when present)."""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from bfr_core.cli import main
from bfr_core.errors import BfrError
from bfr_core.evaluation.imported import export_rows, import_run, imported_systems, official_rows
from bfr_core.evaluation.metrics import official_scores
from bfr_core.evaluation.summary import summarize
from bfr_core.ingest import ingest
from bfr_core.ingest.demo import ensure_demo_store
from bfr_core.ingest.sources import PROJECT
from bfr_core.retrieval.views.bm25 import BM25View
from bfr_core.runs import list_runs, load_results
from bfr_core.store import Store

EVAL_UTILS = PROJECT.parent / "shared" / "reference" / "longmemeval" / "eval_utils.py"
METRICS = ("gold_hit", "turn_hit", "er", "cer", "recall_any", "recall_all", "ndcg_any", "set_size", "evidence")


@pytest.fixture(scope="module")
def demo_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """The demo store with one offline run of mem0 and amem."""
    db = tmp_path_factory.mktemp("imp") / "demo.duckdb"
    ensure_demo_store(db).close()
    assert main(["eval", "--db", str(db), "--dataset", "demo", "--arms", "mem0,amem", "--quiet",
                 "--json", str(db.parent / "o.json")]) == 0
    store = Store(db)
    run_id = list_runs(store)[0]["run_id"]
    store.close()
    return db, run_id


def _rows(store: Store, run_id: str, arm: str) -> dict[str, dict[str, Any]]:
    return {r["question_id"]: {m: r[m] for m in METRICS} for r in load_results(store, run_id) if r["arm"] == arm}


def test_trec_round_trip_gives_identical_metrics(demo_run, tmp_path: Path, capsys) -> None:
    db, run_id = demo_run
    trec, qrels = tmp_path / "run.trec", tmp_path / "qrels.txt"
    assert main(["export-run", run_id, "--db", str(db), "--format", "trec", "--arm", "mem0", "--out", str(trec),
                 "--qrels", str(qrels)]) == 0
    lines = trec.read_text().splitlines()
    assert lines and all(len(ln.split()) == 6 and ln.split()[5] == "mem0" for ln in lines)
    assert all(ln.endswith(" 1") for ln in qrels.read_text().splitlines())
    assert main(["import-run", str(trec), "--db", str(db), "--dataset", "demo", "--name", "mem0-again",
                 "--run", run_id, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["run_id"] == run_id and out["summary"]["mean_set_size"] == 10.0
    store = Store(db)
    try:
        assert _rows(store, run_id, "mem0-again") == _rows(store, run_id, "mem0")
        assert "mem0-again" in summarize(store, run_id)["arms"]
        trace = json.loads(store.cursor().execute(
            "SELECT trace FROM traces WHERE run_id = ? AND arm = 'mem0-again' LIMIT 1", [run_id]).fetchone()[0])
        assert trace["steps"][0]["kind"] == "topk" and trace["provider"] == "imported:trec"
    finally:
        store.close()
    # the report tests the imported arm against any other, states set sizes, and can cut to one k
    assert main(["report", run_id, "--db", str(db), "--ref", "amem", "--k", "3"]) == 0
    text = capsys.readouterr().out
    assert "| mem0-again − amem |" in text and "| mem0-again | 3.0 |" in text and "first 3 ids" in text
    # again without --replace: refused; with it: the same rows
    assert main(["import-run", str(trec), "--db", str(db), "--dataset", "demo", "--name", "mem0-again",
                 "--run", run_id]) == 2
    assert "already has an arm 'mem0-again'" in capsys.readouterr().err


def test_jsonl_export_import_new_run_and_k_cut(demo_run, tmp_path: Path, capsys) -> None:
    db, run_id = demo_run
    path = tmp_path / "run.jsonl"
    assert main(["export-run", run_id, "--db", str(db), "--format", "jsonl", "--out", str(path)]) == 0
    assert main(["import-run", str(path), "--db", str(db), "--dataset", "demo", "--name", "x"]) == 2
    assert "systems (amem, mem0" in capsys.readouterr().err
    assert main(["import-run", str(path), "--db", str(db), "--dataset", "demo", "--name", "amem-top3",
                 "--tag", "amem", "--k", "3"]) == 0
    printed = capsys.readouterr().out.splitlines()  # a short summary a person reads, not JSON
    assert len(printed) <= 5 and printed[0].startswith("Imported 'amem-top3' (jsonl) into run ")
    assert "amem-top3: mean set size 3.0 · Gold Hit" in printed[1] and "bfr report" in printed[-1]
    out = {"run_id": printed[0].split("into run ")[1].split(":")[0]}
    assert out["run_id"] != run_id
    store = Store(db)
    try:
        cut = summarize(store, run_id, k=3)["arms"]["amem"]
        mine = summarize(store, out["run_id"])["arms"]["amem-top3"]
        assert {m: mine[m] for m in ("turn_hit", "gold_hit", "er", "cer")} == {m: cut[m] for m in ("turn_hit", "gold_hit", "er", "cer")}
    finally:
        store.close()
    copy = tmp_path / "copy.jsonl"  # the same content under another path: the same run, said so
    copy.write_bytes(path.read_bytes())
    assert main(["import-run", str(copy), "--db", str(db), "--dataset", "demo", "--name", "amem-top3",
                 "--tag", "amem", "--k", "3"]) == 2
    assert "this file's content was imported as 'amem-top3' before" in capsys.readouterr().err


def test_mismatched_ids_are_clear_errors_and_write_nothing(demo_run, tmp_path: Path) -> None:
    db, run_id = demo_run
    store = Store(db)
    try:
        qids = [r["question_id"] for r in load_results(store, run_id) if r["arm"] == "mem0"]
        before = store.cursor().execute("SELECT count(*) FROM results").fetchone()[0]
        bad = tmp_path / "bad.jsonl"
        bad.write_text("\n".join(json.dumps({"question_id": q, "ranking": ["nope-1", "nope-2"]}) for q in qids))
        with pytest.raises(BfrError, match=rf"{2 * len(qids)} id\(s\) name no turn or session.*{qids[0]}: 'nope-1'"
                                            rf".* and {2 * len(qids) - 5} more$"):
            import_run(store, bad, dataset_id="demo", name="bad", run_id=run_id)
        bad.write_text(json.dumps({"question_id": "zz-9", "evidence": []}))
        with pytest.raises(BfrError, match=r"1 question id\(s\) not in dataset 'demo': 'zz-9'"):
            import_run(store, bad, dataset_id="demo", name="bad")
        bad.write_text(json.dumps({"question_id": qids[0], "evidence": []}))
        with pytest.raises(BfrError, match="not in the file"):
            import_run(store, bad, dataset_id="demo", name="bad", run_id=run_id)
        assert store.cursor().execute("SELECT count(*) FROM results").fetchone()[0] == before
        assert "bad" not in next(r for r in list_runs(store) if r["run_id"] == run_id)["arms"]
        rep = import_run(store, bad, dataset_id="demo", name="partial", run_id=run_id, allow_missing=True)
        assert rep.missing == len(qids) - 1
        rows = [r for r in load_results(store, run_id) if r["arm"] == "partial"]
        assert sum(r["status"] == "failed" for r in rows) == len(qids) - 1
        from bfr_core.evaluation.report import report

        assert f"| partial | 0.0 | 0.0 | {len(qids) - 1} |" in report(store, run_id)  # the report says how many
    finally:
        store.close()


def test_imported_systems_lists_only_imported_arms(demo_run, tmp_path: Path) -> None:
    db, run_id = demo_run
    store = Store(db)
    try:
        qids = [r["question_id"] for r in load_results(store, run_id) if r["arm"] == "mem0"]
        first = store.scope_turns("demo", store.question("demo", qids[0]).scope_id)[0].turn_id
        path = tmp_path / "listed.jsonl"
        path.write_text("\n".join(json.dumps({"question_id": q, "evidence": [first]}) for q in qids))
        import_run(store, path, dataset_id="demo", name="listed-sys", run_id=run_id)
        mine = [s for s in imported_systems(store, "demo") if s.arm == "listed-sys"]
        assert [(s.run_id, s.dataset_id, s.source, s.fmt, s.questions) for s in mine] == \
            [(run_id, "demo", str(path), "jsonl", len(qids))]
        assert not {"mem0", "amem"} & {s.arm for s in imported_systems(store)}  # arms run here are not imported
        assert imported_systems(store, "no-such-dataset") == []
    finally:
        store.close()


def test_export_names_unknown_arm(demo_run, capsys) -> None:
    db, run_id = demo_run
    assert main(["export-run", run_id, "--db", str(db), "--arm", "nope"]) == 2
    assert "has no arm nope" in capsys.readouterr().err


# -- LongMemEval's retrieval log ---------------------------------------------------------------------


def _lme_file(path: Path) -> None:
    """Two questions, three sessions each (one shared); answer sessions hold has_answer turns."""
    def sess(sid: str, texts: list[tuple[str, str, bool]]) -> list[dict[str, Any]]:
        return [{"role": r, "content": c, "has_answer": h} if sid.startswith("answer") else {"role": r, "content": c}
                for r, c, h in texts]

    shared = sess("sharegpt_1", [("user", "I love hiking in the alps", False), ("assistant", "nice", False)])
    items = []
    for n, (topic, ans) in enumerate([("camera", "remote shutter"), ("car", "blue sedan")]):
        a1 = sess(f"answer_{n}_1", [("user", f"I ordered a {ans} for my {topic}", True), ("assistant", "ok", False),
                                    ("user", "also the weather is nice", False), ("assistant", "yes", False)])
        a2 = sess(f"answer_{n}_2", [("user", "unrelated chat about food", False),
                                    ("assistant", f"your {ans} arrived", True), ("user", f"the {ans} came", True)])
        items.append({
            "question_id": f"q{n}", "question_type": "multi-session", "question": f"when did my {ans} arrive?",
            "question_date": "2023/03/01 (Wed) 10:00", "answer": "5 days", "answer_session_ids": [f"answer_{n}_1"],
            "haystack_dates": ["2023/02/01 (Wed) 10:00"] * 3,
            "haystack_session_ids": ["sharegpt_1", f"answer_{n}_1", f"answer_{n}_2"],
            "haystack_sessions": [shared, a1, a2]})
    path.write_text(json.dumps(items), encoding="utf-8")


def _corpus_ids(item: dict[str, Any]) -> list[str]:
    """run_retrieval.py's turn-granularity corpus ids (user turns; answer -> noans without the answer)."""
    ids = []
    for sid, sess in zip(item["haystack_session_ids"], item["haystack_sessions"], strict=True):
        for i, t in enumerate(sess):
            if t["role"] == "user":
                tid = f"{sid}_{i + 1}"
                ids.append(tid if "answer" not in sid or t["has_answer"] else tid.replace("answer", "noans"))
    return ids


@pytest.fixture
def lme_official(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Any, Path, Store]]:
    """LongMemEval's own eval_utils module, the two-question file of :func:`_lme_file` and a store holding it."""
    if not EVAL_UTILS.is_file():
        pytest.skip(f"{EVAL_UTILS} not available")
    spec = importlib.util.spec_from_file_location("lme_eval_utils", EVAL_UTILS)
    official = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(official)
    monkeypatch.setattr(np, "asfarray", lambda a: np.asarray(a, dtype=float), raising=False)  # gone in numpy 2
    src = tmp_path / "lme.json"
    _lme_file(src)
    store = Store(tmp_path / "s.duckdb")
    ingest(store, "longmemeval", src, embed=False)
    yield official, src, store
    store.close()


def test_lme_log_matches_official_eval_utils(lme_official, tmp_path: Path) -> None:
    official, src, store = lme_official
    items = json.loads(src.read_text())
    log, rankings = tmp_path / "retrievallog_turn_mem0", {}
    with log.open("w") as fh:
        for item in items:
            corpus = _corpus_ids(item)
            user = [t for t in store.scope_turns("longmemeval", item["question_id"]) if t.speaker == "user"]
            scores = BM25View(user).scores(item["question"])  # mem0's scorer over the official corpus
            rank = [int(i) for i in np.lexsort((np.arange(len(scores)), -scores))]
            rankings[item["question_id"]] = (rank, corpus)
            fh.write(json.dumps({"question_id": item["question_id"], "retrieval_results": {
                "query": item["question"], "ranked_items": [{"corpus_id": corpus[i], "text": "", "timestamp": ""}
                                                            for i in rank]}}) + "\n")
    # metrics.official_scores on the store's own ids renames as run_retrieval.py does: the same figures
    user0 = [t for t in store.scope_turns("longmemeval", "q0") if t.speaker == "user"]
    direct = official_scores([user0[i].turn_id for i in rankings["q0"][0]], store.question("longmemeval", "q0").gold,
                            [t.turn_id for t in user0], (3,))
    rep = import_run(store, log, dataset_id="longmemeval", name="mem0-log")
    assert rep.fmt == "lme" and rep.questions == 2
    rows = {r["question_id"]: r for r in official_rows(store, rep.run_id, "mem0-log", ks=(1, 3, 5))}
    assert direct == {k: v for k, v in rows["q0"].items() if k.endswith("@3")}
    for qid, (rank, corpus) in rankings.items():
        correct = [c for c in corpus if "answer" in c]
        for k in (1, 3, 5):
            t = official.evaluate_retrieval(rank, correct, corpus, k=k)
            s = official.evaluate_retrieval_turn2session(rank, correct, corpus, k=k)
            got = rows[qid]
            assert (got[f"turn_recall_any@{k}"], got[f"turn_recall_all@{k}"]) == t[:2]
            assert got[f"turn_ndcg_any@{k}"] == pytest.approx(t[2], abs=1e-12)
            assert (got[f"session_recall_any@{k}"], got[f"session_recall_all@{k}"]) == s[:2]
            assert got[f"session_ndcg_any@{k}"] == pytest.approx(s[2], abs=1e-12)


def test_lme_session_log_expands_sessions(tmp_path: Path) -> None:
    src = tmp_path / "lme.json"
    _lme_file(src)
    store = Store(tmp_path / "s.duckdb")
    ingest(store, "longmemeval", src, embed=False)
    log = tmp_path / "retrievallog_session_bm25"
    log.write_text("\n".join(json.dumps({"question_id": q, "retrieval_results": {"ranked_items": [
        {"corpus_id": f"answer_{n}_2"}, {"corpus_id": f"noans_{n}_1"}, {"corpus_id": "sharegpt_1"}]}})
        for n, q in enumerate(("q0", "q1"))))
    rep = import_run(store, log, dataset_id="longmemeval", name="sess", k=1)
    assert rep.expanded_sessions == 2 and rep.mean_set_size == 3.0  # the top session's three turns
    arm = summarize(store, rep.run_id)["arms"]["sess"]
    assert arm["turn_hit"] == 100.0 and arm["recall_all"] == 0.0
    ids = dict((q, ids) for _, q, ids, _ in export_rows(store, rep.run_id))
    assert ids["q0"] == ["answer_0_2_1", "answer_0_2_2", "answer_0_2_3"]
    store.close()


def _session_corpus(item: dict[str, Any]) -> list[str]:
    """run_retrieval.py's session-granularity corpus ids: an answer session without a has_answer user
    turn is renamed noans."""
    return [sid if "answer" not in sid or any(t["role"] == "user" and t.get("has_answer") for t in sess)
            else sid.replace("answer", "noans")
            for sid, sess in zip(item["haystack_session_ids"], item["haystack_sessions"], strict=True)]


def test_lme_session_log_is_scored_as_sessions_as_eval_utils_does(lme_official, tmp_path: Path) -> None:
    """A session-granularity log's official figures are evaluate_retrieval over sessions, not its expanded turns
    (an answer session's answerless user turns, as a noans pseudo-session, used up the top-5 budget)."""
    official, src, store = lme_official
    items = {i["question_id"]: i for i in json.loads(src.read_text())}
    orders = {"q0": [2, 0, 1], "q1": [0, 2, 1]}  # indexes into each haystack's sessions, best first
    log = tmp_path / "retrievallog_session_x"
    log.write_text("\n".join(json.dumps({"question_id": q, "retrieval_results": {"ranked_items": [
        {"corpus_id": _session_corpus(items[q])[i]} for i in order]}}) for q, order in orders.items()) + "\n")
    rep = import_run(store, log, dataset_id="longmemeval", name="sess-log")
    rows = {r["question_id"]: r for r in official_rows(store, rep.run_id, "sess-log", ks=(1, 2, 3))}
    for qid, order in orders.items():
        corpus = _session_corpus(items[qid])
        correct = [c for c in corpus if "answer" in c]
        for k in (1, 2, 3):
            want = official.evaluate_retrieval(order, correct, corpus, k=k)
            got = rows[qid]
            assert (got[f"session_recall_any@{k}"], got[f"session_recall_all@{k}"]) == want[:2], (qid, k)
            assert got[f"session_ndcg_any@{k}"] == pytest.approx(want[2], abs=1e-12)
            assert got[f"turn_recall_any@{k}"] is None  # a session ranking ranks no turn


def test_names_that_would_stand_in_for_an_arm_or_break_a_table_are_refused(demo_run, tmp_path: Path,
                                                                           monkeypatch) -> None:
    db, run_id = demo_run
    path = tmp_path / "run.jsonl"
    assert main(["export-run", run_id, "--db", str(db), "--format", "jsonl", "--arm", "mem0", "--out", str(path)]) == 0
    store = Store(db)
    try:
        for bad, says in (("", "non-empty"), ("my sys", "without spaces"), ("x|y", "'|'"), ("bfr", "an arm of this")):
            with pytest.raises(BfrError, match=says):
                import_run(store, path, dataset_id="demo", name=bad)
        # an arm the run ran (here: mem0, were it no arm of this workbench) is never replaced by a file
        monkeypatch.setattr("bfr_core.pipeline.arm_names", lambda: [])
        with pytest.raises(BfrError, match="was run here, not imported"):
            import_run(store, path, dataset_id="demo", name="mem0", run_id=run_id, replace=True)
        assert {r["arm"] for r in load_results(store, run_id)} >= {"mem0", "amem"}
    finally:
        store.close()


def test_an_id_that_differs_by_spaces_or_unicode_form_gets_a_hint(tmp_path: Path) -> None:
    src = tmp_path / "d.jsonl"
    src.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in (
        {"type": "session", "session_id": "s", "turns": [{"turn_id": "café_1", "speaker": "a", "text": "hi"}]},
        {"type": "question", "question_id": "q", "question": "hi?", "answer": "x", "scope": "default",
         "gold": ["café_1"]})) + "\n", encoding="utf-8")
    store = Store(tmp_path / "s.duckdb")
    ingest(store, "jsonl", src, name="d", embed=False)
    run = tmp_path / "run.jsonl"
    run.write_text(json.dumps({"question_id": "q", "ranking": ["cafe\u0301_1"]}) + "\n", encoding="utf-8")
    with pytest.raises(BfrError, match="spaces or Unicode form differ") as err:
        import_run(store, run, dataset_id="d", name="theirs")
    assert "q: 'cafe\u0301_1' (the scope has 'caf\u00e9_1'" in str(err.value)
    run.write_text(json.dumps({"question_id": "q", "ranking": ["café_1"]}) + "\n", encoding="utf-8")
    rep = import_run(store, run, dataset_id="d", name="theirs")
    assert [s.source for s in imported_systems(store, "d")] == [str(run.resolve())]  # the path, from anywhere
    assert rep.questions == 1
    store.close()
