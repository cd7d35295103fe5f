"""bench/lib/ours_runs.py: bfr paired against every other top-k ranking of the curve."""

from __future__ import annotations

import bench.lib.ours_runs as B


def test_paired_compares_bfr_with_every_other_ranking_on_the_same_questions():
    hits = {"bfr": {"q1": True, "q2": True, "q3": False},
            "dense top-k (amem)": {"q1": True, "q2": False, "q3": True},
            "bfr-mv (grid)": {}}  # no rows at this size: nothing to pair
    out = B.paired(hits)
    assert set(out) == {"dense top-k (amem)"}
    assert out["dense top-k (amem)"] == {"n": 3, "bfr_only": 1, "reference_only": 1, "difference_points": 0.0,
                                         "mcnemar_p": 1.0}
    assert B.paired({"bfr": {}, "x": {"q": True}}) == {}
