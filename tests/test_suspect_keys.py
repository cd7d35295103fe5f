"""Suspect answer keys from the text alone: each check fires on the case it describes and stays quiet
on a sound key; the flags are scored against an overlay by error type."""

from __future__ import annotations

from datetime import datetime

from bfr_core.evaluation.suspect_keys import (
    DEFAULT,
    Flag,
    Setting,
    Signals,
    check_question,
    choose,
    cross_validate,
    flags_of,
    score_flags,
    stems,
)
from bfr_core.records import Question, Turn

DAY = datetime(2023, 7, 15, 10, 0)
TURNS = {t.turn_id: t for t in (
    Turn("c:D1:1", "c:S1", 0, "Ann", "I adopted a puppy named Rex last week!", DAY, "D1:1"),
    Turn("c:D1:2", "c:S1", 1, "Bob", "That is great, what breed is he?", DAY, "D1:2"),
    Turn("c:D1:3", "c:S1", 2, "Ann", "A beagle. He loves the park.", DAY, "D1:3"),
)}


def _q(answer: str, gold: tuple[str, ...], text: str = "What breed is Ann's dog?") -> Question:
    return Question("d", "q1", "c", text, answer, "single-hop", gold)


def _checks(q: Question, setting: Setting = DEFAULT, turns: dict[str, Turn] = TURNS) -> set[str]:
    said = {tid: stems(t.text) for tid, t in turns.items()}
    return {f.check for f in check_question(q, turns, said, setting)}


def test_a_sound_key_raises_nothing():
    assert _checks(_q("A beagle", ("c:D1:3",))) == set()


def test_wrong_citation_and_unsupported_answer():
    with_citation = Setting(DEFAULT.idle_weight, DEFAULT.idle_context, citation=True)
    assert _checks(_q("A beagle", ("c:D1:2",)), with_citation) == {"citation", "speaker"}
    assert "citation" not in _checks(_q("A beagle", ("c:D1:2",)), Setting(citation=False))
    assert _checks(_q("A golden retriever poodle", ("c:D1:3",))) == {"unsupported"}


def test_a_turn_spoken_by_someone_else_than_the_person_asked_about():
    assert "speaker" in _checks(_q("A beagle", ("c:D1:2",)))  # Bob's turn for a question about Ann
    assert "speaker" not in _checks(_q("A beagle", ("c:D1:3",)))
    both = _q("A beagle", ("c:D1:2",), "What breed did Ann tell Bob about?")  # names both speakers
    assert "speaker" not in _checks(both)


CHAT = [("Ann", "My sister moved to Lisbon for a new job."), ("Bob", "Wow, Lisbon! Is she enjoying the food?"),
        ("Ann", "She loves it. The pastries are amazing."), ("Bob", "I went fishing at the lake with my uncle."),
        ("Ann", "Sounds fun, talk soon!"), ("Bob", "Did you finish the painting of the harbor?"),
        ("Ann", "Yes, finally. It took three weeks."), ("Bob", "My car broke down again yesterday."),
        ("Ann", "Oh no, hope the repair is cheap."), ("Bob", "Me too, thanks.")]
LONG = {f"c:D1:{i + 1}": Turn(f"c:D1:{i + 1}", "c:S1", i, who, text, DAY, f"D1:{i + 1}") for i, (who, text) in enumerate(CHAT)}


def test_an_idle_cited_turn_and_its_context():
    where = "Where did Ann's sister move?"
    assert "idle" not in _checks(_q("Lisbon", ("c:D1:1",), where), turns=LONG)
    assert "idle" in _checks(_q("Lisbon", ("c:D1:1", "c:D1:5"), where), turns=LONG)  # a goodbye cited
    long_ago = _q("Three weeks", ("c:D1:7",), "How long did the harbor painting take Ann?")
    assert "idle" not in _checks(long_ago, turns=LONG)  # it shares "week"
    reply = _q("She finished it", ("c:D1:7",), "Did Ann finish the harbor painting?")  # the turn before holds the topic
    assert "idle" not in _checks(reply, Setting(0.5, idle_context=True), turns=LONG)
    assert "idle" in _checks(reply, Setting(0.5, idle_context=False), turns=LONG)


def test_choose_and_leave_one_conversation_out():
    def sig(qid: str, scope: str, w: float) -> Signals:
        return Signals(qid, scope, (), (("D1:1", w, None),))

    sigs = [sig("a1", "A", 0.2), sig("a2", "A", 0.4), sig("a3", "A", 0.9), sig("b1", "B", 0.2), sig("b2", "B", 0.4)]
    findings = {"a1": "WRONG_CITATION", "a2": "WRONG_CITATION", "b1": "HALLUCINATION"}
    grid = (Setting(0.3, False), Setting(0.5, False), Setting(1.0, False))
    picked, score = choose(sigs, findings, grid)  # 0.5 flags a1 a2 b1 b2: 75 % precision, all recalled
    assert picked == Setting(0.5, False) and (score["precision_pct"], score["recall_pct"]) == (75.0, 100.0)
    assert [f.check for f in flags_of(sigs[0], picked)] == ["idle"]
    cv = cross_validate(sigs, findings, grid)
    assert cv["folds"]["A"]["setting"] == "idle<0.3"  # B alone: 0.3 flags b1 only, 100 % precision
    assert cv["folds"]["B"]["setting"] == "idle<0.5"
    assert (cv["held_out"]["flagged"], cv["held_out"]["in_findings"]) == (3, 2)  # a1; b1, b2


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
