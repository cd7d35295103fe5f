"""LoCoMo loader: the real file's counts and quirks, plus small synthetic files for the edge cases."""

from __future__ import annotations

import json
from collections import Counter
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from bfr_core.dates import parse_locomo_date
from bfr_core.errors import InputError
from bfr_core.ingest.locomo import GoldTally, load_locomo, normalise_dia_id, resolve_evidence
from bfr_core.ingest.sources import data_dir
from bfr_core.store import Store

DATA = data_dir()
LOCOMO = DATA / "locomo10.json"
needs_locomo = pytest.mark.skipif(not LOCOMO.is_file(), reason=f"{LOCOMO} not available")


@pytest.fixture(scope="module")
def bundle():
    if not LOCOMO.is_file():
        pytest.skip(f"{LOCOMO} not available")
    return load_locomo(LOCOMO)


def _q(bundle, qid: str):
    return next(q for q in bundle.questions if q.question_id == qid)


# -- the real file --------------------------------------------------------------------------------


@pytest.mark.slow
@needs_locomo
def test_real_file_counts(bundle) -> None:
    r = bundle.report
    assert (r.scopes, r.sessions, r.turns, r.questions, r.scoreable) == (10, 272, 5882, 1986, 1536)
    assert dict(r.by_type) == {
        "multi-hop": 282, "temporal": 321, "open-domain": 96, "single-hop": 841, "adversarial": 446,
    }
    assert Counter(q.category for q in bundle.questions) == {1: 282, 2: 321, 3: 96, 4: 841, 5: 446}
    # the four category-1..4 questions that are not scoreable are exactly the four without evidence
    lost = [q for q in bundle.questions if q.category != 5 and not q.scoreable]
    assert len(lost) == 4 and all(q.category == 3 and not q.gold for q in lost)
    assert len({t.turn_id for t in bundle.turns}) == 5882


@pytest.mark.slow
@needs_locomo
def test_real_file_gold_repairs(bundle) -> None:
    assert bundle.extra["evidence_strings"] == 2815
    assert bundle.extra["gold_exact"] == 2806
    assert bundle.extra["gold_recovered"] == {"split list": 13, "zero-padded": 1, "stray colon": 1}
    assert bundle.extra["gold_dropped"] == {"no such turn": 2, "unparseable": 1}
    assert _q(bundle, "conv-26:q038").gold == ("conv-26:D8:6", "conv-26:D9:17")
    assert _q(bundle, "conv-49:q039").gold == ("conv-49:D22:1", "conv-49:D22:2", "conv-49:D9:10", "conv-49:D9:11")
    assert _q(bundle, "conv-50:q070").gold == ("conv-50:D30:5",)
    assert "conv-43:D11:26" in _q(bundle, "conv-43:q019").gold
    assert _q(bundle, "conv-42:q089").gold == ("conv-42:D1:18", "conv-42:D1:20")
    assert "conv-42:D10:19" not in _q(bundle, "conv-42:q059").gold
    notes = "\n".join(bundle.report.notes)
    assert "15 id(s) recovered" in notes and "3 dropped" in notes and "'D10:19'" in notes
    turn_ids = {t.turn_id for t in bundle.turns}
    assert all(g in turn_ids for q in bundle.questions for g in q.gold)


@pytest.mark.slow
@needs_locomo
def test_real_file_records(bundle) -> None:
    scope = next(s for s in bundle.scopes if s.scope_id == "conv-41")
    assert scope.speakers == ("John", "Maria")
    assert scope.session_ids[8:11] == ("conv-41:S9", "conv-41:S10", "conv-41:S11")
    assert len(scope.session_ids) == 32
    first = bundle.sessions[0]
    assert (first.session_id, first.date_text, first.date) == (
        "conv-26:S1", "1:56 pm on 8 May, 2023", datetime(2023, 5, 8, 13, 56))
    assert all(s.date is not None for s in bundle.sessions)
    t = bundle.turns[0]
    assert (t.turn_id, t.local_id, t.idx, t.speaker, t.session_id) == (
        "conv-26:D1:1", "D1:1", 0, "Caroline", "conv-26:S1")
    photos = [t for t in bundle.turns if "[shares a photo: " in t.text]
    assert len(photos) == 1226 and all(t.text.endswith("]") for t in photos)
    assert _q(bundle, "conv-26:q001").answer  # string answers pass through
    assert any(q.answer == "2022" for q in bundle.questions)  # integer answers become text
    cat5 = [q for q in bundle.questions if q.category == 5]
    assert len(cat5) == 446 and all(q.answer and not q.scoreable for q in cat5)
    bowl = next(q for q in cat5 if q.text.startswith("Did Caroline make the black and white bowl"))
    assert bowl.answer == "No"  # 'answer' wins over 'adversarial_answer' when both exist
    assert any(n.startswith("444 category-5 questions") for n in bundle.report.notes)


@pytest.mark.slow
@needs_locomo
def test_real_file_round_trips_through_store(bundle) -> None:
    store = Store(":memory:")
    store.write_bundle(bundle)
    assert store.counts("locomo") == {"scopes": 10, "sessions": 272, "turns": 5882, "questions": 1986,
                                      "scoreable": 1536}
    assert len(store.questions("locomo", scoreable_only=True)) == 1536
    assert store.question("locomo", "conv-26:q038").gold == ("conv-26:D8:6", "conv-26:D9:17")
    assert len(store.scope_turns("locomo", "conv-26")) == 419


# -- synthetic files ------------------------------------------------------------------------------


def _sample(**over: Any) -> dict[str, Any]:
    conv: dict[str, Any] = {"speaker_a": "Ann", "speaker_b": "Bo"}
    for n in (1, 2, 10, 9):  # written out of order on purpose
        conv[f"session_{n}"] = [
            {"speaker": "Ann", "dia_id": f"D{n}:1", "text": f"hello {n}"},
            {"speaker": "Bo", "dia_id": f"D{n}:2", "text": "look", "blip_caption": "a photo of a dog"},
        ]
        conv[f"session_{n}_date_time"] = f"10:0{n % 10} am on {n} June, 2023"
    sample = {"sample_id": "c1", "conversation": conv, "qa": [
        {"question": "Q1?", "answer": 7, "evidence": ["D10:1", "D9:02"], "category": 2},
        {"question": "Q2?", "adversarial_answer": "trap", "evidence": ["D1:1"], "category": 5},
        {"question": "Q3?", "answer": "a", "evidence": ["D", "D99:1"], "category": 4},
    ]}
    sample.update(over)
    return sample


def _write(tmp_path: Path, data: Any) -> Path:
    p = tmp_path / "locomo.json"
    p.write_text(json.dumps(data), encoding="utf-8")
    return p


def test_synthetic_order_dates_images_answers(tmp_path: Path) -> None:
    b = load_locomo(_write(tmp_path, [_sample()]), dataset_id="x")
    assert b.dataset_id == "x"
    assert b.scopes[0].session_ids == ("c1:S1", "c1:S2", "c1:S9", "c1:S10")
    assert b.sessions[-1].date == datetime(2023, 6, 10, 10, 0)
    assert b.turns[1].text == "look [shares a photo: a photo of a dog]"
    q1, q2, q3 = b.questions
    assert (q1.question_id, q1.answer, q1.gold, q1.qtype, q1.scoreable) == (
        "c1:q001", "7", ("c1:D10:1", "c1:D9:2"), "temporal", True)
    assert (q2.answer, q2.scoreable, q2.category) == ("trap", False, 5)
    assert (q3.gold, q3.scoreable) == ((), False)
    assert b.extra["gold_dropped"] == {"unparseable": 1, "no such turn": 1}


@pytest.mark.parametrize(
    ("mutate", "field"),
    [
        (lambda s: s["conversation"]["session_2"][0].pop("text"), "conversation.session_2[0].text"),
        (lambda s: s["conversation"]["session_1"][1].update(speaker=3), "conversation.session_1[1].speaker"),
        (lambda s: s["qa"][0].update(category="2"), "qa[0].category"),
        (lambda s: s["qa"][0].update(category=7), "qa[0].category"),
        (lambda s: s["qa"][2].pop("answer"), "qa[2].answer"),
        (lambda s: s["qa"][1].update(evidence="D1:1"), "qa[1].evidence"),
        (lambda s: s.pop("qa"), "qa"),
        (lambda s: s["conversation"].update(session_1="oops"), "conversation.session_1"),
    ],
)
def test_bad_fields_name_record_and_field(tmp_path: Path, mutate, field: str) -> None:
    sample = _sample()
    mutate(sample)
    path = _write(tmp_path, [sample])
    with pytest.raises(InputError) as err:
        load_locomo(path)
    assert err.value.field == field
    assert err.value.record == "sample 0 (c1)"
    assert str(path) in str(err.value)


def test_wrong_shape_and_duplicates(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="not a LoCoMo file.*looks like a longmemeval"):
        load_locomo(_write(tmp_path, [{"question_id": "a", "haystack_sessions": []}]))
    with pytest.raises(InputError, match="not a LoCoMo file"):
        load_locomo(_write(tmp_path, {"a": 1}))
    with pytest.raises(InputError, match="duplicate sample"):
        load_locomo(_write(tmp_path, [_sample(), _sample()]))


def test_normalise_and_resolve() -> None:
    assert normalise_dia_id("D30:05") == ("D30:5", "zero-padded")
    assert normalise_dia_id("D:11:26") == ("D11:26", "stray colon")
    assert normalise_dia_id("D3:7") == ("D3:7", None)
    assert normalise_dia_id("D") is None
    known = {"D1:1": "D1:1", "D2:3": "D2:3"}
    tally = GoldTally()
    got = resolve_evidence(["D1:1", "D1:1; D2:3", "D2:03", "D7:1", "x"], known, tally, "q")
    assert got == ["D1:1", "D2:3"]
    assert (tally.strings, tally.exact) == (5, 1)
    assert tally.recovered == {"split list": 2, "zero-padded": 1}
    assert tally.dropped == {"no such turn": 1, "unparseable": 1}


def test_parse_locomo_date() -> None:
    assert parse_locomo_date("1:56 pm on 8 May, 2023") == datetime(2023, 5, 8, 13, 56)
    assert parse_locomo_date("12:09 am on 13 September, 2023") == datetime(2023, 9, 13, 0, 9)
    assert parse_locomo_date("12:30 pm on 1 Jan, 2024") == datetime(2024, 1, 1, 12, 30)
    assert parse_locomo_date("yesterday") is None
    assert parse_locomo_date("1:56 pm on 31 February, 2023") is None
