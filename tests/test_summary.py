"""evaluation.summary: the per-arm means of a run's rows."""

from __future__ import annotations

from bfr_core.evaluation.summary import arm_summary

BASE = {"gold_hit": 1.0, "turn_hit": 1.0, "er": 1.0, "cer": 1.0, "recall_all": 1.0, "gold_n": 1,
        "set_size": 10, "calls": 1, "f1": 0.5, "suff": None, "status": "ok", "llm_ms": None}


def test_undecided_judgments_are_left_out_of_j_and_counted_apart():
    base = BASE
    rows = [{**base, "judge": j} for j in ("CORRECT", "WRONG", "UNDECIDED", "UNDECIDED", None)]
    s = arm_summary(rows)
    assert s["judge"] == 50.0 and s["judge_undecided"] == 2
    assert arm_summary([{**base, "judge": None}])["judge_undecided"] is None  # not judged: no count


def test_recall_all_skips_questions_without_gold_and_suff_skips_uncertain():
    rows = [{**BASE, "judge": None, "recall_all": 0.0, "gold_n": 0},
            {**BASE, "judge": None, "suff": "sufficient"}, {**BASE, "judge": None, "suff": "uncertain"},
            {**BASE, "judge": None, "suff": "insufficient", "status": "failed"}]
    s = arm_summary(rows)
    assert s["recall_all"] == 100.0 and s["suff"] == 50.0 and s["failed"] == 1 and s["n"] == 4
