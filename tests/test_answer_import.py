"""Another system's answers as an arm: the three file shapes, the imported verdicts, and every refusal
(unknown id, duplicate, non-string answer, wrong question text) leaving the store as it was."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bfr_core.cli import main
from bfr_core.errors import BfrError
from bfr_core.evaluation.answer_files import majority, question_resolver, read_answers
from bfr_core.evaluation.answer_import import import_answers
from bfr_core.ingest.demo import ensure_demo_store
from bfr_core.runs import list_runs, load_results
from bfr_core.store import Store
from bfr_core.verdicts import load_verdicts


@pytest.fixture()
def db(tmp_path: Path) -> Path:
    path = tmp_path / "demo.duckdb"
    ensure_demo_store(path, embed=False).close()
    return path


def _questions(db: Path):
    store = Store(db)
    try:
        return store.questions("demo")
    finally:
        store.close()


def _eval_file(tmp_path: Path, qs, answers=None, judge="gpt-4o-mini") -> Path:
    recs = [{"question_id": q.question_id, "question": q.text, "golden_answer": q.answer,
             "generated_answer": (answers or {}).get(q.question_id, q.answer),
             "llm_judgments": {"judgment_1": True, "judgment_2": i % 2 == 0, "judgment_3": False}, "category": "1"}
            for i, q in enumerate(qs)]
    path = tmp_path / "eval_results.json"
    path.write_text(json.dumps({"detailed_results": {"g": recs}, "metadata": {"judge_model": judge}}))
    return path


def test_eval_results_become_an_arm_with_the_imported_judge(db: Path, tmp_path: Path):
    qs = _questions(db)
    path = _eval_file(tmp_path, qs)
    store = Store(db)
    try:
        rep = import_answers(store, path, dataset_id="demo", name="theirs")
        rows = load_results(store, rep.run_id)
        verdicts = load_verdicts(store, rep.run_id)
    finally:
        store.close()
    assert rep.fmt == "eval" and rep.answers == len(qs) and rep.judges == {"gpt-4o-mini (imported)": len(qs)}
    assert [r["answer"] for r in rows] == [q.answer for q in sorted(qs, key=lambda q: q.question_id)]
    assert all(r["gold_hit"] is None and r["set_size"] == 0 for r in rows)  # no evidence: not scored as zero
    # judgment_1 True, judgment_2 alternating, judgment_3 False: the majority follows judgment_2
    by_q = {v["question_id"]: v["label"] for v in verdicts}
    assert by_q == {q.question_id: "CORRECT" if i % 2 == 0 else "WRONG" for i, q in enumerate(qs)}


def test_lme_and_our_jsonl_with_evidence(db: Path, tmp_path: Path):
    qs = _questions(db)
    lme = tmp_path / "hyp.jsonl"
    lme.write_text("".join(json.dumps({"question_id": q.question_id, "hypothesis": "x",
                                       "autoeval_label": {"model": "gpt-4o", "label": False}}) + "\n" for q in qs))
    ours = tmp_path / "ours.jsonl"
    ours.write_text("".join(json.dumps({"question_id": q.question_id, "answer": q.answer, "evidence": list(q.gold),
                                        "verdicts": {"me": "CORRECT"}}) + "\n" for q in qs))
    assert read_answers(lme)[0] == "lme" and read_answers(ours)[0] == "jsonl"
    store = Store(db)
    try:
        a = import_answers(store, lme, dataset_id="demo", name="lme-sys")
        b = import_answers(store, ours, dataset_id="demo", name="ours-sys", run_id=a.run_id)
        rows = [r for r in load_results(store, a.run_id) if r["arm"] == "ours-sys"]
        judges = {v["judge"] for v in load_verdicts(store, a.run_id)}
    finally:
        store.close()
    assert b.with_evidence == len(qs) and all(r["gold_hit"] == 1.0 for r in rows if r["gold_n"])
    assert judges == {"gpt-4o (imported)", "me"}


@pytest.mark.parametrize(("mutate", "message"), [
    (lambda recs: recs.append({**recs[0]}), "line 8: question .q1. again"),
    (lambda recs: recs[1].update(question_id="nope"), "not in dataset"),
    (lambda recs: recs[2].update(answer=3), "line 3: 'answer' must be a string"),
    (lambda recs: recs[0].update(question="Something else entirely?"), "text is not the dataset's"),
    (lambda recs: recs[0].update(evidence=["no-such-turn"]), "naming no turn"),
])
def test_a_bad_line_is_refused_and_nothing_is_written(db: Path, tmp_path: Path, mutate, message):
    qs = _questions(db)
    recs = [{"question_id": q.question_id, "answer": q.answer} for q in qs]
    mutate(recs)
    path = tmp_path / "bad.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in recs))
    store = Store(db)
    try:
        with pytest.raises(BfrError, match=message):
            import_answers(store, path, dataset_id="demo", name="bad")
        assert list_runs(store) == []
    finally:
        store.close()


def test_the_cli_prints_the_run(db: Path, tmp_path: Path, capsys):
    path = _eval_file(tmp_path, _questions(db))
    assert main(["import-answers", str(path), "--db", str(db), "--dataset", "demo", "--name", "x"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["answers"] == 7
    assert main(["import-answers", str(path), "--db", str(db), "--dataset", "demo", "--name", "x"]) == 2
    assert "imported as 'x' before" in capsys.readouterr().err


def test_majority_and_the_harness_ids():
    assert majority(["CORRECT", "CORRECT", "WRONG"])[0] == "CORRECT"
    assert majority(["CORRECT", "WRONG"])[0] == "WRONG"  # a tie is not an acceptance
    from bfr_core.records import Question
    qs = [Question("d", f"{s}:q{i:03d}", s, "?", "a", "t") for s in ("c1", "c2") for i in (1, 2)]
    resolve = question_resolver("d", qs, ["c1", "c2"])
    assert resolve("locomo_1_qa0") == "c2:q001" and resolve("locomo_1_qa5") is None and resolve("c1:q002") == "c1:q002"
