"""Minimum set cover over requirement bitmasks: Algorithm 1's MinSubset, and the coverage order.

Each candidate is a row of bits (bit j: it covers requirement j). :func:`min_cover` finds the smallest
subset covering every requirement the candidates cover between them (ties: smallest sum of pool
ranks, then rank order), exactly over distinct coverage masks while the search stays under
:data:`EXACT_LIMIT` subsets, greedily (:func:`greedy_cover`) beyond. :func:`coverage_order` sorts a
selection by the first requirement each member covers. Pure functions over ints.
Does not cover: which candidate covers which requirement (``stage1.incidence``).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

EXACT_LIMIT = 20_000  # subsets the exact set cover may try before switching to greedy


def union(rows: Sequence[int], idx: Sequence[int]) -> int:
    """The requirements covered by the candidates ``idx`` together."""
    out = 0
    for g in idx:
        out |= rows[g]
    return out



def min_cover(rows: Sequence[int], candidates: Sequence[int], ranks: Sequence[int]) -> tuple[list[int], str]:
    """Smallest subset of ``candidates`` covering every requirement they cover between them.

    Exact over distinct coverage masks (best-ranked candidate per mask); ties -> smallest rank sum,
    then lexicographically smallest ranks. Greedy when the exact search would be too large.
    """
    universe = union(rows, candidates)
    if not universe:
        return [], "exact"
    best_per_mask: dict[int, int] = {}
    for g in candidates:
        m = rows[g]
        if m and (m not in best_per_mask or ranks[g] < ranks[best_per_mask[m]]):
            best_per_mask[m] = g
    reps = sorted(best_per_mask.values(), key=lambda g: ranks[g])
    tried = 0
    for size in range(1, universe.bit_count() + 1):
        best: tuple[int, tuple[int, ...]] | None = None
        chosen: tuple[int, ...] = ()
        for combo in itertools.combinations(reps, size):
            tried += 1
            if tried > EXACT_LIMIT:
                return greedy_cover(rows, candidates, ranks), "greedy"
            cover = 0
            for g in combo:
                cover |= rows[g]
            if cover != universe:
                continue
            key = (sum(ranks[g] for g in combo), tuple(sorted(ranks[g] for g in combo)))
            if best is None or key < best:
                best, chosen = key, combo
        if best is not None:
            return list(chosen), "exact"
    return greedy_cover(rows, candidates, ranks), "greedy"  # pragma: no cover - reps always cover


def greedy_cover(rows: Sequence[int], candidates: Sequence[int], ranks: Sequence[int]) -> list[int]:
    universe, covered, out = union(rows, candidates), 0, []
    while covered != universe:
        g = max(candidates, key=lambda c: ((rows[c] & ~covered).bit_count(), -ranks[c]))
        if not rows[g] & ~covered:
            break
        out.append(g)
        covered |= rows[g]
    return out


def coverage_order(selected: Sequence[int], rows: Sequence[int], ranks: Sequence[int]) -> list[int]:
    """Sort by the first requirement each covers (r1 first), then by pool rank."""
    def first_req(g: int) -> int:
        m = rows[g]
        return (m & -m).bit_length() if m else 99
    return sorted(dict.fromkeys(selected), key=lambda g: (first_req(g), ranks[g]))
