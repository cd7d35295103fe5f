"""LongMemEval loader: the dev50 sample, plus synthetic files for shared sessions and bad input."""

from __future__ import annotations

import copy
import gzip
import json
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from bfr_core.dates import parse_lme_date
from bfr_core.errors import InputError
from bfr_core.ingest.common import load_json, sha256_file
from bfr_core.ingest.longmemeval import load_items, load_longmemeval
from bfr_core.ingest.sources import data_dir
from bfr_core.store import Store

DATA = data_dir()
DEV50 = DATA / "longmemeval_s_dev50.json.gz"
needs_dev50 = pytest.mark.skipif(not DEV50.is_file(), reason=f"{DEV50} not available")


@pytest.fixture(scope="module")
def bundle():
    if not DEV50.is_file():
        pytest.skip(f"{DEV50} not available")
    return load_longmemeval(DEV50)


# -- the dev50 sample -----------------------------------------------------------------------------


@pytest.mark.slow
@needs_dev50
def test_dev50_counts(bundle) -> None:
    r = bundle.report
    assert (r.scopes, r.questions, r.scoreable) == (50, 50, 50)
    assert (r.sessions, r.turns) == (2327, 23958)
    assert bundle.extra == {"haystack_entries": 2394, "shared_sessions": 64, "redated_sessions": 64}
    assert dict(r.by_type) == {"multi-session": 9, "temporal-reasoning": 9, "knowledge-update": 8,
                               "single-session-user": 8, "single-session-assistant": 8,
                               "single-session-preference": 8}
    abstention = {q.question_id for q in bundle.questions if q.is_abstention}
    assert abstention == {"29f2956b_abs", "0ddfec37_abs"}
    assert all(not q.gold for q in bundle.questions if q.is_abstention)
    assert len({t.turn_id for t in bundle.turns}) == len(bundle.turns)


@pytest.mark.slow
@needs_dev50
def test_dev50_b3c15d39(bundle) -> None:
    q = next(q for q in bundle.questions if q.question_id == "b3c15d39")
    assert set(q.gold) == {"answer_05d808e6_1_11", "answer_05d808e6_2_1"}
    assert (q.qtype, q.date, q.scope_id) == ("multi-session", datetime(2023, 3, 1, 23, 48), "b3c15d39")
    scope = next(s for s in bundle.scopes if s.scope_id == "b3c15d39")
    assert len(scope.session_ids) == 51
    assert (scope.session_ids[0], scope.session_ids[28]) == ("answer_05d808e6_1", "answer_05d808e6_2")
    turns = {t.turn_id: t for t in bundle.turns}
    order = turns["answer_05d808e6_1_11"]
    assert (order.idx, order.speaker, order.session_id) == (10, "user", "answer_05d808e6_1")
    assert "February 5th" in order.text
    assert "February 10th" in turns["answer_05d808e6_2_1"].text


@pytest.mark.slow
@needs_dev50
def test_dev50_per_scope_dates_survive_the_store(bundle) -> None:
    store = Store(":memory:")
    store.write_bundle(bundle)
    assert store.counts("longmemeval")["turns"] == 23958
    # a session shared by two haystacks is stored once but dated per haystack
    where: dict[str, list[tuple[str, datetime | None]]] = {}
    for s in bundle.scopes:
        for sid, d in zip(s.session_ids, s.session_dates, strict=True):
            where.setdefault(sid, []).append((s.scope_id, d))
    sid, places = next((k, v) for k, v in where.items() if len({d for _, d in v}) > 1)
    for scope_id, date in places:
        dated = {t.date for t in store.scope_turns("longmemeval", scope_id) if t.session_id == sid}
        assert dated == {date}
    assert store.scope("longmemeval", places[0][0]).session_dates  # read back too


@pytest.mark.slow
@needs_dev50
def test_dev50_streaming_equals_the_whole_file_path(bundle) -> None:
    whole = load_items(DEV50, load_json(DEV50), sha256=sha256_file(DEV50))
    assert bundle == whole and bundle.extra == whole.extra
    assert bundle.source_sha256 == "104946f7122eb66f0235630b562ec95b30c414763dd19aad30d17a98d25e0f16"


# -- synthetic files ------------------------------------------------------------------------------


def _item(qid: str, sessions: list[tuple[str, str, list[dict[str, Any]]]], **over: Any) -> dict[str, Any]:
    item = {
        "question_id": qid, "question_type": "single-session-user", "question": f"what about {qid}?",
        "question_date": "2023/05/30 (Tue) 23:40", "answer": "yes",
        "answer_session_ids": [s[0] for s in sessions if s[0].startswith("answer_")],
        "haystack_dates": [s[1] for s in sessions], "haystack_session_ids": [s[0] for s in sessions],
        "haystack_sessions": [s[2] for s in sessions],
    }
    item.update(over)
    return item


def _turns(*texts: str, gold: int | None = None) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for i, text in enumerate(texts):
        t: dict[str, Any] = {"role": "user" if i % 2 == 0 else "assistant", "content": text}
        if gold is not None:
            t["has_answer"] = i == gold
        out.append(t)
    return out


SHARED = ("sharegpt_x_0", "2023/05/20 (Sat) 02:21", _turns("hi", "hello"))


def _data() -> list[dict[str, Any]]:
    return [
        _item("q1", [SHARED, ("answer_a_1", "2023/05/21 (Sun) 10:00", _turns("I bought a kite", "nice", gold=0))]),
        _item("q2_abs", [("answer_b_1", "2023/05/22 (Mon) 09:00", _turns("x", "y", gold=-1)),
                         (SHARED[0], "2023/05/25 (Thu) 08:00", copy.deepcopy(SHARED[2]))], answer=3),
    ]


def _write(tmp_path: Path, data: Any, name: str = "lme.json") -> Path:
    p = tmp_path / name
    raw = json.dumps(data).encode()
    p.write_bytes(gzip.compress(raw, mtime=0) if name.endswith(".gz") else raw)
    return p


@pytest.mark.parametrize("name", ["lme.json", "lme.json.gz"])
def test_synthetic_shared_sessions(tmp_path: Path, name: str) -> None:
    b = load_longmemeval(_write(tmp_path, _data(), name))
    assert [s.session_id for s in b.sessions] == ["sharegpt_x_0", "answer_a_1", "answer_b_1"]
    assert len(b.turns) == 6
    q1, q2 = b.questions
    assert q1.gold == ("answer_a_1_1",) and not q1.is_abstention
    assert q2.gold == () and q2.is_abstention and q2.answer == "3" and q2.scoreable
    assert b.scopes[1].session_ids == ("answer_b_1", "sharegpt_x_0")
    assert b.scopes[1].session_dates[1] == datetime(2023, 5, 25, 8, 0)
    assert b.sessions[0].date == datetime(2023, 5, 20, 2, 21)  # first seen
    assert b.turns[0].speaker == "user" and b.turns[1].turn_id == "sharegpt_x_0_2"


def test_conflicting_session_names_both_questions(tmp_path: Path) -> None:
    data = _data()
    data[1]["haystack_sessions"][1][1]["content"] = "hello there"
    with pytest.raises(InputError) as err:
        load_longmemeval(_write(tmp_path, data))
    msg = str(err.value)
    assert "session 'sharegpt_x_0'" in msg and "question 0 (q1)" in msg and "question 1 (q2_abs)" in msg
    assert err.value.field == "haystack_sessions[1]"


@pytest.mark.parametrize(
    ("mutate", "field"),
    [
        (lambda d: d[1]["haystack_sessions"][0][1].update(content=5), "haystack_sessions[0][1].content"),
        (lambda d: d[1]["haystack_sessions"][0][0].pop("role"), "haystack_sessions[0][0].role"),
        (lambda d: d[1]["haystack_sessions"][0][0].update(has_answer="yes"), "haystack_sessions[0][0].has_answer"),
        (lambda d: d[1]["haystack_sessions"].__setitem__(0, "oops"), "haystack_sessions[0]"),
        (lambda d: d[1]["haystack_dates"].pop(), "haystack_sessions"),
        (lambda d: d[1].pop("question"), "question"),
        (lambda d: d[1].update(answer=None), "answer"),
        (lambda d: d[1]["haystack_session_ids"].__setitem__(0, 7), "haystack_session_ids[0]"),
    ],
)
def test_bad_fields_name_record_and_field(tmp_path: Path, mutate, field: str) -> None:
    data = _data()
    mutate(data)
    path = _write(tmp_path, data)
    with pytest.raises(InputError) as err:
        load_longmemeval(path)
    assert (err.value.record, err.value.field) == ("question 1 (q2_abs)", field)
    assert str(path) in str(err.value)


def test_duplicate_question_and_wrong_shape(tmp_path: Path) -> None:
    data = _data()
    data[1]["question_id"] = "q1"
    with pytest.raises(InputError, match="duplicate question"):
        load_longmemeval(_write(tmp_path, data))
    with pytest.raises(InputError, match="looks like a locomo file"):
        load_longmemeval(_write(tmp_path, [{"sample_id": "c", "conversation": {}, "qa": []}]))


def test_parse_lme_date() -> None:
    assert parse_lme_date("2023/05/20 (Sat) 02:21") == datetime(2023, 5, 20, 2, 21)
    assert parse_lme_date("2023/05/20") == datetime(2023, 5, 20)
    assert parse_lme_date("20 May 2023") is None


# -- streaming (the file is never held whole) --------------------------------------------------------


def _whole(path: Path):
    return load_items(path, load_json(path), sha256=sha256_file(path))


@pytest.mark.parametrize("name", ["lme.json", "lme.json.gz"])
def test_streaming_equals_the_whole_file_path(tmp_path: Path, name: str) -> None:
    data = _data() + [_item(f"n{i}", [SHARED], answer=answer) for i, answer in enumerate([1e5, 2.5, 10**30, -0.0])]
    data[0]["haystack_sessions"][0] = [dict(reversed(t.items())) for t in data[0]["haystack_sessions"][0]]
    path = _write(tmp_path, data, name)
    streamed, whole = load_longmemeval(path), _whole(path)
    assert streamed == whole and streamed.extra == whole.extra
    assert [q.answer for q in streamed.questions][1:] == ["3", "100000.0", "2.5", str(10**30), "-0.0"]
    assert streamed.source_sha256 == sha256_file(path)


def test_malformed_mid_file_names_file_and_question(tmp_path: Path) -> None:
    data = [_item(f"q{i}", [(f"s{i}", "2023/05/20 (Sat) 02:21", _turns("x" * 5000, "y"))]) for i in range(40)]
    raw = json.dumps(data).encode()
    at = raw.index(b'"q30"')
    path = tmp_path / "cut.json"
    path.write_bytes(raw[:at] + b"{" + raw[at:])
    with pytest.raises(InputError) as err:
        load_longmemeval(path)
    assert err.value.record == "question 30" and str(path) in str(err.value)
    assert "malformed JSON in bytes" in str(err.value) and "\n" not in str(err.value)


@pytest.mark.parametrize(
    "raw",
    [b'{"question_id": "q"}', b'"text"', b"[]", b"[1, 2]",
     json.dumps([{"sample_id": "c", "conversation": {}, "qa": []}]).encode(),
     b'{"type": "question", "id": "q"}\n{"type": "turn"}\n'],
)
def test_wrong_shape_gives_the_whole_file_message(tmp_path: Path, raw: bytes) -> None:
    path = tmp_path / "x.json"
    path.write_bytes(raw)
    with pytest.raises(InputError) as streamed:
        load_longmemeval(path)
    with pytest.raises(InputError) as whole:
        _whole(path)
    assert str(streamed.value) == str(whole.value) and "\n" not in str(streamed.value)


@pytest.mark.parametrize("name", ["lme.json", "lme.json.gz"])
def test_progress_counts_the_file_bytes_to_its_size(tmp_path: Path, name: str) -> None:
    data = [_item(f"q{i}", [(f"s{i}", "2023/05/20 (Sat) 02:21", _turns(f"{i} " * 20_000, "y"))]) for i in range(300)]
    path = _write(tmp_path, data, name)
    calls: list[tuple[int, int, str]] = []
    load_longmemeval(path, progress=lambda done, total, label: calls.append((done, total, label)))
    size = path.stat().st_size
    assert calls[-1] == (size, size, "q299")
    assert all(total == size for _, total, _ in calls)
    assert [d for d, _, _ in calls] == sorted(d for d, _, _ in calls) and len({d for d, _, _ in calls}) == len(calls)
    assert 10 < len(calls) <= 101 and sum(d == size for d, _, _ in calls) == 1


def test_a_file_without_has_answer_flags_warns_that_turn_gold_is_missing(tmp_path: Path):
    plain = [_item("q1", [("answer_a_1", "2023/05/21 (Sun) 10:00", _turns("I bought a kite", "nice"))])]
    notes = load_longmemeval(_write(tmp_path, plain)).report.notes
    assert any(n.startswith("warning:") and "has_answer" in n for n in notes)
    assert not [n for n in load_longmemeval(_write(tmp_path, _data(), "ok.json")).report.notes if n.startswith("warning:")]
