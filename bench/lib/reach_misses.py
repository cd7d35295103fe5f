"""Whether Stage I's offline requirements can point below the ranking's head at the gold a small set misses.

Covers :func:`missing_below` (one question: each gold turn its first ``k`` lack, by rank band in the ranking,
and for those ranked below the head whether it supplies any requirement, and one that no head turn supplies)
and :func:`tally` (the counts over questions). A turn below the head earns the set's cover gain
(``budget_set.set_order``'s reach) only when it supplies a requirement no head turn does, so the last count is
how much gold a requirement-driven reach could bring in at all.

Does not cover: building the cases or the set order (``bench.lib.selection``), the JSON
(``bench.quality.bench_reach_misses``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence

BANDS = ((10, 40, "11-40"), (40, 120, "41-120"), (120, 200, "121-200"), (200, None, "over 200"))


def band(rank: int) -> str:
    """The rank band (0-based rank in, the 1-based band's name out) of a turn below the first 10."""
    return next(name for lo, hi, name in BANDS if rank >= lo and (hi is None or rank < hi))


def missing_below(picked: Sequence[int], ranking: Sequence[int], gold: Iterable[int], rows: Sequence[int],
                  k: int = 10, head: int = 40) -> Counter:
    """One question's counts: ``picked`` is the set order and ``ranking`` the ranking (turn positions, best
    first), ``gold`` the gold positions, ``rows`` every turn's requirement bitmask. Empty unless the first
    ``k`` of ``picked`` hold some gold and not all of it (relevant but insufficient)."""
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
    return out


def tally(counts: Iterable[Counter]) -> dict[str, int]:
    """The per-question counts summed, every key present (0 where none)."""
    total: Counter = Counter()
    for c in counts:
        total.update(c)
    keys = ("insufficient", "missing", *(name for _, _, name in BANDS), "below the head",
            "below the head, supplies a requirement", "below the head, supplies a requirement no head turn supplies")
    return {key: int(total[key]) for key in keys}
