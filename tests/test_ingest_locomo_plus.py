"""LoCoMo-Plus loader: the stitching rule on hand-made files, its errors, and the real dev half when present."""

from __future__ import annotations

import json
from collections import Counter
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from bfr_core.dates import gap_days
from bfr_core.errors import InputError
from bfr_core.ingest.locomo_plus import conversation_index, embed_position, load_locomo_plus, parse_dialogue
from bfr_core.ingest.sources import data_dir

DATA = data_dir()
DEV = DATA / "locomo_plus_dev.json"
LOCOMO = DATA / "locomo10.json"


def _conv(sid: str, a: str, b: str) -> dict[str, Any]:
    return {"sample_id": sid, "conversation": {
        "speaker_a": a, "speaker_b": b,
        "session_1": [{"speaker": a, "dia_id": "D1:1", "text": "hi"}, {"speaker": b, "dia_id": "D1:2", "text": "yo"}],
        "session_1_date_time": "1:00 pm on 1 May, 2023",
        "session_2": [{"speaker": a, "dia_id": "D2:1", "text": "back"}],
        "session_2_date_time": "1:00 pm on 1 June, 2023",
    }, "qa": [{"question": "when?", "answer": "May", "evidence": ["D1:1"], "category": 2}]}


def _item(cue: str = "A: I learned to say no.\nB: Good for you.", trigger: str = "A: I am overwhelmed now.",
          gap: str = "two weeks later", rel: str = "causal") -> dict[str, Any]:
    return {"relation_type": rel, "cue_dialogue": cue, "trigger_query": trigger, "time_gap": gap,
            "model_name": "m", "scores": {"bge": 0.5}, "ranks": {"bge": 235}, "final_similarity_score": 0.5}


def _files(tmp_path: Path, items: list[Any]) -> tuple[Path, Path]:
    locomo = tmp_path / "locomo.json"
    locomo.write_text(json.dumps([_conv("c1", "Ann", "Bob"), _conv("c2", "Cat", "Dan")]), encoding="utf-8")
    plus = tmp_path / "plus.json"
    plus.write_text(json.dumps(items), encoding="utf-8")
    return plus, locomo


def test_stitching_follows_build_conv(tmp_path: Path) -> None:
    items = [_item(), _item(cue="A: we moved house", trigger="A: the new place is cold", gap="several months later"),
             _item(cue="A: x\nnot a turn\nB: y", trigger="A: z", gap="one year later", rel="state")]
    plus, locomo = _files(tmp_path, items)
    b = load_locomo_plus(plus, locomo=locomo)
    q0, q1, q2 = b.questions
    conv = conversation_index(items[0]["cue_dialogue"], items[0]["trigger_query"], 2)
    sid, a, bb = [("c1", "Ann", "Bob"), ("c2", "Cat", "Dan")][conv]
    assert (q0.question_id, q0.scope_id, q0.qtype) == ("plus-000", "plus-000", "causal")
    assert q0.text == "I am overwhelmed now."  # the trigger is the question, not a turn
    assert q0.date == datetime(2023, 6, 8, 13, 0)  # last session + 7 days
    assert q0.gold == ("plus-000:cue:1", "plus-000:cue:2")
    cue = {t.turn_id: t for t in b.turns if t.session_id == "plus-000:cue"}
    assert [(t.speaker, t.text) for t in cue.values()] == [(a, "I learned to say no."), (bb, "Good for you.")]
    assert all(t.date == datetime(2023, 5, 25, 13, 0) for t in cue.values())  # query - 14 days
    assert b.scopes[0].session_ids == (f"{sid}:S1", "plus-000:cue", f"{sid}:S2")
    assert b.scopes[0].speakers == (a, bb)
    # no count and unit: 0 days, so the cue sits at the query time, after every session
    assert b.scopes[1].session_ids[-1] == "plus-001:cue"
    # a year back: before every session; the line without a speaker is skipped
    assert b.scopes[2].session_ids[0] == "plus-002:cue" and len(q2.gold) == 2 and q2.qtype == "state"
    assert not any(t.text == "hi" and t.turn_id.startswith("plus") for t in b.turns)
    assert {q.qtype for q in b.questions} == {"causal", "state"} and b.report.scoreable == 3
    # LoCoMo sessions are stored once, whatever the number of items placed in them
    assert len([s for s in b.sessions if s.session_id.endswith(":S1")]) == 2


def test_the_query_comes_after_every_session_even_when_dates_are_out_of_order(tmp_path: Path) -> None:
    plus, locomo = _files(tmp_path, [_item()])
    data = json.loads(locomo.read_text(encoding="utf-8"))
    for c in data:  # the first session dated after the last
        c["conversation"]["session_1_date_time"] = "1:00 pm on 1 August, 2023"
    locomo.write_text(json.dumps(data), encoding="utf-8")
    assert load_locomo_plus(plus, locomo=locomo).questions[0].date == datetime(2023, 8, 8, 13, 0)


def test_rule_reads_content_not_position(tmp_path: Path) -> None:
    items = [_item(cue=f"A: cue {i}", trigger=f"A: trigger {i}") for i in range(12)]
    plus, locomo = _files(tmp_path, items)
    full = load_locomo_plus(plus, locomo=locomo)
    (tmp_path / "h").mkdir()
    half, _ = _files(tmp_path / "h", items[6:])
    part = load_locomo_plus(half, locomo=locomo)
    conv_of = {q.text: s.session_ids for q, s in zip(full.questions, full.scopes, strict=True)}
    for q, s in zip(part.questions, part.scopes, strict=True):
        assert [x for x in s.session_ids if ":cue" not in x] == [x for x in conv_of[q.text] if ":cue" not in x]
    assert len({s.session_ids[0].split(":")[0] for s in full.scopes}) == 2  # both conversations used


def test_locomo_questions_in_the_first_stitched_scope(tmp_path: Path) -> None:
    items = [_item(cue=f"A: cue {i}", trigger=f"A: trigger {i}") for i in range(6)]
    plus, locomo = _files(tmp_path, items)
    b = load_locomo_plus(plus, locomo=locomo, locomo_questions=True)
    extra = [q for q in b.questions if q.qtype.startswith("locomo/")]
    assert len(extra) == 2 and {q.qtype for q in extra} == {"locomo/temporal"}
    for q in extra:
        first = next(s for s in b.scopes if q.gold[0].split(":")[0] in s.session_ids[0] + s.session_ids[-1])
        assert q.scope_id == first.scope_id and q.question_id.startswith(first.scope_id + "/")
    plain = load_locomo_plus(plus, locomo=locomo)
    assert len(plain.questions) == 6
    assert plain.source_sha256 != b.source_sha256  # other questions: another dataset version (a new run id)


def test_embedded_stitching_puts_the_cue_inside_the_session_before_it(tmp_path: Path) -> None:
    items = [_item(), _item(cue="A: old news\nB: indeed", trigger="A: later", gap="one year later")]
    plus, locomo = _files(tmp_path, items)
    own, emb = load_locomo_plus(plus, locomo=locomo), load_locomo_plus(plus, locomo=locomo, stitch="embedded")
    conv = conversation_index(items[0]["cue_dialogue"], items[0]["trigger_query"], 2)
    sid, a, bb = [("c1", "Ann", "Bob"), ("c2", "Cat", "Dan")][conv]
    q0, q1 = emb.questions
    # cue at 25 May: the host is session 1 (1 May; session 2 is 1 June), copied for this item only
    host = f"plus-000/{sid}:S1"
    assert emb.scopes[0].session_ids == (host, f"{sid}:S2")
    copy = [t for t in emb.turns if t.session_id == host]
    pos = embed_position(items[0]["cue_dialogue"], items[0]["trigger_query"], 2)
    texts = ["hi", "yo"]
    texts[pos:pos] = ["I learned to say no.", "Good for you."]
    assert [t.text for t in copy] == texts and [t.idx for t in copy] == [0, 1, 2, 3]
    assert [t.turn_id for t in copy] == [f"{host}:{i}" for i in (1, 2, 3, 4)]  # cue turns named like the rest
    assert q0.gold == (f"{host}:{pos + 1}", f"{host}:{pos + 2}")
    assert [(t.speaker, t.local_id) for t in copy[pos:pos + 2]] == [(a, "cue:1"), (bb, "cue:2")]
    assert all(t.date == datetime(2023, 5, 1, 13, 0) for t in copy)  # dated as the host
    assert not any(":cue" in s for sc in emb.scopes for s in sc.session_ids)
    # a cue before every session goes into the first
    assert emb.scopes[1].session_ids[0].startswith("plus-001/") and emb.scopes[1].session_ids[0].endswith(":S1")
    # the same questions and texts as the benchmark's stitching; another dataset version
    assert [(q.text, q.answer, q.date) for q in own.questions] == [(q.text, q.answer, q.date) for q in emb.questions]
    assert own.source_sha256 != emb.source_sha256 and emb.extra["stitch"] == "embedded"
    assert any("EMBEDDED" in n for n in emb.report.notes)
    assert [0 <= embed_position("c", "t", n) <= n for n in range(5)] == [True] * 5
    with pytest.raises(InputError, match="stitch must be one of session, embedded"):
        load_locomo_plus(plus, locomo=locomo, stitch="inline")


def test_embedded_stitching_into_a_session_without_turns(tmp_path: Path) -> None:
    plus, locomo = _files(tmp_path, [_item()])
    data = json.loads(locomo.read_text(encoding="utf-8"))
    for c in data:
        c["conversation"]["session_1"] = []  # the host: dated, no turns
    locomo.write_text(json.dumps(data), encoding="utf-8")
    b = load_locomo_plus(plus, locomo=locomo, stitch="embedded")
    (q,) = b.questions
    assert [t.text for t in b.turns if t.turn_id in q.gold] == ["I learned to say no.", "Good for you."]


def test_embedded_stitching_renames_locomo_gold_in_the_copied_session(tmp_path: Path) -> None:
    items = [_item(cue=f"A: cue {i}", trigger=f"A: trigger {i}") for i in range(6)]
    plus, locomo = _files(tmp_path, items)
    b = load_locomo_plus(plus, locomo=locomo, locomo_questions=True, stitch="embedded")
    turns = {t.turn_id: t for t in b.turns}
    scopes = {s.scope_id: s for s in b.scopes}
    for q in (q for q in b.questions if q.qtype.startswith("locomo/")):
        (g,) = q.gold  # D1:1, in session 1, which every cue here (two weeks back) is embedded in
        assert g.startswith(q.scope_id + "/") and turns[g].text == "hi" and turns[g].local_id == "D1:1"
        assert turns[g].session_id in scopes[q.scope_id].session_ids


@pytest.mark.parametrize(
    ("item", "field"),
    [
        ({"cue_dialogue": "A: x", "trigger_query": "A: y", "time_gap": "a week later"}, "relation_type"),
        (_item(cue="hello there"), "cue_dialogue"),
        (_item(trigger="no speaker"), "trigger_query"),
        ({**_item(), "time_gap": 3}, "time_gap"),
        ({**_item(), "time_gap": "5000 years later"}, "time_gap"),
        ({**_item(), "time_gap": "99999999999 weeks later"}, "time_gap"),
    ],
)
def test_bad_items_name_record_and_field(tmp_path: Path, item: dict, field: str) -> None:
    plus, locomo = _files(tmp_path, [_item(), item])
    with pytest.raises(InputError) as err:
        load_locomo_plus(plus, locomo=locomo)
    assert (err.value.path, err.value.record, err.value.field) == (str(plus), "item 1", field)


def test_wrong_files(tmp_path: Path) -> None:
    plus, locomo = _files(tmp_path, [_item()])
    with pytest.raises(InputError, match="not a LoCoMo-Plus file.*looks like a locomo"):
        load_locomo_plus(locomo, locomo=locomo)
    with pytest.raises(InputError, match="not a LoCoMo file"):
        load_locomo_plus(plus, locomo=plus)


def test_gap_and_dialogue_parsing() -> None:
    assert [gap_days(g) for g in ("one week later", "about six weeks later", "a year later", "around 4 months later",
                                  "several months later")] == [7, 42, 365, 120, 0]
    assert parse_dialogue(" A: one \nB:two\nC: three") == [("A", "one"), ("B", "two")]


@pytest.mark.slow
@pytest.mark.skipif(not (DEV.is_file() and LOCOMO.is_file()), reason="LoCoMo-Plus dev half or LoCoMo not available")
def test_real_dev_half() -> None:
    b = load_locomo_plus(DEV, locomo=LOCOMO)
    assert (b.report.scopes, b.report.questions, b.report.scoreable) == (200, 200, 200)
    assert Counter(q.qtype for q in b.questions) == {"causal": 101, "state": 98, "goal": 1}
    assert sum(b.extra["items_per_conversation"].values()) == 200 and len(b.extra["items_per_conversation"]) == 10
    assert all(len(s.session_ids) == len(set(s.session_ids)) for s in b.scopes)
    assert b.source_sha256 == load_locomo_plus(DEV, locomo=LOCOMO).source_sha256


def test_cli_needs_and_reads_the_locomo_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from bfr_core.cli import main

    plus, locomo = _files(tmp_path, [_item()])
    db = tmp_path / "s.duckdb"
    args = ["ingest", "locomo-plus", str(plus), "--db", str(db), "--no-embed", "--quiet"]
    assert main([*args, "--locomo", str(tmp_path / "missing.json")]) == 2
    assert "missing.json: file not found" in capsys.readouterr().err and not db.exists()
    assert main([*args, "--locomo", str(locomo), "--locomo-questions"]) == 0
    assert "questions 2" in capsys.readouterr().out  # the trigger + its conversation's one LoCoMo question
    assert main([*args, "--locomo", str(locomo), "--stitch", "embedded", "--name", "emb"]) == 0
    assert "EMBEDDED" in capsys.readouterr().out
    assert main([*args, "--locomo", str(locomo), "--stitch", "embedded"]) == 0  # never under the benchmark's name
    assert "as 'locomo-plus-embedded'" in capsys.readouterr().out
    assert main(["ingest", "locomo", str(locomo), "--db", str(db), "--no-embed", "--quiet", "--stitch", "embedded"]) == 2
    assert "--stitch: only for locomo-plus, not locomo" in capsys.readouterr().err
