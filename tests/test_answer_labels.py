"""The answer-correctness task (bfr_core.evaluation.answer_labels with the shared label machinery of
bfr_core.evaluation.labels): queue from finished runs' answers (deduplicated by answer text), blinding,
a seeded order that does not depend on the system, saving through the one journal, export with the
judges' verdicts beside the label, ``bfr label-export``, and the judges report's human agreement."""

import csv
import hashlib
import json

import pytest
from test_labels import dataset_store

from bfr_core.cli import main
from bfr_core.evaluation import answer_labels as AL
from bfr_core.evaluation import labels
from bfr_core.store import Store
from bfr_core.verdicts import write_verdicts

A = labels.ANSWER


def _store(path=":memory:", arms=("mem0", "bfr-mv", "fca-ms"), run="r1") -> Store:
    s = dataset_store(path)  # questions q1 ("11 days", cites a_1 and b_1) and q2 ("a strap")
    cur = s.cursor()
    a, b, c = arms
    cur.execute("INSERT INTO runs (run_id, dataset_id, arms, n_questions, finished) VALUES "
                f"('{run}', 'd', ?, 2, current_timestamp), ('{run}-open', 'd', [?], 2, NULL)", [list(arms), a])
    rows = [(run, "q1", a, "12 days"), (run, "q1", b, "11 days"), (run, "q1", c, " 11 days "),  # same answer
            (run, "q2", a, "a strap"), (run, "q2", b, ""),  # an empty answer is not labelled
            (run, "q2", c, None),  # no answer
            (f"{run}-open", "q2", a, "a belt")]  # unfinished run: not in the queue
    for r, q, arm, ans in rows:
        cur.execute("INSERT INTO results (run_id, question_id, arm, budget, evidence, status, answer, judge) "
                    "VALUES (?, ?, ?, 'C6', ['a_2'], 'ok', ?, ?)", [r, q, arm, ans, "CORRECT" if ans else None])
    return s


def _item(s: Store, answer: str) -> str:
    return s.cursor().execute("SELECT item_id FROM answer_items WHERE answer = ?", [answer]).fetchone()[0]


def test_queue_dedups_answers_and_skips_unfinished_and_empty():
    s = _store()
    assert AL.sync_queue(s) == 3 and AL.sync_queue(s) == 3  # idempotent
    assert sorted(r[0] for r in s.cursor().execute("SELECT answer FROM answer_items").fetchall()) == [
        "11 days", "12 days", "a strap"]
    assert s.cursor().execute("SELECT count(*) FROM answer_sources").fetchone()[0] == 4  # bfr-mv, fca-ms share one
    assert all(AL.is_answer_item(i) for i in labels.items(s, A))
    assert labels.sync_queue(s) > 0 and not any(AL.is_answer_item(i) for i in labels.items(s))  # tasks apart


def test_blinded_answer_item_shows_key_and_cited_turns_never_the_system_or_a_verdict():
    s = _store()
    AL.sync_queue(s)
    item = AL.blinded_item(s, _item(s, "12 days"))
    text = item.as_text()
    assert "How many days until the strap arrived?" in text and "Gold answer: 11 days" in text
    assert "Answer to judge: 12 days" in text
    assert [e.text for e in item.evidence] == ["I ordered a strap on March 3rd.", "It showed up on March 14th!"]
    for banned in ("mem0", "bfr-mv", "fca-ms", "C6", "r1", "a_1", "b_1", "Nice.", "CORRECT", "WRONG", item.item_id):
        assert banned not in text, banned
    with pytest.raises(labels.LabelError, match="no answer label item"):
        AL.blinded_item(s, "ans-nope")


def test_queue_order_is_seeded_and_independent_of_the_system():
    one, two = _store(), _store(arms=("zep", "a-mem", "langmem"), run="other")
    AL.sync_queue(one)
    AL.sync_queue(two)
    order = [AL.blinded_item(one, i).answer for i in labels.items(one, A)]
    assert order == [AL.blinded_item(two, i).answer for i in labels.items(two, A)]
    assert list(labels.item_questions(one, A)) == labels.items(one, A) == labels.queue(one, "ann", A)
    seeded = sorted(labels.items(one, A), key=lambda i: hashlib.md5((labels.ANSWER_ORDER_SEED + i).encode()).hexdigest())
    assert labels.items(one, A) == seeded


def test_answer_labels_save_relabel_and_refuse_the_other_tasks_labels():
    s = _store()
    AL.sync_queue(s)
    labels.sync_queue(s)
    item = _item(s, "12 days")
    labels.save_label(s, item, "ann", "wrong", "off by one", task=A)
    labels.save_label(s, item, "ann", "undecided", task=A)
    assert labels.current_label(s, item, "ann", A)["label"] == "undecided"
    assert [h["label"] for h in labels.history(s, item, "ann", A)] == ["wrong", "undecided"]
    assert labels.progress(s, "ann", A) == (1, 3) and labels.progress(s, "ann") == (0, labels.sync_queue(s))
    assert item not in labels.queue(s, "ann", A) and labels.annotators(s) == []
    with pytest.raises(labels.LabelError, match="choose one of correct, wrong, undecided"):
        labels.save_label(s, item, "ann", "sufficient", task=A)
    with pytest.raises(labels.LabelError, match="choose one of sufficient"):
        labels.save_label(s, labels.items(s)[0], "ann", "correct")
    with pytest.raises(labels.LabelError, match="no answer label item"):
        labels.save_label(s, labels.items(s)[0], "ann", "correct", task=A)  # a sufficiency item
    with pytest.raises(labels.LabelError, match="unknown annotation task"):
        labels.task_named("relevance")


def test_answer_labels_queued_while_held_go_through_the_one_journal(tmp_path):
    db = tmp_path / "s.duckdb"
    s = _store(db)
    AL.sync_queue(s)
    labels.sync_queue(s)
    ans, suff = _item(s, "12 days"), labels.items(s)[0]
    labels.queue_label(str(db), ans, "ann", "correct", "queued", task=A)
    labels.queue_label(str(db), suff, "ann", "sufficient")
    with labels.pending_path(db).open("a", encoding="utf-8") as fh:  # a task no flush knows: set aside, not lost
        fh.write(json.dumps({"item_id": ans, "annotator": "ann", "label": "correct", "created": "2024-01-01T00:00:00",
                             "task": "relevance"}) + "\n")
        fh.write(json.dumps({"item_id": ans, "annotator": "ann", "label": "sufficient",  # not an answer label
                             "created": "2024-01-01T00:00:00", "task": "answer"}) + "\n")
    assert labels.waiting_items(s, "ann", A) == {ans} and labels.waiting_items(s, "ann") == {suff}
    assert labels.queue(s, "ann", A) == [i for i in labels.items(s, A) if i != ans]
    assert labels.flush_pending(s) == 2
    assert labels.current_label(s, ans, "ann", A)["note"] == "queued"
    assert labels.current_label(s, suff, "ann")["label"] == "sufficient"
    assert labels.current_label(s, suff, "ann", A) is None and labels.current_label(s, ans, "ann") is None
    assert len(labels.set_aside(db)) == 2 and not labels.has_pending(db)
    s.close()


def test_export_has_task_answer_and_the_judges_verdicts_beside_the_label(tmp_path):
    db = tmp_path / "s.duckdb"
    s = _store(db)
    AL.sync_queue(s)
    labels.sync_queue(s)
    write_verdicts(s, [("r1", "q1", "mem0", "gpt-4o-mini (imported)", "original", "WRONG", "", "", "", "", "11 days", 0),
                       ("r1", "q1", "mem0", "rules", "audit", "CORRECT", "", "", "", "", "12 days", 0)])
    item = _item(s, "12 days")
    labels.save_label(s, labels.items(s)[0], "ann", "sufficient")
    labels.save_label(s, item, "ann", "wrong", task=A)
    assert AL.judge_verdicts(s, item) == {"eval judge": "CORRECT", "gpt-4o-mini (imported)": "WRONG"}
    both = labels.export_rows(s, judges=lambda i: AL.judge_verdicts(s, i) if AL.is_answer_item(i) else {})
    assert [r["task"] for r in both] == ["sufficiency", "answer"]
    row = both[1]
    assert (row["label"], row["answer"], row["evidence"], row["sources"]) == ("wrong", "12 days", [], ["r1/mem0"])
    assert row["judges"] == {"eval judge": "CORRECT", "gpt-4o-mini (imported)": "WRONG"}
    mine = labels.export_rows(s, "ann", tasks=[A])
    assert [r["task"] for r in mine] == ["answer"] and mine[0]["sources"] == []
    s.close()
    out = tmp_path / "labels.csv"
    assert main(["label-export", "--db", str(db), "--out", str(out)]) == 0
    got = list(csv.DictReader(out.open()))
    assert [r["task"] for r in got] == ["sufficiency", "answer"]
    assert got[1]["judges"] == "eval judge=CORRECT; gpt-4o-mini (imported)=WRONG" and got[1]["answer"] == "12 days"
    out2 = tmp_path / "answers.jsonl"
    assert main(["label-export", "--db", str(db), "--out", str(out2), "--task", "answer"]) == 0
    assert [json.loads(x)["task"] for x in out2.read_text().splitlines()] == ["answer"]


def test_human_verdicts_are_the_annotators_majority():
    assert AL.majority({"a": "CORRECT", "b": "CORRECT", "c": "WRONG"}) == "CORRECT"
    assert AL.majority({"a": "CORRECT", "b": "WRONG"}) == "UNDECIDED"
    assert AL.majority({"a": "UNDECIDED"}) == "UNDECIDED" and AL.majority({}) == "UNDECIDED"
    s = _store()
    AL.sync_queue(s)
    item = _item(s, "11 days")
    labels.save_label(s, item, "ann", "correct", task=A)
    labels.save_label(s, item, "bob", "correct", task=A)
    labels.save_label(s, _item(s, "a strap"), "ann", "wrong", task=A)
    labels.save_label(s, _item(s, "12 days"), "ann", "correct", task=A)
    labels.save_label(s, _item(s, "12 days"), "bob", "wrong", task=A)  # a tie: no majority
    assert AL.human_verdicts(s, ["r1"]) == {("r1", "q1", "bfr-mv"): "CORRECT", ("r1", "q1", "fca-ms"): "CORRECT",
                                           ("r1", "q1", "mem0"): "UNDECIDED", ("r1", "q2", "mem0"): "WRONG"}
    assert AL.annotator_verdicts(s, ["r1"])["bob"] == {("r1", "q1", "bfr-mv"): "CORRECT", ("r1", "q1", "fca-ms"): "CORRECT",
                                                       ("r1", "q1", "mem0"): "WRONG"}
    assert AL.human_verdicts(s, ["r9"]) == {}


def test_judges_report_gives_agreement_with_human_labels(tmp_path):
    from bfr_core.evaluation.answer_import import import_answers
    from bfr_core.evaluation.judge_report import HUMAN, judge_report
    from bfr_core.evaluation.judging import judge_run, parse_judge
    from bfr_core.evaluation.overlay import golds_under, ingest_overlay
    from bfr_core.ingest.demo import ensure_demo_store

    store = ensure_demo_store(tmp_path / "demo.duckdb", embed=False)
    qs = store.questions("demo")
    f = tmp_path / "sys.jsonl"
    f.write_text("".join(json.dumps({"question_id": q.question_id, "answer": q.answer if i % 2 else "zebra crossing",
                                     "verdicts": {"lenient": True}}) + "\n" for i, q in enumerate(qs)))
    run_id = import_answers(store, f, dataset_id="demo", name="sys").run_id
    judge_run(store, run_id, parse_judge("rules"), golds_under(store, run_id))
    rep = judge_report(store, [run_id])
    assert "human" not in rep["keys"]["original"]  # no label yet: no figure
    AL.sync_queue(store)
    bob: set[bool] = set()  # a second annotator labels one right and one wrong answer, both "correct"
    for item in labels.items(store, A):
        answer = AL.blinded_item(store, item)
        right = answer.answer == answer.gold
        labels.save_label(store, item, "ann", "correct" if right else "wrong", task=A)
        if right not in bob:
            labels.save_label(store, item, "bob", "correct", task=A)
            bob.add(right)
    ties = 1  # the wrong answer bob called correct: a tie, so the majority is undecided
    (errors := tmp_path / "errors.json").write_text(json.dumps(
        [{"question_id": qs[0].question_id, "error_type": "HALLUCINATION", "correct_answer": "zebra crossing"}]))
    ingest_overlay(store, errors, dataset_id="demo")
    rep = judge_report(store, [run_id], ["original", "audit"])
    store.close()
    orig, audit = rep["keys"]["original"], rep["keys"]["audit"]
    n = len(qs)
    wrong = (n + 1) // 2  # the even positions answered "zebra crossing"
    decided = n - ties
    assert orig["human_labelled_answers"] == n
    assert orig["judges"][HUMAN]["accept_pct"] == round(100 * (n - wrong) / decided, 2)
    assert orig["judges"][HUMAN]["undecided_pct"] == round(100 * ties / n, 2)
    assert orig["human"]["lenient"] == {"n": decided, "agreement_pct": round(100 * (n - wrong) / decided, 2), "kappa": 0.0}
    assert orig["human"]["rules"]["n"] > 0 and orig["human"]["rules"]["agreement_pct"] == 100.0
    people = orig["human_annotators"]
    assert people["annotators"] == 2 and people["pairs"] == [
        {"a": "ann", "b": "bob", "n": 2, "agreement_pct": 50.0, "kappa": 0.0}]
    # under the overlay the label on q0 was given against a gold the overlay replaced: it does not count there
    assert audit["human_labelled_answers"] == n - 1 and audit["human"]["lenient"]["n"] == n - 1


def test_an_answer_label_saved_while_another_process_holds_the_store_is_queued_then_written(tmp_path):
    """The app's path: a snapshot session queues the label in the side file; the next writable open
    writes it into the answer task's table, never the sufficiency one."""
    from test_store import Holder

    db = tmp_path / "s.duckdb"
    s = _store(db)
    AL.sync_queue(s)
    item = _item(s, "12 days")
    s.close()
    holder = Holder(db)
    shared = Store(db, shared=True)
    try:
        with shared.held(wait_s=0.2):
            assert shared.snapshot_of == str(db)
            assert labels.save_label(shared, item, "ann", "wrong", "held", task=A) == labels.QUEUED
            assert labels.queue(shared, "ann", A) == [i for i in labels.items(shared, A) if i != item]
    finally:
        holder.close()
    with shared.held():
        assert labels.flush_pending(shared) == 1
        assert labels.current_label(shared, item, "ann", A)["note"] == "held"
        assert labels.annotators(shared) == [] and labels.annotators(shared, A) == ["ann"]
    shared.close()
