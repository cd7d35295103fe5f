"""Scores -> rankings and fusions: the one tie-broken ranking, the one z-score, and the two ways to fuse
several score arrays over the same items (reciprocal rank, z-score sum).

Covers: :func:`rank_order` (positions best first, equal scores by position, never by id: ids may carry
labels, LongMemEval names gold sessions ``answer_*``, so ``sorted(ids)`` as a tie-break would leak them),
:func:`ranks` (1-based rank per item), :func:`zscore` (standardise over the items), :func:`z_fusion`
(weighted sum of z-scores), :func:`rrf` (reciprocal-rank fusion, Cormack et al. 2009, c = 60) and
:func:`rank_fusion` (RRF times c, back to roughly unit scale). Pure numpy functions; the retrieval
views, our arm's turn scores and the benches all rank and fuse through this module.

Does not cover: learned fusion weights, score calibration across queries, cutting a ranking at k with
exclusions (``retrieval.views.common.top_hits``).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

RRF_C = 60.0  # Cormack et al. (2009)


def rank_order(scores: np.ndarray, *, later_first: bool = False) -> np.ndarray:
    """Positions by descending score; equal scores by position, earlier first (``later_first``: later
    first, the entity view's recency rule). ``np.lexsort`` with the position as secondary key makes ties
    deterministic without relying on a stable sort of negated floats."""
    pos = np.arange(len(scores))
    return np.lexsort((-pos if later_first else pos, -np.asarray(scores)))


def ranks(scores: np.ndarray) -> np.ndarray:
    """1-based rank of every item, best first, ties by position (:func:`rank_order`)."""
    out = np.empty(len(scores), dtype=np.int64)
    out[rank_order(scores)] = np.arange(1, len(scores) + 1)
    return out


def zscore(x: np.ndarray, eps: float = 0.0) -> np.ndarray:
    """``(x - mean) / sd`` over the items. With ``eps`` 0: zeros (float64) where the items are all equal
    (sd 0). With ``eps`` > 0: ``(x - mean) / (sd + eps)`` in ``x``'s own dtype, an empty ``x`` returned
    as is (the dense view merges two vector sets' float32 cosines this way)."""
    if eps:
        return (x - x.mean()) / (x.std() + eps) if len(x) else x
    sd = float(x.std()) if len(x) else 0.0
    return (x - x.mean()) / sd if sd > 0 else np.zeros(len(x))


def z_fusion(arrays: Sequence[np.ndarray], weights: Sequence[float], n: int) -> np.ndarray:
    """The sum of ``w * zscore(x)`` over the arrays whose weight is not 0 (zeros of length ``n`` when none)."""
    return sum((w * zscore(x) for x, w in zip(arrays, weights, strict=True) if w), start=np.zeros(n))


def rrf(score_lists: list[np.ndarray], c: float = RRF_C, weights: list[float] | None = None) -> np.ndarray:
    """Reciprocal-rank fusion: the sum of ``w / (c + rank)`` over the lists (:func:`ranks`, weights 1
    by default)."""
    weights = weights or [1.0] * len(score_lists)
    return sum((w / (c + ranks(s)) for w, s in zip(weights, score_lists, strict=True)),
               start=np.zeros(len(score_lists[0])))


def rank_fusion(parts: Sequence[np.ndarray], weights: Sequence[float]) -> np.ndarray:
    """:func:`rrf` with c = :data:`RRF_C`, times c: back to roughly unit scale, so that weights added to
    it mean what they mean beside a z-fusion (empty when there are no parts)."""
    return rrf(list(parts), RRF_C, list(weights)) * RRF_C if parts else np.zeros(0)
