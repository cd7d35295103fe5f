"""Whether Stage I's offline requirements can point below the ranking's head at the gold a small set misses.

Covers :func:`missing_below` (one question: each gold turn its first ``k`` lack, by rank band in the ranking,
and for those ranked below the head whether it supplies any requirement, and one that no head turn supplies)
and :func:`tally` (the counts over questions). A turn below the head earns the set's cover gain
(``budget_set.set_order``'s reach) only when it supplies a requirement no head turn does, so that count is
how much gold a requirement-driven reach could bring in at all. With the turn vectors, each missing gold turn
below the head is also ranked by a second hop that reads no requirement (:func:`hop_rank`: every turn outside
the first ``k`` by its largest cosine to the set's first :data:`HOPS` turns), to see whether a query built from
what the set already holds would reach it.

Does not cover: building the cases or the set order (``bench.lib.selection``), the JSON
(``bench.quality.bench_reach_misses``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence

import numpy as np

HOPS = 3  # the set's first turns a second hop starts from
BANDS = ((10, 40, "11-40"), (40, 120, "41-120"), (120, 200, "121-200"), (200, None, "over 200"))


def band(rank: int) -> str:
    """The rank band (0-based rank in, the 1-based band's name out) of a turn below the first 10."""
    return next(name for lo, hi, name in BANDS if rank >= lo and (hi is None or rank < hi))


def hop_rank(unit: np.ndarray, start: Sequence[int], target: int, exclude: Iterable[int]) -> int:
    """``target``'s 0-based rank among the turns not in ``exclude`` by their largest cosine to the ``start``
    turns (``unit``: every turn's vector scaled to length 1); ties by position."""
    sims = (unit @ unit[list(start)].T).max(axis=1)
    skip = set(exclude)
    order = [int(i) for i in np.argsort(-sims, kind="stable") if int(i) not in skip]
    return order.index(target)


def missing_below(picked: Sequence[int], ranking: Sequence[int], gold: Iterable[int], rows: Sequence[int],
                  k: int = 10, head: int = 40, unit: np.ndarray | None = None) -> Counter:
    """One question's counts: ``picked`` is the set order and ``ranking`` the ranking (turn positions, best
    first), ``gold`` the gold positions, ``rows`` every turn's requirement bitmask, ``unit`` every turn's unit
    vector (None: no second hop). Empty unless the first ``k`` of ``picked`` hold some gold and not all of it
    (relevant but insufficient)."""
    gold = set(gold)
    first = set(picked[:k])
    if not gold & first or gold <= first:
        return Counter()
    rank = {int(t): r for r, t in enumerate(ranking)}
    head_bits = 0
    for t in ranking[:head]:
        head_bits |= int(rows[int(t)])
    out = Counter(insufficient=1)
    for g in sorted(gold - first):
        out["missing"] += 1
        r = rank[g]
        out[band(max(r, k))] += 1
        if r >= head:
            out["below the head"] += 1
            out["below the head, supplies a requirement"] += int(bool(int(rows[g])))
            out["below the head, supplies a requirement no head turn supplies"] += int(bool(int(rows[g]) & ~head_bits))
            if unit is not None:
                hop = hop_rank(unit, list(picked[:HOPS]), g, first)
                out["below the head, in a second hop's first 10"] += int(hop < k)
                out["below the head, in a second hop's first 40"] += int(hop < head)
    return out


def tally(counts: Iterable[Counter]) -> dict[str, int]:
    """The per-question counts summed, every key present (0 where none)."""
    total: Counter = Counter()
    for c in counts:
        total.update(c)
    keys = ("insufficient", "missing", *(name for _, _, name in BANDS), "below the head",
            "below the head, supplies a requirement", "below the head, supplies a requirement no head turn supplies",
            "below the head, in a second hop's first 10", "below the head, in a second hop's first 40")
    return {key: int(total[key]) for key in keys}
