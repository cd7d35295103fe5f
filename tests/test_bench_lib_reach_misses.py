"""bench.lib.reach_misses: the missing gold of an insufficient set, by rank band and requirement reach."""

from __future__ import annotations

from collections import Counter

import numpy as np

from bench.lib.reach_misses import band, hop_rank, missing_below, tally


def test_band_names_the_rank_band_of_a_zero_based_rank():
    assert [band(r) for r in (10, 39, 40, 119, 120, 199, 200, 900)] == [
        "11-40", "11-40", "41-120", "41-120", "121-200", "121-200", "over 200", "over 200"]


def test_missing_gold_below_the_head_and_the_requirement_only_it_supplies():
    ranking = list(range(60))
    picked = ranking  # the set order: the ranking here
    rows = [0b01] * 60
    rows[45], rows[50], rows[55] = 0b10, 0, 0b01
    got = missing_below(picked, ranking, [0, 15, 45, 50, 55], rows, k=10, head=40)
    assert got == Counter({"insufficient": 1, "missing": 4, "11-40": 1, "41-120": 3, "below the head": 3,
                           "below the head, supplies a requirement": 2,
                           "below the head, supplies a requirement no head turn supplies": 1})
    assert missing_below(picked, ranking, [45, 50], rows) == Counter()  # no gold in the first 10: not insufficient
    assert missing_below(picked, ranking, [1, 2], rows) == Counter()  # all gold in the first 10: sufficient
    moved = [45, *range(45)]  # a set that took turn 45 into its first 10
    assert missing_below(moved, ranking, [0, 45, 50], rows)["missing"] == 1


def test_tally_sums_and_names_every_count():
    total = tally([Counter(insufficient=1, missing=2), Counter(insufficient=1, missing=1, **{"41-120": 1})])
    assert total["insufficient"] == 2 and total["missing"] == 3 and total["41-120"] == 1 and total["over 200"] == 0
    assert list(tally([])) == list(total)


def test_the_second_hop_ranks_a_missing_turn_by_its_closeness_to_the_sets_first_turns():
    unit = np.array([[1.0, 0.0], [0.0, 1.0], [0.8, 0.6], [0.6, 0.8], [-1.0, 0.0]])
    assert hop_rank(unit, [0], 2, exclude=[0]) == 0  # closest to turn 0 once turn 0 is left out
    assert hop_rank(unit, [0], 3, exclude=[0]) == 1
    assert hop_rank(unit, [0], 4, exclude=[0]) == 3  # opposite: last
    assert hop_rank(unit, [0, 1], 3, exclude=[0, 1, 2]) == 0  # the larger of its cosines to either start turn
    ranking = list(range(60))
    rows = [0] * 60
    vecs = np.zeros((60, 2))
    vecs[:, 0] = 1.0
    vecs[45] = [0.0, 1.0]  # gold turn 45 resembles none of the first turns
    got = missing_below(ranking, ranking, [0, 45, 50], rows, unit=vecs)
    assert got["below the head"] == 2 and got["below the head, in a second hop's first 40"] == 1
    assert got["below the head, in a second hop's first 10"] == 0  # 39 turns as alike come before 50 (ties by position)
