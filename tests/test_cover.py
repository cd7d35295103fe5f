"""bfr_core.method.cover: the minimum set cover is minimal (against brute force), covers, falls back
to greedy past the search limit, and breaks ties by pool rank."""

from __future__ import annotations

import itertools
import random

import pytest

from bfr_core.method import cover


def brute_min(rows, cands):
    universe = cover.union(rows, cands)
    for size in range(0, len(cands) + 1):
        for combo in itertools.combinations(cands, size):
            if cover.union(rows, combo) == universe:
                return size
    return None


@pytest.mark.parametrize("seed", range(40))
def test_min_cover_is_minimal_and_covers(seed):
    rng = random.Random(seed)
    n, j = rng.randint(1, 12), rng.randint(1, 5)
    rows = [sum(1 << b for b in range(j) if rng.random() < 0.3) for _ in range(n)]
    cands = list(range(n))
    sel, method = cover.min_cover(rows, cands, list(range(n)))
    assert method == "exact"
    assert cover.union(rows, sel) == cover.union(rows, cands)
    assert len(sel) == brute_min(rows, cands)


def test_greedy_fallback_covers(monkeypatch):
    monkeypatch.setattr(cover, "EXACT_LIMIT", 0)
    rows = [0b0011, 0b0100, 0b1000, 0b1100, 0b0001]
    sel, method = cover.min_cover(rows, list(range(5)), list(range(5)))
    assert method == "greedy" and cover.union(rows, sel) == 0b1111


def test_ties_break_by_rank():
    rows = [0b01, 0b10, 0b11, 0b11]
    assert cover.min_cover(rows, [0, 1, 2, 3], [0, 1, 2, 3])[0] == [2]
    assert cover.min_cover(rows, [0, 1, 2, 3], [0, 1, 3, 2])[0] == [3]
