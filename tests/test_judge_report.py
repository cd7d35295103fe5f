"""The judge report: accept / undecided rates by system, type and length, false accepts on known-wrong
systems, pairwise agreement and kappa, and the overlay key (imported verdicts kept only where the
gold text is unchanged, unanswerable questions left out, the ceiling of the original key)."""

from __future__ import annotations

import json
from pathlib import Path

from bfr_core.cli import main
from bfr_core.evaluation.answer_import import import_answers
from bfr_core.evaluation.judge_report import judge_report, keys_markdown, length_bucket
from bfr_core.evaluation.judging import judge_run, parse_judge
from bfr_core.evaluation.overlay import golds_under, ingest_overlay, retrieval_under
from bfr_core.ingest.demo import ensure_demo_store


def test_report_under_both_keys(tmp_path: Path, capsys):
    db = tmp_path / "demo.duckdb"
    store = ensure_demo_store(db, embed=False)
    qs = store.questions("demo")
    good, bad = tmp_path / "good.jsonl", tmp_path / "bad.jsonl"
    good.write_text("".join(json.dumps({"question_id": q.question_id, "answer": q.answer, "evidence": list(q.gold),
                                        "verdicts": {"lenient": True}}) + "\n" for q in qs))
    bad.write_text("".join(json.dumps({"question_id": q.question_id, "answer": "zebra crossing",
                                       "verdicts": {"lenient": i < 2}}) + "\n" for i, q in enumerate(qs)))
    run_id = import_answers(store, good, dataset_id="demo", name="good").run_id
    import_answers(store, bad, dataset_id="demo", name="wrong", run_id=run_id)
    overlay = tmp_path / "errors.json"
    overlay.write_text(json.dumps([
        {"question_id": qs[0].question_id, "error_type": "HALLUCINATION", "correct_answer": "zebra crossing"},
        {"question_id": qs[1].question_id, "error_type": "AMBIGUOUS", "correct_answer": "Unanswerable"},
        {"question_id": qs[2].question_id, "error_type": "WRONG_CITATION", "correct_answer": "",
         "correct_evidence": [t.turn_id for t in store.scope_turns("demo", qs[2].scope_id)
                              if t.turn_id not in qs[2].gold][:1]}]))
    ingest_overlay(store, overlay, dataset_id="demo")
    judge_run(store, run_id, parse_judge("rules"), golds_under(store, run_id))
    rep = judge_report(store, [run_id], ["original", "audit"], known_wrong=["wrong"])
    md = keys_markdown(store, run_id)
    store.close()
    orig, audit = rep["keys"]["original"], rep["keys"]["audit"]
    lenient = orig["judges"]["lenient"]
    assert lenient["by_system"]["good"]["accept_pct"] == 100.0
    assert lenient["false_accept_pct"] == round(100 * 2 / 7, 2)
    assert orig["judges"]["rules"]["by_system"]["wrong"]["accept_pct"] == 0.0
    assert orig["judges"]["rules"]["false_accept_pct"] == 0.0
    pair = orig["pairs"][0]
    assert (pair["a"], pair["b"], pair["n"]) == ("lenient", "rules", 14) and pair["kappa"] < 1
    # the audited key: q1 unanswerable (left out of both systems); q0's gold changed: the imported
    # judge has no verdict on it there, and the rules have not judged it under that key yet
    assert audit["answers"] == 12 and audit["left_out_unanswerable"] == 2
    assert audit["judges"]["lenient"]["not_judged"] == 2 and audit["judges"]["rules"]["not_judged"] == 2
    # the ceiling covers the scopes the overlay audited (those of its three findings) and says so
    audited = sorted({q.scope_id for q in qs[:3]})
    inside = sum(q.scope_id in audited for q in qs)
    assert audit["ceiling_under_original_key"]["demo"] == {
        "overlay": "audit", "scopes": audited, "outside_questions": 7 - inside, "questions": inside,
        "answer_key_wrong": 2, "unanswerable": 1, "ceiling_pct": round(100 * (inside - 2) / inside, 2)}
    # retrieval under each key: the good system cited the original gold, so the corrected citation is
    # a miss under the overlay, and the unanswerable question is left out
    scored = sum(1 for q in qs if q.gold)
    assert orig["retrieval"][run_id]["good"]["gold_hit"] == 100.0
    under = audit["retrieval"][run_id]["good"]
    assert under["left_out"] == 1 and under["gold_hit"] == round(100 * (scored - 2) / (scored - 1), 2)
    assert "wrong" not in orig["retrieval"][run_id]  # answers only: no retrieval figure
    # bfr report's section: every arm with evidence under both keys, and the ceiling
    assert "## Under each answer key" in md and "| original Gold Hit | original CER | original n |" in md
    assert "| good | 100.00 |" in md and "| wrong |" not in md
    assert f"{round(100 * (inside - 2) / inside, 2):.2f} % of {inside} questions" in md
    assert main(["judges", run_id, "--db", str(db), "--known-wrong", "wrong"]) == 0
    assert set(json.loads(capsys.readouterr().out)["keys"]) == {"original", "audit"}


def test_no_key_section_without_an_overlay(tmp_path: Path):
    store = ensure_demo_store(tmp_path / "demo.duckdb", embed=False)
    answers = tmp_path / "a.jsonl"
    answers.write_text("".join(json.dumps({"question_id": q.question_id, "answer": q.answer}) + "\n"
                               for q in store.questions("demo")))
    run_id = import_answers(store, answers, dataset_id="demo", name="sys").run_id
    assert keys_markdown(store, run_id) == ""
    store.close()


def test_length_buckets():
    assert [length_bucket(a) for a in ("7 May", "a b c d", " ".join("x" * 40))] == \
        ["1-3 words", "4-10 words", "31+ words"]


def test_retrieval_under_each_key_compares_arms_at_the_common_set_size(tmp_path: Path):
    """Gold Hit / CER under the keys are read at the run's common set size (the smallest arm's
    largest set) unless each arm's own size is asked for, and the report's section says which."""
    store = ensure_demo_store(tmp_path / "demo.duckdb", embed=False)
    qs = [q for q in store.questions("demo") if q.gold]
    other = {q.question_id: next(t.turn_id for t in store.scope_turns("demo", q.scope_id) if t.turn_id not in q.gold)
             for q in qs}
    long_, short = tmp_path / "long.jsonl", tmp_path / "short.jsonl"
    long_.write_text("".join(json.dumps({"question_id": q.question_id, "answer": "x",
                                         "evidence": [other[q.question_id], *q.gold]}) + "\n" for q in qs))
    short.write_text("".join(json.dumps({"question_id": q.question_id, "answer": "x",
                                         "evidence": [other[q.question_id]]}) + "\n" for q in qs))
    run_id = import_answers(store, long_, dataset_id="demo", name="long").run_id
    import_answers(store, short, dataset_id="demo", name="short", run_id=run_id)
    common = retrieval_under(store, run_id)
    assert common["long"]["k"] == common["short"]["k"] == 1
    assert common["long"]["gold_hit"] == 0.0  # its first id is the non-gold turn
    own = retrieval_under(store, run_id, own_budgets=True)
    assert own["long"]["k"] is None and own["long"]["gold_hit"] == 100.0 and own["long"]["cer"] == 100.0
    assert retrieval_under(store, run_id, k=2)["long"]["gold_hit"] == 100.0
    overlay = tmp_path / "errors.json"
    overlay.write_text(json.dumps([{"question_id": qs[0].question_id, "error_type": "HALLUCINATION",
                                    "correct_answer": "zebra crossing"}]))
    ingest_overlay(store, overlay, dataset_id="demo")
    assert "every set cut to its first 1 ids" in keys_markdown(store, run_id)
    assert "NOT AT EQUAL BUDGET" in keys_markdown(store, run_id, own_budgets=True)
    store.close()


def test_seconds_per_verdict_from_stored_timings(tmp_path: Path):
    from bfr_core.verdicts import write_verdicts

    store = ensure_demo_store(tmp_path / "demo.duckdb", embed=False)
    qs = store.questions("demo")[:3]
    answers = tmp_path / "a.jsonl"
    answers.write_text("".join(json.dumps({"question_id": q.question_id, "answer": q.answer,
                                           "verdicts": {"lenient": True}}) + "\n" for q in qs))
    run_id = import_answers(store, answers, dataset_id="demo", name="sys").run_id
    # a model judge's three verdicts, timed 1, 2 and 6 s; one of them under an overlay key too (4 s)
    rows = [(run_id, q.question_id, "sys", "m/strict", "original", "CORRECT", "r", "m", "strict", "h", q.answer,
             ms) for q, ms in zip(qs, (1000.0, 2000.0, 6000.0), strict=True)]
    rows.append((run_id, qs[0].question_id, "sys", "m/strict", "other", "WRONG", "r", "m", "strict", "h", "x", 4000.0))
    write_verdicts(store, rows)
    rep = judge_report(store, [run_id])
    store.close()
    judges = rep["keys"]["original"]["judges"]
    assert (judges["m/strict"]["timed"], judges["m/strict"]["s_per_verdict"]) == (4, 3.25)
    assert judges["m/strict"]["n"] == 3
    assert (judges["lenient"]["timed"], judges["lenient"]["s_per_verdict"]) == (0, None)  # imported: untimed
