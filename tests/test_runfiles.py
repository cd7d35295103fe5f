"""Run files: format detection, TREC ordering, JSONL and LongMemEval log parsing, errors naming the line."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from bfr_core.errors import InputError
from bfr_core.evaluation.runfiles import detect, read_run, write_qrels, write_trec


def _w(tmp_path: Path, text: str, name: str = "run.txt") -> Path:
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


def test_trec_orders_by_score_then_rank_then_line(tmp_path: Path) -> None:
    p = _w(tmp_path, "q1 Q0 b 2 5.0 sys\nq1 Q0 a 1 9.0 sys\nq1 Q0 c 3 5.0 sys\nq2 Q0 z 1 1 sys\n")
    fmt, subs = read_run(p)
    assert fmt == "trec" and subs["q1"].ids == ("a", "b", "c") and subs["q1"].scores == (9.0, 5.0, 5.0)
    assert subs["q2"].ids == ("z",)


def test_trec_errors_and_tags(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="line 2.*expected 6 fields"):
        read_run(_w(tmp_path, "q1 Q0 a 1 2 s\nq1 Q0 b 2\n"), "trec")
    with pytest.raises(InputError, match="line 2.*docid 'a' twice"):
        read_run(_w(tmp_path, "q1 Q0 a 1 2 s\nq1 Q0 a 2 1 s\n"), "trec")
    two = _w(tmp_path, "q1 Q0 a 1 2 s1\nq1 Q0 b 1 2 s2\n")
    with pytest.raises(InputError, match="2 systems"):
        read_run(two)
    assert read_run(two, tag="s2")[1]["q1"].ids == ("b",)
    with pytest.raises(InputError, match="no system 'x'"):
        read_run(two, tag="x")


def test_jsonl_ranking_and_evidence(tmp_path: Path) -> None:
    rows = [{"question_id": "q1", "ranking": ["a", "b"], "scores": [2, 1]}, {"question_id": "q2", "evidence": ["c"]}]
    p = _w(tmp_path, "\n".join(json.dumps(r) for r in rows), "run.jsonl")
    fmt, subs = read_run(p)
    assert fmt == "jsonl" and subs["q1"].is_ranking and subs["q1"].scores == (2.0, 1.0)
    assert not subs["q2"].is_ranking and subs["q2"].scores is None


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ({"question_id": "q", "ranking": ["a"], "evidence": ["a"]}, "exactly one of"),
        ({"question_id": "q", "ranking": ["a", "b"], "scores": [1]}, "1 scores for 2 ids"),
        ({"question_id": "q", "evidence": ["a"], "scores": [1]}, "'scores' goes with a 'ranking'"),
        ({"question_id": "q", "ranking": [1]}, "field 'ranking\\[0\\]'"),
        ({"question_id": "q", "rankings": []}, "unknown field"),
        ({"ranking": []}, "field 'question_id'"),
        ({"question_id": "q", "ranking": ["a", "b", "a"]}, "id 'a' twice \\(positions 0 and 2\\)"),
        ({"question_id": "q", "evidence": ["a", "a"]}, "id 'a' twice"),
    ],
)
def test_jsonl_errors_name_line_and_field(tmp_path: Path, row: dict, message: str) -> None:
    p = _w(tmp_path, json.dumps({"question_id": "ok", "evidence": []}) + "\n" + json.dumps(row), "run.jsonl")
    with pytest.raises(InputError, match=f"line 2.*{message}"):
        read_run(p)


def test_lme_log_renames_noans_and_detects(tmp_path: Path) -> None:
    row = {"question_id": "q1", "retrieval_results": {"ranked_items": [{"corpus_id": "noans_x_1_3"},
                                                                       {"corpus_id": "answer_x_1_1"}]}}
    p = _w(tmp_path, json.dumps(row) + "\n", "log")
    assert detect(p) == "lme"
    assert read_run(p)[1]["q1"].ids == ("answer_x_1_3", "answer_x_1_1")
    with pytest.raises(InputError, match="line 1.*ranked_items"):
        read_run(_w(tmp_path, json.dumps({"question_id": "q", "retrieval_results": {}}), "bad"), "lme")
    with pytest.raises(InputError, match="not a run file"):
        read_run(_w(tmp_path, "hello\n", "x"))


def test_writers(tmp_path: Path) -> None:
    buf = io.StringIO()
    assert write_trec(buf, [("sys", "q1", ["a", "b"], [1.0, 1.0])]) == 2  # ties: n..1 written instead
    assert buf.getvalue().splitlines() == ["q1 Q0 a 1 2 sys", "q1 Q0 b 2 1 sys"]
    p = _w(tmp_path, buf.getvalue())
    assert read_run(p)[1]["q1"].ids == ("a", "b")
    with pytest.raises(InputError, match="whitespace"):
        write_trec(io.StringIO(), [("sys", "q 1", ["a"], None)])
    out = io.StringIO()
    assert write_qrels(out, [("q1", ["a", "b"]), ("q2", [])]) == 2 and out.getvalue() == "q1 0 a 1\nq1 0 b 1\n"


def test_trec_refuses_a_score_that_is_not_a_finite_number(tmp_path: Path) -> None:
    """A NaN sort key leaves the list unsorted: file order, not scores, would decide the top k."""
    for bad in ("nan", "inf", "-Infinity"):
        with pytest.raises(InputError, match=f"line 2.*score '{bad}' is not a finite number"):
            read_run(_w(tmp_path, f"q1 Q0 a 4 0.1 s\nq1 Q0 b 1 {bad} s\nq1 Q0 c 2 5 s\n"), "trec")


def test_system_labels_on_some_lines_only_and_tag_on_a_log_are_refused(tmp_path: Path) -> None:
    rows = [{"question_id": "q1", "ranking": ["a"], "system": "A"}, {"question_id": "q2", "ranking": ["b"]}]
    mixed = _w(tmp_path, "\n".join(json.dumps(r) for r in rows), "run.jsonl")
    for tag in (None, "A"):
        with pytest.raises(InputError, match=r"some lines name a system \(A\) and some name none"):
            read_run(mixed, tag=tag)
    log = _w(tmp_path, json.dumps({"question_id": "q1", "retrieval_results": {"ranked_items": []}}) + "\n", "log")
    with pytest.raises(InputError, match="--tag does not apply"):
        read_run(log, tag="x")


def test_detect_reads_a_first_line_holding_a_line_separator(tmp_path: Path) -> None:
    p = _w(tmp_path, json.dumps({"question_id": "q\u2028x", "ranking": []}, ensure_ascii=False) + "\n", "run.jsonl")
    assert detect(p) == "jsonl"


@pytest.mark.parametrize(("text", "fmt", "why"), [
    ('{"question_id": "q1", "ranking": ["a"], "system": ["x"]}\n', "auto", "field 'system'.*expected a string"),
    ('{"question_id": "q1", "ranking": ["a"], "system": {"x": 1}}\n', "auto", "field 'system'.*expected a string"),
    ('{"question_id": "q1", "ranking": ["a"], "system": ["x"]}\n', "jsonl", "field 'system'"),
    ('{"question_id": "q1", "ranking": ["a"], "scores": [' + "9" * 400 + "]}\n", "auto",
     r"scores\[0\].*not a finite number"),
    ("[" * 100_000 + "]" * 100_000 + "\n", "auto", "not a run file"),
    ("[" * 100_000 + "]" * 100_000 + "\n", "jsonl", "nested too deeply"),
    ('{"question_id": "q1", "ranking": ["a"], "meta": ' + "7" * 5000 + "}\n", "auto", "more than 4,300 digits"),
    ("7" * 5000 + "\n", "auto", "not a run file"),
])
def test_odd_run_files_are_one_input_error(tmp_path: Path, text: str, fmt: str, why: str) -> None:
    with pytest.raises(InputError, match=why):
        read_run(_w(tmp_path, text), fmt)


def test_a_run_file_is_read_one_line_at_a_time(tmp_path: Path, monkeypatch) -> None:
    import bfr_core.ingest.common as common

    monkeypatch.setattr(common, "read_text", lambda *a: pytest.fail("read whole"))
    p = _w(tmp_path, "\ufeff" + "".join(json.dumps({"question_id": f"q{i}", "ranking": ["a", "b"], "system": "s"})
                                        + "\n\n" for i in range(3)))
    assert detect(p) == "jsonl" and list(read_run(p)[1]) == ["q0", "q1", "q2"]
    assert read_run(_w(tmp_path, "q1 Q0 a 1 2 s\r\n\nq1 Q0 b 2 1 s\n", "r.trec"))[1]["q1"].ids == ("a", "b")
