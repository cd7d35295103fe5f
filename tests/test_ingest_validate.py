"""bfr_core.ingest.validate: refusals (one line naming file, record, field) and repairs (with a note)."""

from __future__ import annotations

from datetime import datetime

import pytest

from bfr_core.errors import InputError
from bfr_core.ingest.validate import validate
from bfr_core.records import Bundle, IngestReport, Question, Scope, Session, Turn

D1, D2 = datetime(2024, 1, 1), datetime(2024, 1, 2)


def bundle(scopes: list[Scope], questions: list[Question] | None = None, sessions=("s1", "s2", "s3")) -> Bundle:
    turns = tuple(Turn(f"{s}_1", s, 0, "user", f"text of {s}") for s in sessions if s != "s3")  # s3: no turns
    qs = tuple(questions if questions is not None else
               [Question("d", f"q-{sc.scope_id}", sc.scope_id, "?", "a", "t") for sc in scopes])
    report = IngestReport("d", "jsonl", "f.jsonl", len(scopes), len(sessions), len(turns), len(qs), len(qs),
                          ("loader note",), (("t", len(qs)),))
    return Bundle("d", "jsonl", "f.jsonl", "0" * 64, tuple(Session(s, None) for s in sessions), turns,
                  tuple(scopes), qs, report)


def test_a_sound_bundle_is_returned_as_it_is():
    b = bundle([Scope("d", "c1", ("s1", "s2"))])
    assert validate(b) is b


def test_a_session_repeated_in_one_scope_keeps_its_first_occurrence_and_date():
    b = validate(bundle([Scope("d", "c1", ("s2", "s1", "s2", "s2"), (), (D2, D1, None, None)),
                         Scope("d", "c2", ("s1",))]))
    assert b.scopes[0].session_ids == ("s2", "s1") and b.scopes[0].session_dates == (D2, D1)
    assert b.scopes[1] == Scope("d", "c2", ("s1",))
    assert b.report.notes[0] == "loader note"
    assert b.report.notes[1] == ("repeated sessions: 2 repeat(s) of a session within one scope removed, the first "
                                 "occurrence kept (1 scope(s): 'c1')")


@pytest.mark.parametrize("empty", [(), ("s3",), ("s3", "s3")], ids=["no sessions", "no turns", "repeated, no turns"])
def test_a_scope_with_nothing_to_search_is_dropped_with_its_questions(empty):
    b = validate(bundle([Scope("d", "c1", ("s1",)), Scope("d", "c0", empty)]))
    assert [s.scope_id for s in b.scopes] == ["c1"] and [q.question_id for q in b.questions] == ["q-c1"]
    assert (b.report.scopes, b.report.questions, b.report.scoreable, b.report.by_type) == (1, 1, 1, (("t", 1),))
    assert "empty scopes: 1 scope(s) without sessions or turns dropped with their 1 question(s) ('q-c0')" in \
        b.report.notes[-1]
    assert len(b.sessions) == 3  # sessions are data: kept


@pytest.mark.parametrize(("scopes", "questions", "says"), [
    ([Scope("d", "c1", ("s1", "nope"))], None,
     "f.jsonl, record scope 'c1', field 'sessions[1]': scope 'c1' lists session 'nope'"),
    ([Scope("d", "c1", ("s1",))], [Question("d", "q1", "c9", "?", "a", "t")],
     "f.jsonl, record question 'q1', field 'scope': unknown scope 'c9' (1 scopes: 'c1')"),
    ([Scope("d", "c1", ()), Scope("d", "c2", ("s3",))], None,
     "f.jsonl, field 'sessions': no question has anything to search"),
])
def test_refusals_name_file_record_and_field(scopes, questions, says):
    with pytest.raises(InputError) as err:
        validate(bundle(scopes, questions))
    assert str(err.value).startswith(says) and "\n" not in str(err.value)


def test_blank_turns_are_kept_with_a_warning_naming_them():
    b = bundle([Scope("d", "c1", ("s1", "s2"))])
    blank = Turn("s1_2", "s1", 1, "user", "  \n ")
    out = validate(Bundle(b.dataset_id, b.kind, b.source, b.source_sha256, b.sessions, (*b.turns, blank), b.scopes,
                          b.questions, b.report))
    assert len(out.turns) == 3
    warning = [n for n in out.report.notes if n.startswith("warning:")]
    assert len(warning) == 1 and "1 turn(s) with blank text kept ('s1_2')" in warning[0]
