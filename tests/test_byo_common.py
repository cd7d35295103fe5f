"""bench/lib/byo_common.py: the paired comparison of bfr against each reference ranking."""

from __future__ import annotations

import bench.lib.byo_common as B
from bfr_core.evaluation.stats import mcnemar_exact_p


def _rows(system: str, k: int, hits: list[int]) -> list[dict]:
    return [{"system": system, "k": k, "question_id": f"q{i}", "turn_hit": h} for i, h in enumerate(hits)]


def test_paired_counts_the_questions_only_one_side_holds_on_the_same_questions():
    rows = (_rows("bfr", 10, [1, 1, 0, 0, 1]) + _rows("ref:dense", 10, [1, 0, 1, 1, 1])
            + _rows("ref:bm25", 10, [0, 0, 0, 0])  # one question fewer: only the shared four count
            + _rows("mem0", 10, [1, 1, 1, 1, 1]))  # an arm, not a reference: not compared
    out = B.paired(rows)
    dense = out["10"]["ref:dense"]
    assert (dense["n"], dense["bfr_only"], dense["reference_only"]) == (5, 1, 2)
    assert dense["difference_points"] == -20.0 and dense["mcnemar_p"] == round(mcnemar_exact_p(1, 2), 4)
    bm25 = out["10"]["ref:bm25"]
    assert (bm25["n"], bm25["bfr_only"], bm25["reference_only"], bm25["difference_points"]) == (4, 2, 0, 50.0)
    assert set(out["10"]) == {"ref:dense", "ref:bm25"}
    assert B.paired(_rows("ref:dense", 10, [1])) == {}  # no bfr rows: nothing to pair


def test_code_fingerprint_follows_every_source_and_its_path(tmp_path):
    (tmp_path / "a.py").write_text("x = 1\n"), (tmp_path / "sub").mkdir(), (tmp_path / "sub" / "b.py").write_text("")
    (tmp_path / "notes.txt").write_text("not code")
    first = B.code_fingerprint(tmp_path)
    assert first == B.code_fingerprint(tmp_path) and len(first) == 16
    (tmp_path / "notes.txt").write_text("changed")
    assert B.code_fingerprint(tmp_path) == first  # only Python sources count
    (tmp_path / "a.py").write_text("x = 2\n")
    second = B.code_fingerprint(tmp_path)
    assert second != first
    (tmp_path / "sub" / "b.py").rename(tmp_path / "b.py")  # the same bytes under another path
    assert B.code_fingerprint(tmp_path) != second
