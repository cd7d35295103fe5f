"""Generic JSONL loader: the documented format, defaults, and one precise error per kind of mistake."""

from __future__ import annotations

import gzip
import json
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from bfr_core.dates import parse_iso_date
from bfr_core.errors import InputError
from bfr_core.ingest.generic_jsonl import default_dataset_id, load_jsonl


def _session(sid: str, *texts: str, **over: Any) -> dict[str, Any]:
    rec = {"type": "session", "session_id": sid,
           "turns": [{"speaker": "user" if i % 2 == 0 else "assistant", "text": t} for i, t in enumerate(texts)]}
    rec.update(over)
    return rec


def _question(qid: str, gold: list[str], **over: Any) -> dict[str, Any]:
    rec = {"type": "question", "question_id": qid, "question": "when?", "answer": "then", "gold": gold}
    rec.update(over)
    return rec


def _records() -> list[dict[str, Any]]:
    return [
        _session("a", "I moved to Oslo", "nice", date="2024-01-02"),
        _question("q1", ["a_1", "b_2"], qtype="multi-hop", date="2024-02-01T10:00"),
        _session("b", "hello", "I adopted a cat", date="2024-01-05T08:30:00+01:00"),
        _session("c", "unrelated", scope=["default", "other"], turns=[{"speaker": "x", "text": "t", "turn_id": "c-one"}]),
        _question("q2", [], is_abstention=True, answer=42),
        _question("q3", ["c-one"], scope="other", scoreable=False, meta={"source": "me"}),
    ]


def _write(tmp_path: Path, lines: list[Any] | str, name: str = "chats.jsonl") -> Path:
    text = lines if isinstance(lines, str) else "\n".join(
        line if isinstance(line, str) else json.dumps(line) for line in lines) + "\n"
    p = tmp_path / name
    p.write_bytes(gzip.compress(text.encode(), mtime=0) if name.endswith(".gz") else text.encode())
    return p


@pytest.mark.parametrize("name", ["chats.jsonl", "chats.jsonl.gz"])
def test_valid_file(tmp_path: Path, name: str) -> None:
    b = load_jsonl(_write(tmp_path, _records(), name))
    assert b.dataset_id == "chats" and b.kind == "jsonl"
    r = b.report
    assert (r.scopes, r.sessions, r.turns, r.questions, r.scoreable) == (2, 3, 5, 3, 1)
    scopes = {s.scope_id: s for s in b.scopes}
    assert scopes["default"].session_ids == ("a", "b", "c")
    assert scopes["other"].session_ids == ("c",)
    assert scopes["default"].speakers == ("user", "assistant", "x")
    assert [t.turn_id for t in b.turns] == ["a_1", "a_2", "b_1", "b_2", "c-one"]
    assert b.sessions[1].date == datetime(2024, 1, 5, 7, 30)  # offset converted to UTC
    assert b.sessions[1].date_text == "2024-01-05T08:30:00+01:00"
    q1, q2, q3 = b.questions
    assert (q1.gold, q1.qtype, q1.scoreable, q1.date) == (("a_1", "b_2"), "multi-hop", True, datetime(2024, 2, 1, 10))
    assert (q2.answer, q2.is_abstention, q2.scoreable, q2.qtype) == ("42", True, False, "unspecified")
    assert (q3.scope_id, q3.scoreable) == ("other", False)


def test_blank_lines_and_dataset_id(tmp_path: Path) -> None:
    p = _write(tmp_path, [_session("a", "x"), "", "   ", _question("q", ["a_1"])], "My Chats (v2).jsonl")
    b = load_jsonl(p)
    assert b.dataset_id == "My-Chats-v2"
    assert load_jsonl(p, dataset_id="mine").dataset_id == "mine"
    assert default_dataset_id("x/demo.jsonl.gz") == "demo"


@pytest.mark.parametrize(
    ("lines", "line", "field", "message"),
    [
        ([_session("a", "x"), '{"type": "question", "question_id": "q",'], 2, None, "malformed JSON"),
        ([_session("a", "x"), _question("q", ["a_9"])], 2, "gold[0]", "unknown turn id 'a_9'"),
        ([_session("a", "x"), _session("b", "y", scope="s2"), _question("q", ["b_1"])], 3, "gold[0]",
         "not in scope 'default'"),
        ([_session("a", "x"), _question("q", ["a_1"], scope="nope")], 2, "scope", "unknown scope 'nope'"),
        ([_session("a", "x"), {"type": "note"}], 2, "type", "unknown record type 'note'"),
        ([_session("a", "x"), {"session_id": "b"}], 2, "type", "missing required field"),
        ([_session("a", "x", date="03/03/2024")], 1, "date", "not a date"),
        ([_session("a", "x", date=20240303)], 1, "date", "expected a string, got an integer"),
        ([{"type": "session", "session_id": "a", "turns": [{"speaker": "u"}]}], 1, "turns[0].text",
         "missing required field"),
        ([{"type": "session", "session_id": "a", "turns": [{"speaker": "u", "text": 3}]}], 1, "turns[0].text",
         "expected a string"),
        ([{"type": "session", "session_id": "a", "turns": []}], 1, "turns", "at least one turn"),
        ([_session("a", "x", speaker="u")], 1, "speaker", "unknown field"),
        ([_session("a", "x"), _question("q", "a_1")], 2, "gold", "expected a list"),
        ([_session("a", "x"), _question("q", ["a_1"], scope=["a", "b"])], 2, "scope", "exactly one scope"),
        ([_session("a", "x"), _question("q", ["a_1"], answer=None)], 2, "answer", "got null"),
        (["[1, 2]"], 1, None, "expected an object"),
    ],
)
def test_errors_name_line_and_field(tmp_path: Path, lines, line: int, field: str | None, message: str) -> None:
    path = _write(tmp_path, lines)
    with pytest.raises(InputError) as err:
        load_jsonl(path)
    assert err.value.record == f"line {line}"
    assert err.value.field == field
    assert message in str(err.value)
    assert str(path) in str(err.value)


def test_duplicates_name_both_lines(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"record line 3: duplicate session_id 'a' \(first defined on line 1\)"):
        load_jsonl(_write(tmp_path, [_session("a", "x"), _session("b", "y"), _session("a", "z")]))
    dup_turn = {"type": "session", "session_id": "b", "turns": [{"speaker": "u", "text": "t", "turn_id": "a_1"}]}
    with pytest.raises(InputError, match=r"record line 2: duplicate turn_id 'a_1' \(first defined on line 1\)"):
        load_jsonl(_write(tmp_path, [_session("a", "x"), dup_turn]))
    with pytest.raises(InputError, match="duplicate question_id 'q'"):
        load_jsonl(_write(tmp_path, [_session("a", "x"), _question("q", []), _question("q", [])]))


def test_empty_and_session_less_files(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="file is empty"):
        load_jsonl(_write(tmp_path, ""))
    with pytest.raises(InputError, match="file is empty"):
        load_jsonl(_write(tmp_path, "\n\n  \n"))
    with pytest.raises(InputError, match="no session records"):
        load_jsonl(_write(tmp_path, [_question("q", [])]))
    with pytest.raises(InputError, match="file not found"):
        load_jsonl(tmp_path / "missing.jsonl")


def test_truncated_gzip(tmp_path: Path) -> None:
    p = _write(tmp_path, _records(), "chats.jsonl.gz")
    p.write_bytes(p.read_bytes()[:40])
    with pytest.raises(InputError, match="gzip data is truncated or corrupt"):
        load_jsonl(p)


def test_parse_iso_date() -> None:
    assert parse_iso_date("2024-03-03") == datetime(2024, 3, 3)
    assert parse_iso_date("2024-03-03T09:15Z") == datetime(2024, 3, 3, 9, 15)
    assert parse_iso_date("March 3") is None


def test_blank_question_or_answer_is_warned(tmp_path: Path) -> None:
    recs = [_session("a", "x"), _question("q1", ["a_1"], question="  "), _question("q2", ["a_1"], answer=""),
            _question("q3", ["a_1"], answer=" ")]
    notes = load_jsonl(_write(tmp_path, recs)).report.notes
    assert "warning: 1 question(s) with a blank 'question' (line 2)" in notes
    assert "warning: 2 question(s) with a blank 'answer' (line 3, 4)" in notes
    assert not [n for n in load_jsonl(_write(tmp_path, _records())).report.notes if n.startswith("warning")]
