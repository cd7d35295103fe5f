"""A fixed, seeded question sample stratified by question type (``bfr eval --sample N --seed S``).

Covers :func:`stratified_sample`: proportional allocation over ``qtype`` by the largest-remainder
rule (every type present gets at least one question when ``n`` allows), then a seeded draw inside
each type from the questions sorted by id, so the sample depends only on (questions, n, seed) and
never on store or file order. The result is sorted by question id.

Does not cover: choosing questions by difficulty or by any label a method could exploit; only the
type is used, which every benchmark publishes with the question.
"""

from __future__ import annotations

import math
import random
from collections import defaultdict
from collections.abc import Sequence

from bfr_core.records import Question


def allocate(sizes: dict[str, int], n: int) -> dict[str, int]:
    """How many of ``n`` to draw per stratum: proportional, largest remainder, at least one each
    while ``n`` covers every stratum; ties broken by stratum name."""
    total = sum(sizes.values())
    if n >= total:
        return dict(sizes)
    strata = sorted(sizes)
    floor_one = n >= len(strata)
    quota = {s: n * sizes[s] / total for s in strata}
    alloc = {s: min(sizes[s], max(1 if floor_one else 0, math.floor(quota[s]))) for s in strata}
    by_remainder = sorted(strata, key=lambda s: (-(quota[s] - math.floor(quota[s])), s))
    while sum(alloc.values()) < n:
        for s in by_remainder:
            if sum(alloc.values()) < n and alloc[s] < sizes[s]:
                alloc[s] += 1
    while sum(alloc.values()) > n:  # the at-least-one floor overshot: take back from the largest
        s = max(strata, key=lambda s: (alloc[s], s))
        alloc[s] -= 1
    return alloc


def stratified_sample(questions: Sequence[Question], n: int, seed: int = 0) -> list[Question]:
    """``n`` questions drawn per :func:`allocate` over ``qtype`` with ``random.Random(seed)``."""
    if n <= 0:
        raise ValueError("a sample needs n >= 1")
    by_type: dict[str, list[Question]] = defaultdict(list)
    for q in sorted(questions, key=lambda q: q.question_id):
        by_type[q.qtype].append(q)
    alloc = allocate({t: len(v) for t, v in by_type.items()}, n)
    rng = random.Random(seed)
    picked: list[Question] = []
    for t in sorted(by_type):
        picked.extend(rng.sample(by_type[t], alloc[t]))
    return sorted(picked, key=lambda q: q.question_id)
