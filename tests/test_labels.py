"""bfr_core.evaluation.labels: queue from finished runs (deduplicated by evidence), blinding, history,
judges' labels, agreement, export, and the ``bfr label-export`` command."""

import csv
import json

import pytest

from bfr_core import runs
from bfr_core.cli import main
from bfr_core.evaluation import agreement as AG
from bfr_core.evaluation import labels
from bfr_core.records import Bundle, IngestReport, Question, Scope, Session, Turn
from bfr_core.store import Store


def dataset_store(path=":memory:") -> Store:
    """A store holding the small dataset ``d`` (two questions over two sessions) and the run tables."""
    from datetime import datetime

    s = Store(str(path))
    d1, d2 = datetime(2024, 3, 3, 9, 0), datetime(2024, 3, 15, 20, 0)
    turns = (Turn("a_1", "a", 0, "Sam", "I ordered a strap on March 3rd.", d1),
             Turn("a_2", "a", 1, "assistant", "Nice.", d1),
             Turn("b_1", "b", 0, "Sam", "It showed up on March 14th!", d2))
    qs = (Question("d", "q1", "x", "How many days until the strap arrived?", "11 days", "temporal", ("a_1", "b_1")),
          Question("d", "q2", "x", "What did I order?", "a strap", "single-hop", ("a_1",)))
    s.write_bundle(Bundle("d", "jsonl", "mem", "sha", (Session("a", d1), Session("b", d2)), turns,
                          (Scope("d", "x", ("a", "b")),), qs, IngestReport("d", "jsonl", "mem")))
    runs.ensure_schema(s)
    return s


def _store(path=":memory:") -> Store:
    s = dataset_store(path)
    cur = s.cursor()
    cur.execute("INSERT INTO runs (run_id, dataset_id, arms, n_questions, finished) VALUES "
                "('r1', 'd', ['mem0', 'bfr-mv', 'fca-ms'], 2, current_timestamp), "
                "('r2', 'd', ['mem0'], 2, NULL)")
    rows = [("r1", "q1", "mem0", ["a_1", "a_2"]), ("r1", "q1", "fca-ms", ["a_2", "a_1"]),  # same set
            ("r1", "q1", "bfr-mv", ["a_1", "b_1"]), ("r1", "q2", "mem0", ["a_1"]),
            ("r1", "q2", "bfr-mv", []),  # empty sets are not labelled
            ("r2", "q2", "mem0", ["a_2"])]  # unfinished run: not in the queue
    for run, q, arm, ev in rows:
        cur.execute("INSERT INTO results (run_id, question_id, arm, budget, evidence, status) VALUES (?, ?, ?, 'C6', ?, 'ok')",
                    [run, q, arm, ev])
    cur.execute("UPDATE results SET suff = 'sufficient', suff_detail = ? WHERE arm = 'bfr-mv' AND question_id = 'q1'",
                [json.dumps({"label": "sufficient", "judge_labels": ["sufficient", "insufficient"], "adjudicated": True})])
    return s


def test_queue_dedups_by_evidence_and_skips_unfinished_and_empty():
    s = _store()
    assert labels.sync_queue(s) == 3
    assert labels.sync_queue(s) == 3  # idempotent
    srcs = s.cursor().execute("SELECT count(*) FROM label_sources").fetchone()[0]
    assert srcs == 4  # mem0 and fca-ms share one item


def test_blinded_item_has_no_ids_arm_or_budget():
    s = _store()
    labels.sync_queue(s)
    for item_id in labels.items(s):
        item = labels.blinded_item(s, item_id)
        text = item.as_text()
        for banned in ("mem0", "bfr-mv", "fca-ms", "C6", "a_1", "b_1", "a_2", "r1", item_id):
            assert banned not in text
        dates = [e.date for e in item.evidence]
        assert dates == sorted(dates)
        assert [e.n for e in item.evidence] == list(range(1, len(item.evidence) + 1))


def test_labels_history_current_and_errors():
    s = _store()
    labels.sync_queue(s)
    first = labels.queue(s, "alice")[0]
    labels.save_label(s, first, "alice", "insufficient", "missing the arrival")
    labels.save_label(s, first, " alice ", "sufficient")
    cur = labels.current_label(s, first, "alice")
    assert cur["label"] == "sufficient" and cur["versions"] == 2
    assert [h["label"] for h in labels.history(s, first, "alice")] == ["insufficient", "sufficient"]
    assert first not in labels.queue(s, "alice") and first in labels.queue(s, "bob")
    assert labels.progress(s, "alice") == (1, 3)
    with pytest.raises(labels.LabelError):
        labels.save_label(s, first, "", "sufficient")
    with pytest.raises(labels.LabelError):
        labels.save_label(s, first, "alice", "maybe")
    with pytest.raises(labels.LabelError):
        labels.save_label(s, "nope", "alice", "sufficient")
    with pytest.raises(labels.LabelError):
        labels.save_label(s, first, "llm:x", "sufficient")


def test_labels_persist_in_the_file(tmp_path):
    path = tmp_path / "s.duckdb"
    s = _store(path)
    labels.sync_queue(s)
    item = labels.items(s)[0]
    labels.save_label(s, item, "alice", "uncertain", "hm")
    s.close()
    s2 = Store(path)
    assert labels.current_label(s2, item, "alice")["label"] == "uncertain"


def test_judges_revealed_agreement_disagreement_and_export(tmp_path):
    s = _store()
    labels.sync_queue(s)
    judged = next(i for i in labels.items(s) if AG.judge_labels(s, i))
    assert AG.judge_labels(s, judged)["final"] == "sufficient"
    assert AG.judged_item(s, judged) == (AG.judge_labels(s, judged), "")  # a run without a provider recorded
    s.cursor().execute("UPDATE runs SET provider = 'offline rules'")
    assert AG.judged_item(s, judged)[1] == "offline rules"  # the page names who judged beside the labels
    for i in labels.items(s):
        labels.save_label(s, i, "alice", "sufficient")
        labels.save_label(s, i, "bob", "sufficient" if i == judged else "insufficient")
    raters = AG.rater_labels(s)
    assert {"alice", "bob", "llm:judge A", "llm:judge B", "llm:final"} <= set(raters)
    agree = {(a["rater_a"], a["rater_b"]): a for a in AG.agreement(s, raters)}
    ab = agree[("alice", "bob")]
    assert ab["n"] == 3 and ab["agreement"] == pytest.approx(1 / 3, abs=1e-3)
    assert ab["kappa"] == pytest.approx(0.0)  # alice's constant labels: p_o = p_e
    labs, counts = AG.confusion(raters, "alice", "bob")
    assert labs == labels.LABELS and counts[0][1] == 2 and counts[0][0] == 1
    dis = AG.disagreements(s, raters)
    # alice and bob differ on two items; on the judged one judge B says insufficient
    assert {d["item_id"] for d in dis} == set(labels.items(s))
    assert AG.disagreements(s, raters, among=[]) == []

    rows = labels.export_rows(s)
    assert len(rows) == 6 and all(r["is_current"] for r in rows)
    out_csv, out_jsonl = tmp_path / "l.csv", tmp_path / "l.jsonl"
    assert labels.export(s, out_csv) == 6
    got = list(csv.DictReader(out_csv.open(encoding="utf-8")))
    assert set(got[0]) == set(labels.EXPORT_COLUMNS)
    labels.export(s, out_jsonl)
    first = json.loads(out_jsonl.read_text(encoding="utf-8").splitlines()[0])
    assert isinstance(first["evidence"], list) and first["sources"]
    with pytest.raises(labels.BfrError):
        labels.export(s, tmp_path / "l.xlsx")


def test_label_export_command(tmp_path, capsys):
    db = tmp_path / "s.duckdb"
    s = _store(db)
    labels.sync_queue(s)
    labels.save_label(s, labels.items(s)[0], "alice", "sufficient", "ok")
    s.close()
    out = tmp_path / "out" / "labels.jsonl"
    assert main(["label-export", "--db", str(db), "--out", str(out)]) == 0
    assert len(out.read_text(encoding="utf-8").splitlines()) == 1
    assert main(["label-export", "--db", str(tmp_path / "missing.duckdb"), "--out", str(out)]) == 2
    assert main(["label-export", "--db", str(db), "--out", str(tmp_path / "x.txt")]) == 2


# -- labels saved while another process holds the store (issue 18) -------------------------------
def test_queued_labels_are_written_once_in_order_with_their_times(tmp_path):
    from bfr_core.evaluation import labels as L
    from bfr_core.store import Store

    db = tmp_path / "q.duckdb"
    store = Store(db)
    L.ensure_schema(store)
    store.cursor().execute("INSERT INTO label_items (item_id, dataset_id, question_id, evidence) VALUES "
                           "('i1', 'd', 'q1', ['t1']), ('i2', 'd', 'q2', ['t2'])")
    L.queue_label(db, "i2", "ann", "insufficient", "later")
    L.queue_label(db, "i1", "ann", "sufficient")
    rows = L.pending(db)
    assert [(r["item_id"], r["label"]) for r in rows] == [("i2", "insufficient"), ("i1", "sufficient")]
    assert L.queue(store, "ann") == [] and L.progress(store, "ann") == (2, 2)  # queued ones count as done
    assert L.flush_pending(store) == 2 and not L.pending_path(db).exists()
    got = store.cursor().execute("SELECT item_id, label, note, created FROM labels ORDER BY label_id").fetchall()
    assert [(g[0], g[1], g[2]) for g in got] == [("i2", "insufficient", "later"), ("i1", "sufficient", "")]
    assert got[0][3].isoformat(timespec="microseconds") == rows[0]["created"]  # the time it was saved
    # a flush interrupted after its commit leaves the side file: replaying it writes nothing twice
    L.pending_path(db).write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    assert L.flush_pending(store) == 0
    assert store.cursor().execute("SELECT count(*) FROM labels").fetchone()[0] == 2
    store.close()


@pytest.mark.parametrize("brk", ["\u2028", "\u2029", "\u0085"])
def test_a_note_with_a_unicode_line_break_is_kept_whole(tmp_path, brk):
    """JSON allows U+2028, U+2029 and U+0085 raw in a string and str.splitlines breaks at them: a note pasted
    with one made its pending label unreadable, and every label queued after it with it."""
    from bfr_core.evaluation import labels as L
    from bfr_core.store import Store

    db = tmp_path / "n.duckdb"
    store = Store(db)
    L.ensure_schema(store)
    store.cursor().execute("INSERT INTO label_items (item_id, dataset_id, question_id, evidence) VALUES "
                           "('i1', 'd', 'q1', ['t1']), ('i2', 'd', 'q2', ['t2'])")
    note = f"first line{brk}second line"
    L.queue_label(db, "i1", "ann", "insufficient", note)
    L.queue_label(db, "i2", "ann", "sufficient")
    assert brk not in L.pending_path(db).read_text(encoding="utf-8")  # escaped on disk: any reader splits it right
    assert [(r["item_id"], r["note"]) for r in L.pending(db)] == [("i1", note), ("i2", "")]
    # a side file an older version wrote, the character raw, reads back whole too
    L.pending_path(db).write_text(json.dumps({**L.pending(db)[0]}, ensure_ascii=False) + "\n", encoding="utf-8")
    assert brk in L.pending_path(db).read_text(encoding="utf-8") and L.pending(db)[0]["note"] == note
    assert L.flush_pending(store) == 1
    assert store.cursor().execute("SELECT note FROM labels").fetchone()[0] == note
    assert json.loads(L.to_jsonl([{"note": note}]).rstrip("\n"))["note"] == note
    assert len(L.to_jsonl([{"note": note}]).splitlines()) == 1
    store.close()


def test_a_save_killed_mid_write_costs_no_other_label(tmp_path):
    """A save killed inside its write leaves part of a line with no end: the next save starts a line of its
    own, every whole label is read and written, and the fragment is kept aside, not dropped."""
    from bfr_core.evaluation import labels as L
    from bfr_core.store import Store

    db = tmp_path / "t.duckdb"
    store = Store(db)
    L.ensure_schema(store)
    store.cursor().execute("INSERT INTO label_items (item_id, dataset_id, question_id, evidence) VALUES "
                           "('i1', 'd', 'q1', ['t1']), ('i3', 'd', 'q3', ['t3'])")
    L.queue_label(db, "i1", "ann", "sufficient")
    with L.pending_path(db).open("ab") as fh:
        fh.write(b'{"item_id": "i2", "annot')  # the torn write
    L.queue_label(db, "i3", "ann", "insufficient", "é")
    with L.pending_path(db).open("ab") as fh:
        fh.write(b'{"item_id": "i4"}\n\xff\xfe\n')  # parses but is no label; bytes that are no UTF-8
        fh.write(b'{"item_id": "i1", "annotator": "a", "label": "sufficient", "created": "yesterday"}\n')
        good = {"item_id": "i1", "annotator": "a", "label": "uncertain", "created": "2026-12-03T10:00:00"}
        for bad in ({"label": "maybe"}, {"annotator": ""}, {"annotator": "llm:judge"}, {"note": None},
                    {"note": "x\ud800"},  # a lone surrogate, which the store refuses
                    {"created": "20240501T100000"}, {"created": "2024-05-01T10:00:00+05:00"}):  # times CAST refuses
            fh.write((json.dumps({**good, **bad}) + "\n").encode())
        gone = b'{"item_id":"gone",  "annotator":"a","label":"uncertain","created":"2026-12-03T10:00","n":"\\u00e9"}'
        fh.write(gone + b"\n")  # a valid label whose item has gone since: written (a label is never lost)
        fh.write(gone.replace(b"uncertain", b"unsure") + b"\n")  # an invalid one: kept as its bytes were
    assert [r["item_id"] for r in L.pending(db)] == ["i1", "i3", "gone"]
    assert L.flush_pending(store) == 3 and not L.pending_path(db).exists()
    assert store.cursor().execute("SELECT item_id, note FROM labels ORDER BY label_id").fetchall() == [
        ("i1", ""), ("i3", "é"), ("gone", "")]
    kept = L.set_aside(db)
    assert kept[0] == '{"item_id": "i2", "annot' and kept[1] == '{"item_id": "i4"}' and len(kept) == 12
    raw = L.set_aside_path(db).read_bytes()
    unsure = gone.replace(b"uncertain", b"unsure")
    assert b"\xff\xfe\n" in raw and unsure + b"\n" in raw  # kept as written, not as U+FFFD or re-serialised
    L._set_aside(db, [unsure, b"new"])  # a flush killed before it let go of its claims sets them aside again
    assert L.set_aside_path(db).read_bytes() == raw + b"new\n"
    L.queue_label(db, "i1", "ann", "insufficient")  # the side file starts afresh
    assert [r["label"] for r in L.pending(db)] == ["insufficient"] and L.flush_pending(store) == 1
    assert len(L.set_aside(db)) == 13 and L.set_aside(tmp_path / "none.duckdb") == []
    store.close()


def test_a_read_only_store_keeps_the_queue_for_later(tmp_path):
    from bfr_core.evaluation import labels as L
    from bfr_core.store import Store

    db = tmp_path / "r.duckdb"
    Store(db).close()
    L.queue_label(db, "i1", "ann", "uncertain")
    ro = Store(db, read_only=True)
    assert L.flush_pending(ro) == 0 and len(L.pending(db)) == 1
    ro.close()


def test_sync_queue_adds_only_new_snapshots():
    """Idempotent, one source row per (item, run, arm), and a later finished run adds only its own new
    snapshots: its sets already queued gain a source, not an item."""
    s = _store()
    assert labels.sync_queue(s) == labels.sync_queue(s) == 3
    sources = "SELECT count(*) FROM label_sources"
    n = s.cursor().execute(sources).fetchone()[0]
    items = labels.items(s)
    s.cursor().execute("UPDATE runs SET finished = current_timestamp WHERE run_id = 'r2'")
    assert labels.sync_queue(s) == 4
    assert set(items) < set(labels.items(s))
    assert s.cursor().execute(sources).fetchone()[0] > n
    dup = "SELECT count(*) FROM (SELECT item_id, run_id, arm FROM label_sources GROUP BY ALL HAVING count(*) > 1)"
    assert s.cursor().execute(dup).fetchone()[0] == 0


def test_standing_is_queue_and_progress(tmp_path):
    """What the Annotate page derives from its cached items equals queue() and progress()."""
    s = _store(str(tmp_path / "s.duckdb"))
    labels.sync_queue(s)
    first, second, third = labels.items(s)
    labels.save_label(s, first, "ann", "sufficient")
    labels.queue_label(s.path, third, "ann", "uncertain")  # waiting in the side file
    todo, done = labels.standing(labels.items(s), AG.rater_labels(s).get("ann", {}), labels.waiting_items(s, "ann"))
    assert todo == labels.queue(s, "ann") == [second]
    assert (done, 3) == labels.progress(s, "ann")
