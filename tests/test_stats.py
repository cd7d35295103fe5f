"""bfr_core.evaluation.stats: McNemar, paired bootstrap, Holm, the Wilson interval, Cohen's kappa and the confusion matrix."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from bfr_core.evaluation import stats as s

# --------------------------------------------------------------------------------------------
# Exact McNemar
# --------------------------------------------------------------------------------------------


def _binomial_two_sided(b: int, c: int) -> float:
    """Direct computation: 2 * P[X <= min(b, c)], X ~ Bin(b + c, 1/2), in floats, capped at 1."""
    n = b + c
    tail = sum(math.comb(n, i) * 0.5**n for i in range(min(b, c) + 1))
    return min(1.0, 2 * tail)


def test_mcnemar_paper_values():
    # Appendix P: 13 to 0 -> p = 2.4e-4; multi-session 7 to 0 -> raw p = 0.016, x6 = 0.094.
    assert s.mcnemar_exact_p(13, 0) == 2 / 2**13 == pytest.approx(2.4e-4, rel=0.02)
    assert s.mcnemar_exact_p(0, 7) == 2 / 2**7 == 0.015625
    assert 6 * s.mcnemar_exact_p(7, 0) == pytest.approx(0.094, abs=5e-4)


def test_mcnemar_hand_computed_and_capped():
    # n = 13, min = 3: C(13,0..3) = 1 + 13 + 78 + 286 = 378 -> 2 * 378 / 8192
    assert s.mcnemar_exact_p(10, 3) == 756 / 8192
    assert s.mcnemar_exact_p(5, 5) == 1.0  # 2 * 638/1024 > 1, capped
    assert s.mcnemar_exact_p(0, 0) == 1.0
    with pytest.raises(ValueError):
        s.mcnemar_exact_p(-1, 2)


@given(st.integers(0, 80), st.integers(0, 80))
def test_mcnemar_matches_direct_binomial(b, c):
    p = s.mcnemar_exact_p(b, c)
    ref = 1.0 if b + c == 0 else _binomial_two_sided(b, c)
    assert p == pytest.approx(ref, rel=1e-12)
    assert p == s.mcnemar_exact_p(c, b)


def test_mcnemar_matches_scipy_binomtest():
    stats = pytest.importorskip("scipy.stats")
    for b, c in [(13, 0), (10, 3), (40, 25), (1, 1), (120, 90)]:
        assert s.mcnemar_exact_p(b, c) == pytest.approx(stats.binomtest(b, b + c, 0.5).pvalue, rel=1e-12)


def test_mcnemar_on_paired_outcomes():
    x = [1, 1, 1, 0, 0, 1, 1, 0]
    y = [1, 0, 0, 0, 1, 0, 1, 0]
    r = s.mcnemar_exact(x, y)
    assert (r.n, r.x_only, r.y_only) == (8, 3, 1)
    assert r.p_value == s.mcnemar_exact_p(3, 1) == 0.625  # 2 * (1 + 4) / 16
    assert r.delta == pytest.approx(0.25)
    with pytest.raises(ValueError):
        s.mcnemar_exact([1], [1, 0])
    with pytest.raises(ValueError):
        s.mcnemar_exact([], [])


# --------------------------------------------------------------------------------------------
# Paired bootstrap
# --------------------------------------------------------------------------------------------

_X = np.random.default_rng(1).random(137)
_Y = np.clip(_X - 0.1 + 0.2 * np.random.default_rng(2).random(137), 0, 1)


def test_bootstrap_is_deterministic_and_matches_the_two_line_reference():
    a = s.paired_bootstrap(_X.tolist(), _Y.tolist())
    b = s.paired_bootstrap(_X, _Y)
    assert a == b
    assert (a.n, a.n_resamples, a.seed, a.confidence) == (137, 10_000, 20260908, 0.95)
    assert a.delta == pytest.approx(float(np.mean(_X - _Y)))
    idx = np.random.default_rng(20260908).integers(0, 137, size=(10_000, 137))
    low, high = np.percentile((_X - _Y)[idx].mean(axis=1), [2.5, 97.5])
    assert (a.ci_low, a.ci_high) == (low, high)
    assert a.ci_low < a.delta < a.ci_high


def test_bootstrap_seed_and_resamples_matter():
    base = s.paired_bootstrap(_X, _Y)
    other = s.paired_bootstrap(_X, _Y, seed=1)
    assert other.delta == base.delta and (other.ci_low, other.ci_high) != (base.ci_low, base.ci_high)
    narrow = s.paired_bootstrap(_X, _Y, confidence=0.5, n_resamples=2_500)
    assert base.ci_low < narrow.ci_low < narrow.ci_high < base.ci_high


def test_bootstrap_constant_difference_has_a_point_interval():
    r = s.paired_bootstrap([0.5, 0.75, 1.0], [0.25, 0.5, 0.75])
    assert (r.delta, r.ci_low, r.ci_high) == (0.25, 0.25, 0.25)


def test_bootstrap_rejects_bad_input():
    for x, y in [([1.0], [1.0, 2.0]), ([], []), ([float("nan")], [0.0])]:
        with pytest.raises(ValueError):
            s.paired_bootstrap(x, y)
    with pytest.raises(ValueError):
        s.paired_bootstrap([1.0], [0.0], confidence=1.0)


def test_bootstrap_does_not_mutate_inputs():
    x, y = [0.1, 0.9, 0.4], [0.2, 0.3, 0.4]
    s.paired_bootstrap(x, y, n_resamples=50)
    assert (x, y) == ([0.1, 0.9, 0.4], [0.2, 0.3, 0.4])


# --------------------------------------------------------------------------------------------
# Holm
# --------------------------------------------------------------------------------------------


def test_holm_textbook_example():
    # Four hypotheses, p = 0.01, 0.04, 0.03, 0.005 (the Holm-Bonferroni example on Wikipedia).
    # Sorted: 0.005*4 = 0.02, 0.01*3 = 0.03, 0.03*2 = 0.06, 0.04*1 = 0.04 -> running max 0.06.
    adjusted = s.holm([0.01, 0.04, 0.03, 0.005])
    assert adjusted == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert [p <= 0.05 for p in adjusted] == [True, False, False, True]  # rejects H1 and H4


def test_holm_caps_at_one_and_handles_edge_cases():
    assert s.holm([0.5, 0.6]) == [1.0, 1.0]
    assert s.holm([]) == []
    assert s.holm([0.02]) == [0.02]
    assert s.holm([0.01, 0.01, 0.04]) == pytest.approx([0.03, 0.03, 0.04])
    for bad in ([1.2], [-0.1], [float("nan")]):
        with pytest.raises(ValueError):
            s.holm(bad)


@given(st.lists(st.floats(0, 1), max_size=12))
def test_holm_properties(p):
    adj = s.holm(p)
    assert len(adj) == len(p)
    assert all(raw <= a <= 1.0 for raw, a in zip(p, adj, strict=True))
    for i in range(len(p)):
        for j in range(len(p)):
            if p[i] <= p[j]:
                assert adj[i] <= adj[j]  # monotone in the raw p-values


# --------------------------------------------------------------------------------------------
# Wilson interval
# --------------------------------------------------------------------------------------------


def test_wilson_hand_computed():
    # 46 / 48 at 95%: z = 1.959964, centre 0.924371, half-width 0.064127 (from the formula by hand)
    lo, hi = s.wilson_interval(46, 48)
    assert (round(lo, 4), round(hi, 4)) == (0.8602, 0.9885)


def test_wilson_matches_scipy():
    stats = pytest.importorskip("scipy.stats")
    for k, n, conf in [(46, 48, 0.95), (47, 48, 0.95), (0, 10, 0.95), (10, 10, 0.9), (1309, 1536, 0.99), (3, 7, 0.5)]:
        ci = stats.binomtest(k, n).proportion_ci(conf, method="wilson")
        assert s.wilson_interval(k, n, conf) == pytest.approx((ci.low, ci.high), abs=1e-12)


@given(st.integers(1, 500).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))))
def test_wilson_holds_the_point_and_stays_in_unit_interval(kn):
    k, n = kn
    lo, hi = s.wilson_interval(k, n)
    assert 0.0 <= lo <= k / n <= hi <= 1.0
    assert lo < hi  # never degenerate, even at 0 / n and n / n


def test_wilson_rejects_bad_input():
    for k, n in [(3, 2), (-1, 5), (0, 0)]:
        with pytest.raises(ValueError):
            s.wilson_interval(k, n)
    with pytest.raises(TypeError):
        s.wilson_interval(1.0, 2)  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        s.wilson_interval(1, 2, 1.0)


# --------------------------------------------------------------------------------------------
# Agreement
# --------------------------------------------------------------------------------------------


def _ratings(pairs: dict[tuple[str, str], int]) -> tuple[list[str], list[str]]:
    a, b = [], []
    for (u, v), n in pairs.items():
        a += [u] * n
        b += [v] * n
    return a, b


def test_kappa_textbook_two_by_two():
    # 50 items: yes/yes 20, yes/no 5, no/yes 10, no/no 15. p_o = 0.7; A says yes 25/50, B 30/50:
    # p_e = 0.5*0.6 + 0.5*0.4 = 0.5; kappa = (0.7 - 0.5) / 0.5 = 0.4.
    a, b = _ratings({("yes", "yes"): 20, ("yes", "no"): 5, ("no", "yes"): 10, ("no", "no"): 15})
    assert s.cohen_kappa(a, b) == pytest.approx(0.4)
    cm = s.confusion_matrix(a, b)
    assert cm.labels == ("no", "yes") and cm.counts == ((15, 10), (5, 20))
    assert cm.total == 50 and cm.agreement == pytest.approx(0.7)


def test_kappa_three_labels_hand_computed():
    a = ["x", "x", "y", "y", "z", "z"]
    b = ["x", "y", "y", "y", "z", "x"]
    # p_o = 4/6; marginals A (2,2,2), B (2,3,1): p_e = (4 + 6 + 2)/36 = 1/3; kappa = (1/3)/(2/3)
    assert s.cohen_kappa(a, b) == pytest.approx(0.5)


def test_kappa_matches_sklearn():
    sk = pytest.importorskip("sklearn.metrics")
    rng = np.random.default_rng(7)
    labels = ["sufficient", "insufficient", "uncertain"]
    for _ in range(20):
        a = rng.choice(labels, 30).tolist()
        b = [u if rng.random() < 0.6 else rng.choice(labels) for u in a]
        assert s.cohen_kappa(a, b) == pytest.approx(sk.cohen_kappa_score(a, b), abs=1e-12)


def test_kappa_degenerate_and_extreme_cases():
    same = ["sufficient"] * 5
    assert s.cohen_kappa(same, same) == 1.0  # p_e = 1: documented choice, no division
    assert math.isnan(s.cohen_kappa(same, same, degenerate=float("nan")))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # and no RuntimeWarning from a 0/0
        s.cohen_kappa(same, same)
    # One rater constant, the other not: p_e = p_(B=s) = 3/4 = p_o -> kappa 0, well defined.
    assert s.cohen_kappa(["s", "s", "s", "s"], ["s", "s", "i", "s"]) == 0.0
    assert s.cohen_kappa(["y", "n"], ["n", "y"]) == -1.0
    assert s.cohen_kappa([True, False, True], [True, False, True]) == 1.0


def test_confusion_matrix_labels():
    cm = s.confusion_matrix(["a", "b"], ["b", "b"], labels=["b", "a", "c"])
    assert cm.labels == ("b", "a", "c")
    assert cm.counts == ((1, 0, 0), (1, 0, 0), (0, 0, 0))
    with pytest.raises(ValueError):
        s.confusion_matrix(["a", "z"], ["a", "a"], labels=["a"])
    mixed = s.confusion_matrix([1, "x"], ["x", 1])  # unorderable: first-appearance order
    assert mixed.labels == (1, "x") and mixed.counts == ((0, 1), (1, 0))
    with pytest.raises(ValueError):
        s.cohen_kappa([], [])


def test_mcnemar_by_key_pairs_the_shared_keys_only():
    from bfr_core.evaluation.stats import mcnemar_by_key, mcnemar_exact

    x = {"a": True, "b": True, "c": False, "only-x": True}
    y = {"c": True, "b": False, "a": True, "only-y": False}
    m = mcnemar_by_key(x, y)
    assert m == mcnemar_exact([True, True, False], [True, False, True])  # a, b, c in key order
    assert (m.n, m.x_only, m.y_only) == (3, 1, 1)
    none = mcnemar_by_key({"a": True}, {"b": True})
    assert (none.n, none.p_value, none.delta) == (0, 1.0, 0.0)
