"""Stratified, seeded question samples (bfr_core.evaluation.sampling)."""

from collections import Counter

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bfr_core.evaluation.sampling import allocate, stratified_sample
from bfr_core.records import Question

SIZES = {"multi-hop": 282, "temporal": 321, "open-domain": 92, "single-hop": 841}  # LoCoMo's 1,536


def questions(sizes: dict[str, int]) -> list[Question]:
    return [Question("d", f"{t}-{i:04d}", "s", "q?", "a", t) for t, n in sizes.items() for i in range(n)]


def test_locomo_sizes_get_a_proportional_sample_of_50():
    alloc = allocate(SIZES, 50)
    assert sum(alloc.values()) == 50
    # quotas 9.18, 10.45, 2.99, 27.38: floors sum to 48, the two largest remainders get one more
    assert alloc == {"multi-hop": 9, "temporal": 11, "open-domain": 3, "single-hop": 27}


def test_sample_is_seeded_sorted_and_stratified():
    qs = questions(SIZES)
    a, b = stratified_sample(qs, 50, seed=7), stratified_sample(list(reversed(qs)), 50, seed=7)
    assert a == b  # input order does not matter
    assert [q.question_id for q in a] == sorted(q.question_id for q in a)
    assert Counter(q.qtype for q in a) == Counter(allocate(SIZES, 50))
    assert stratified_sample(qs, 50, seed=8) != a


def test_small_and_large_n():
    qs = questions({"x": 3, "y": 1, "z": 1})
    assert len(stratified_sample(qs, 99)) == 5
    assert Counter(q.qtype for q in stratified_sample(qs, 3)) == {"x": 1, "y": 1, "z": 1}
    assert sum(allocate({"x": 5, "y": 5, "z": 5}, 2).values()) == 2
    with pytest.raises(ValueError):
        stratified_sample(qs, 0)


@given(st.dictionaries(st.sampled_from("abcdef"), st.integers(1, 40), min_size=1), st.integers(1, 120))
def test_allocation_always_sums_and_fits(sizes, n):
    alloc = allocate(sizes, n)
    assert sum(alloc.values()) == min(n, sum(sizes.values()))
    assert all(0 <= alloc[s] <= sizes[s] for s in sizes)
    if len(sizes) <= n <= sum(sizes.values()):
        assert all(alloc[s] >= 1 for s in sizes)
