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
