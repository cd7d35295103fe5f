"""CoM* - a same-store adaptation of Chain-of-Memory (Xu et al., 2026), as in the paper's Appendix E:
"MiniLM candidates with anchor, chain, and blocking" over the flat turn store, one retrieval call,
about 10 turns (Table 11: 1.00 call, 10.0 turns).

    candidates <- dense top-N (N = :data:`CANDIDATES`)                    one call
    anchors    <- the :data:`ANCHORS` most relevant candidates, skipping near-duplicates
    chains     <- grown round-robin: each chain adds the unblocked candidate maximising
                  ALPHA * relevance(q, c) + (1 - ALPHA) * consistency(c, chain tail)
                  (both MiniLM cosines), until k turns are held
    blocking   <- a candidate whose cosine with any held turn is >= :data:`BLOCK` is blocked

Evidence order: chain by chain, each in growth order. Determinism: ties by candidate rank.

Does not cover: CoM's LLM memory construction / dynamic evolution (the published system changes the
store; the starred adaptation keeps the flat store fixed).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from bfr_core.records import Query, Step

if TYPE_CHECKING:
    from bfr_core.method.arms import ArmContext

CANDIDATES = 30  # MiniLM candidate pool the chains are grown from
ANCHORS = 3  # chains per question
ALPHA = 0.6  # weight of query relevance against chain consistency
BLOCK = 0.9  # cosine at which a candidate is a near-duplicate of a held turn


def com(ctx: ArmContext, query: Query) -> list[Step]:
    views, k = ctx.views, ctx.k
    hits = views.dense.search(query.text, CANDIDATES, ())
    ids = [h.turn_id for h in hits]
    rel = np.array([float(h.score) for h in hits])
    vecs = views.turn_vectors[[views.position[t] for t in ids]] if ids else np.zeros((0, 1))
    sims = vecs @ vecs.T if ids else np.zeros((0, 0))
    steps = [Step("pool", f"Candidates: dense top {len(ids)}", (), 1, {
        "view": "dense", "candidates": [{"turn_id": h.turn_id, "score": round(float(h.score), 6), "rank": i}
                                        for i, h in enumerate(hits)]})]

    held: list[int] = []
    blocked: list[int] = []

    def is_blocked(i: int) -> bool:
        return bool(held) and float(np.max(sims[i, held])) >= BLOCK

    anchors: list[int] = []
    for i in range(len(ids)):
        if len(anchors) >= min(ANCHORS, k):
            break
        if is_blocked(i):
            blocked.append(i)
            continue
        anchors.append(i)
        held.append(i)
    chains = [[a] for a in anchors]
    steps.append(Step("anchors", f"{len(anchors)} anchor(s)", tuple(ids[i] for i in held), 1, {
        "anchors": [ids[i] for i in anchors]}))

    progress = True
    while len(held) < k and progress:
        progress = False
        for chain in chains:
            if len(held) >= k:
                break
            tail = chain[-1]
            best, best_score = None, -np.inf
            for i in range(len(ids)):
                if i in held or i in blocked:
                    continue
                if is_blocked(i):
                    blocked.append(i)
                    continue
                score = ALPHA * rel[i] + (1 - ALPHA) * float(sims[i, tail])
                if score > best_score + 1e-12:  # strict: ties keep the better-ranked candidate
                    best, best_score = i, score
            if best is not None:
                chain.append(best)
                held.append(best)
                progress = True
    evidence = tuple(ids[i] for chain in chains for i in chain)
    steps.append(Step("chains", f"{len(chains)} chain(s), {len(evidence)} turns", evidence, 1, {
        "chains": [[ids[i] for i in chain] for chain in chains],
        "blocked": [ids[i] for i in blocked],
        "weights": {"relevance": ALPHA, "consistency": round(1 - ALPHA, 6), "block": BLOCK},
    }))
    return steps
