"""Suspect answer keys from the text alone: each check fires on the case it describes and stays quiet
on a sound key; the flags are scored against an overlay by error type."""

from __future__ import annotations

from datetime import datetime

from bfr_core.evaluation.suspect_keys import Flag, check_question, score_flags, stems
from bfr_core.records import Question, Turn

DAY = datetime(2023, 7, 15, 10, 0)
TURNS = {t.turn_id: t for t in (
    Turn("c:D1:1", "c:S1", 0, "Ann", "I adopted a puppy named Rex last week!", DAY, "D1:1"),
    Turn("c:D1:2", "c:S1", 1, "Bob", "That is great, what breed is he?", DAY, "D1:2"),
    Turn("c:D1:3", "c:S1", 2, "Ann", "A beagle. He loves the park.", DAY, "D1:3"),
)}


def _q(answer: str, gold: tuple[str, ...], text: str = "What breed is Ann's dog?") -> Question:
    return Question("d", "q1", "c", text, answer, "single-hop", gold)


def _checks(q: Question) -> set[str]:
    said = {tid: stems(t.text) for tid, t in TURNS.items()}
    return {f.check for f in check_question(q, TURNS, said)}


def test_a_sound_key_raises_nothing():
    assert _checks(_q("A beagle", ("c:D1:3",))) == set()


def test_wrong_citation_and_unsupported_answer():
    assert _checks(_q("A beagle", ("c:D1:2",))) == {"citation"}
    assert _checks(_q("A golden retriever poodle", ("c:D1:3",))) == {"unsupported"}


def test_dates():
    relative = _q("The Friday before 20 July 2023", ("c:D1:1",), "When did Ann adopt Rex?")
    assert "anchor" in _checks(relative)  # the evidence is dated 15 July
    assert "weekday" in _checks(_q("Friday, 16 July 2023", ("c:D1:1",), "When did Ann adopt Rex?"))
    assert "weekday" not in _checks(_q("Saturday, 15 July 2023", ("c:D1:1",), "When did Ann adopt Rex?"))


def test_scores_by_error_type():
    flags = [Flag("a", "citation", ""), Flag("b", "unsupported", ""), Flag("c", "citation", "")]
    got = score_flags(flags, {"a": "WRONG_CITATION", "b": "TEMPORAL_ERROR", "d": "HALLUCINATION"}, ["a", "b", "c", "d"])
    assert (got["flagged"], got["in_findings"], got["precision_pct"]) == (3, 2, 66.67)
    assert (got["target_findings"], got["recall_pct"]) == (2, 50.0)
    assert got["by_error_type"]["HALLUCINATION"] == {"findings": 1, "flagged": 0}


def test_cli_writes_flags_as_an_overlay_that_ingests(tmp_path, capsys):
    import json

    from bfr_core.cli import main
    from bfr_core.evaluation.overlay import read_overlay
    from bfr_core.ingest.demo import ensure_demo_store
    from bfr_core.store import Store

    db = tmp_path / "demo.duckdb"
    store = ensure_demo_store(db, embed=False)
    store.con.execute("UPDATE questions SET answer = 'zeppelin harmonica' WHERE question_id = 'q1'")
    store.close()
    out = tmp_path / "flags.json"
    assert main(["suspect-keys", "--db", str(db), "--dataset", "demo", "--out", str(out)]) == 0
    summary = json.loads(capsys.readouterr().out)
    records = read_overlay(out)
    assert summary["written"]["records"] == len(records) >= 1
    q1 = next(r for r in records if r["question_id"] == "q1")
    assert "SUSPECT_UNSUPPORTED" in q1["error_type"] and "zeppelin" in q1["reasoning"]
    assert main(["ingest", "overlay", str(out), "--db", str(db), "--dataset", "demo", "--name", "flags"]) == 0
    assert Store(db, read_only=True).cursor().execute("SELECT count(*) FROM key_overlays").fetchone()[0] == len(records)
    from bfr_core.evaluation.overlay import load_overlay
    s = Store(db, read_only=True)
    assert not any(f.answer_changed for f in load_overlay(s, "demo", "flags").values())  # a flag changes no answer
    s.close()
