"""bench/lib/session_spread.py: the round-robin re-ordering over sessions and the figures it reports."""

from __future__ import annotations

import numpy as np
from test_bench_lib_selection import _cases

import bench.lib.session_spread as B
from bfr_core.method import variants as V


def test_round_robin_takes_every_sessions_best_turn_before_any_second():
    order = np.array([4, 5, 0, 6, 1, 2, 3])  # best first
    session = np.array([0, 0, 1, 1, 2, 2, 2])  # turns 0-1 in session 0, 2-3 in 1, 4-6 in 2
    out = B.round_robin(order, session).tolist()
    assert out == [4, 0, 2, 5, 1, 3, 6]  # sessions 2, 0, 1 (their best turn's order), then their second, third
    assert sorted(out) == sorted(order.tolist())
    assert B.round_robin(np.array([], dtype=np.int64), session).tolist() == []


def test_figures_report_each_ordering_over_the_same_cases():
    cases = _cases(["c0", "c1"])
    fig = B.figures(cases, V.Variant())
    assert set(fig) == {"as ranked", "sessions round-robin", "sessions round-robin in the remark regime only"}
    for f in fig.values():
        assert set(f) == {"hit@10", "cer@10", "hit@40", "cer@40"} and all(0 <= v <= 100 for v in f.values())
    # both questions of the fakes are questions with words that stand out: the remark-only column is as ranked
    assert fig["sessions round-robin in the remark regime only"] == fig["as ranked"]
