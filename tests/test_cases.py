"""bfr_core.evaluation.cases: mining relevance-versus-sufficiency cases and gold ranks per view."""

import numpy as np

from bfr_core.evaluation.cases import Case, ResultRow, gold_ranks, mine_cases, premise


def _rows():
    return [
        # q1: top-k holds one of two gold turns at rank 2 of 10; bfr-mv holds both in 6
        ResultRow("q1", "mem0", ("a", "g1", *"cdefghij")), ResultRow("q1", "bfr-mv", ("g1", "g2", "x", "y", "z", "w")),
        # q2: three gold turns, top-k holds one; bfr-mv completes in 4
        ResultRow("q2", "mem0", ("h1", "b")), ResultRow("q2", "bfr-mv", ("h1", "h2", "h3", "b")),
        # q3: top-k holds both already (no case); q4: bfr-mv misses one (no case); q5: top-k holds none (no case)
        ResultRow("q3", "mem0", ("k1", "k2")), ResultRow("q3", "bfr-mv", ("k1", "k2")),
        ResultRow("q4", "mem0", ("m1",)), ResultRow("q4", "bfr-mv", ("m1",)),
        ResultRow("q5", "mem0", ("z",)), ResultRow("q5", "bfr-mv", ("n1", "n2")),
        # q6: like q1 but the held turn is at the cut-off (rank 10 of 10): less clear than q1
        ResultRow("q6", "mem0", (*"abcdefghi", "p1")), ResultRow("q6", "bfr-mv", ("p1", "p2", "x", "y", "z", "w")),
    ]


GOLD = {"q1": ["g1", "g2"], "q2": ["h1", "h2", "h3"], "q3": ["k1", "k2"], "q4": ["m1", "m2"], "q5": ["n1", "n2"],
        "q6": ["p1", "p2"]}


def test_mine_cases_finds_cer_zero_to_one_clearest_first():
    cases = mine_cases(_rows(), GOLD)
    assert [c.question_id for c in cases] == ["q1", "q6", "q2"]
    q1 = cases[0]
    assert q1 == Case("q1", "", "mem0", "bfr-mv", 2, 1, 10, 6, 2, 8)
    assert q1.clear_pair and not cases[2].clear_pair


def test_mine_cases_is_independent_of_row_order():
    rows = _rows()
    assert mine_cases(rows[::-1], GOLD) == mine_cases(rows, GOLD)


def test_gold_ranks_ties_by_turn_order():
    ranks = gold_ranks(np.array([0.5, 0.9, 0.5, 0.1]), ["t1", "t2", "t3", "t4"], ["t3", "t1", "missing"])
    assert ranks == {"t3": 3, "t1": 2}


def test_premise_per_view():
    p = {v.view: v for v in premise({"bm25": {"a": 2, "b": 7}, "dense": {"a": 1, "b": 40}}, 10)}
    assert not p["bm25"].holds and p["bm25"].inside == ("a", "b")
    assert p["dense"].holds and p["dense"].inside == ("a",) and p["dense"].outside == ("b",)
