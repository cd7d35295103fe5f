"""The sufficiency gap by budget from evidence rows: for each system and k, how often a gold turn is among
the first k turns (any gold) against how often every gold turn is (all gold), their gap, the mean set
size held and the share of sets reaching k (:func:`at_budget`, :func:`curves`); the simple top-k
rankings measured beside the arms (:data:`RANKINGS`) and the panels' order (:data:`ORDER`).

Does not cover: running the arms and rankings, the plot and the JSON (``bench.quality.bench_ours_sufficiency``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from bench.lib.ours_runs import ZFUSION
from bench.lib.selection import BASELINES, DENSE_ONLY
from bfr_core.arm_names import CONV_FUSION, canonical_arm
from bfr_core.evaluation.metrics import complete_evidence_recall, turn_hit

SIZES = (5, 10, 20, 40)
RANKINGS = {
    "bm25 top-k": next(v for k, v in BASELINES.items() if k.startswith("bm25 top-k")),
    "dense top-k": DENSE_ONLY,
    "rrf top-k": next(v for k, v in BASELINES.items() if k.startswith("rrf top-k")),
    "z-fusion top-k": ZFUSION,
}
# The panels' order: our arm, the paper's arms, the simple rankings, the paper's baselines
ORDER = (CONV_FUSION, "fca-ms", "bfr-text", "bfr-mv", *RANKINGS, "mem0", "amem", "com", "mragent-flat")


def at_budget(sets: Sequence[tuple[Sequence[str], frozenset[str]]], k: int) -> dict:
    """Figures of (evidence in order, gold turns) pairs cut to their first ``k`` turns, over the pairs with gold
    turns: n, any gold and all gold (percentages), their gap, the mean set size held and the share reaching k."""
    scored = [(list(ev)[:k], len(ev), gold) for ev, gold in sets if gold]
    if not scored:
        return {"n": 0}
    n = len(scored)
    hit = 100 * sum(turn_hit(ev, g) for ev, _, g in scored) / n
    every = 100 * sum(complete_evidence_recall(ev, g) or 0.0 for ev, _, g in scored) / n
    return {"n": n, "any": round(hit, 2), "all": round(every, 2), "gap": round(hit - every, 2),
            "set_size": round(sum(len(ev) for ev, _, _ in scored) / n, 2),
            "reached": round(sum(size >= k for _, size, _ in scored) / n, 4)}


def curves(rows: Mapping[str, Sequence[str]], gold: Mapping[str, frozenset[str]], sizes: Sequence[int] = SIZES) -> dict:
    """System -> budget -> :func:`at_budget` from rows keyed ``"SYSTEM:QUESTION_ID"`` (a dump's key), over the
    questions of ``gold``; systems in :data:`ORDER`, any other after them."""
    by_system: dict[str, list] = {}
    for key, ev in rows.items():
        system, qid = key.split(":", 1)
        system = canonical_arm(system)  # a dump names our arm as it was asked for (bfr is its alias)
        if qid in gold:
            by_system.setdefault(system, []).append((ev, gold[qid]))
    names = [s for s in ORDER if s in by_system] + sorted(set(by_system) - set(ORDER))
    return {s: {str(k): at_budget(by_system[s], k) for k in sizes} for s in names}
