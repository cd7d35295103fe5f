"""bfr_core.fusion: the one ranking, z-score and the two fusions."""

from __future__ import annotations

import numpy as np

from bfr_core.fusion import RRF_C, rank_fusion, rank_order, ranks, rrf, z_fusion, zscore


def test_rank_order_breaks_ties_by_position():
    s = np.array([0.5, 0.9, 0.5, 0.1, 0.9])
    assert rank_order(s).tolist() == [1, 4, 0, 2, 3]
    assert rank_order(s, later_first=True).tolist() == [4, 1, 2, 0, 3]
    assert rank_order(np.zeros(0)).tolist() == []


def test_ranks_and_rrf():
    assert ranks(np.array([0.1, 0.5, 0.5, 0.0])).tolist() == [3, 1, 2, 4]
    fused = rrf([np.array([3.0, 2.0, 1.0]), np.array([1.0, 2.0, 3.0])], c=60)
    assert np.allclose(fused, [1 / 61 + 1 / 63, 2 / 62, 1 / 63 + 1 / 61])
    weighted = rrf([np.array([3.0, 2.0, 1.0]), np.array([1.0, 2.0, 3.0])], c=60, weights=[2.0, 0.0])
    assert np.allclose(weighted, [2 / 61, 2 / 62, 2 / 63])


def test_rank_fusion_is_rrf_times_c():
    parts = [np.array([3.0, 2.0, 1.0]), np.array([1.0, 3.0, 2.0])]
    assert np.allclose(rank_fusion(parts, [1.0, 0.5]), rrf(parts, RRF_C, [1.0, 0.5]) * RRF_C)
    assert rank_fusion([], []).tolist() == []


def test_zscore_of_a_constant_is_zero():
    assert zscore(np.ones(4)).tolist() == [0.0] * 4
    assert zscore(np.zeros(0)).tolist() == []


def test_zscore_standardises():
    z = zscore(np.array([1.0, 2.0, 3.0, 6.0]))
    assert abs(z.mean()) < 1e-12 and abs(z.std() - 1.0) < 1e-12


def test_zscore_with_eps_keeps_the_dtype_and_never_divides_by_zero():
    x = np.array([0.2, 0.4, 0.9], dtype=np.float32)
    z = zscore(x, eps=1e-9)
    assert z.dtype == np.float32
    assert np.array_equal(z, (x - x.mean()) / (x.std() + 1e-9))
    assert zscore(np.full(3, 0.5, dtype=np.float32), eps=1e-9).tolist() == [0.0] * 3
    empty = np.zeros(0, dtype=np.float32)
    assert zscore(empty, eps=1e-9) is empty


def test_z_fusion_skips_zero_weights():
    a, b = np.array([1.0, 2.0, 4.0]), np.array([3.0, 1.0, 1.0])
    assert np.allclose(z_fusion((a, b), (1.0, 0.5), 3), zscore(a) + 0.5 * zscore(b))
    assert np.array_equal(z_fusion((a, b), (0.0, 0.0), 3), np.zeros(3))
