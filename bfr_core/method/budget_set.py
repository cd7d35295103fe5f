"""The set at each budget: which k turns of ``conv-fusion``'s ranking together hold what the question needs.

The first k turns of a ranking are a list, not a set chosen to be sufficient: two turns that state the
same fact (the same session, one the other's reply) both rank above the one turn that states the other
half. This module re-selects the ranking's head, its first :data:`WINDOW` turns, greedily, one turn at
a time, each pick the head turn ``i`` not yet taken with the largest

    gain(i | S) = SCALE * final(i) - ASKS * asking(i) - SPREAD * (turns of S in i's session)
                  + COVER * (Stage I requirements i supplies that no turn of S does) / (requirements)
                  - NOVELTY * max(0, largest cosine between i and a turn of S)

(``final``: the ranking's own score, in its z units; requirements: Stage I's, with its incidence,
``stage1.incidence``: words, names, dates, static-vector cosine, the ``latest`` rule over the head; the
cosine: the scope's turn vectors, so a turn that restates a picked one pays for it, maximal marginal
relevance's redundancy term; asking: the share of i's words in sentences that ask, ``turn_scores.asking``,
0 everywhere beside an assistant). Ties go to the better-ranked turn, so with SCALE 1 and the four weights 0
the order is the ranking's. Every prefix of the order is the greedy set at that budget, so the sets nest
(the 10-turn set lies inside the 20-turn one), and at :data:`WINDOW` turns the set is the ranking's top
:data:`WINDOW`: only the smaller budgets change. With a REACH the candidates are the ranking's first
:data:`WINDOW` + REACH turns: a turn below the head that alone supplies a requirement comes in on its cover
gain (gold a small set lacks is often ranked below the head), and the set at :data:`WINDOW` changes too.
The weights are ``OursSettings``' ``set_spread``, ``set_cover``, ``set_asks``, ``set_reach`` and, per
regime, ``set_terms`` (SCALE, NOVELTY), chosen by the selection protocol
(bench/quality/bench_ours_selection.py); in the remark regime, whose requirement words carry little, COVER
reads no requirement (as Stage I's cover does there) and ASKS is 0 (a remark's cue turns are whatever they
are, questions included).

Does not cover: choosing the weights, the Stage I cover that leads E0 in ``ours.initial_evidence``, reading
a model (the offline requirements are ``rules_requirements.decompose_rules``').
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from bfr_core.fusion import rank_order

WINDOW = 40  # the largest budget the workbench reports (C2..C6): the set there is the ranking's top WINDOW


def requirement_bits(rows: Sequence[int], n_reqs: int) -> np.ndarray:
    """Bitmask rows (bit j: supplies requirement j) as a (len(rows), n_reqs) 0/1 float matrix."""
    r = np.asarray(list(rows), dtype=np.int64).reshape(-1, 1)
    return ((r >> np.arange(n_reqs, dtype=np.int64)) & 1).astype(np.float64)


def unit_rows(vectors: np.ndarray) -> np.ndarray:
    """Rows scaled to length 1 (a zero row, a turn with no words, stays zero: it resembles nothing)."""
    v = np.asarray(vectors, dtype=np.float64)
    norms = np.linalg.norm(v, axis=1, keepdims=True)
    return np.divide(v, norms, out=np.zeros_like(v), where=norms > 0)


def greedy_head(scores: np.ndarray, sessions: np.ndarray, spread: float, cover: float,
                bits: np.ndarray | None = None, novelty: float = 0.0,
                vectors: np.ndarray | None = None) -> np.ndarray:
    """Positions into the head (its turns in ranking order) in greedy pick order (see the module docstring).

    ``scores`` and ``sessions`` (codes) are the head's; ``bits`` its requirement matrix (:func:`requirement_bits`)
    or None (no requirement counts); ``vectors`` its turn vectors or None (no redundancy counts). Each pick
    lowers the gains it changes in place: its session's turns by ``spread``, the turns supplying a requirement
    it covered first by that requirement's share, and each turn by ``novelty`` times the rise of its largest
    cosine to the set.
    """
    n = len(scores)
    if n < 2:
        return np.arange(n)
    reqs = bits is not None and bits.shape[1] > 0 and cover != 0
    per_req = cover / bits.shape[1] if reqs else 0.0
    gain = np.asarray(scores, dtype=np.float64).copy()
    if reqs:
        gain += per_req * bits.sum(axis=1)
        open_reqs = np.ones(bits.shape[1], dtype=bool)
    same = np.asarray(sessions)[:, None] == np.asarray(sessions)[None, :] if spread else None
    sims = None
    if novelty and vectors is not None:
        unit = unit_rows(vectors)
        sims = np.clip(unit @ unit.T, 0.0, None)
        closest = np.zeros(n)  # each turn's largest cosine to the set so far (none taken: 0)
    out = np.empty(n, dtype=np.int64)
    for step in range(n):
        j = int(np.argmax(gain))  # first maximum: the better-ranked turn on a tie
        out[step] = j
        if same is not None:
            gain -= spread * same[j]
        if reqs:
            first = open_reqs & (bits[j] > 0)
            if first.any():
                gain -= per_req * bits[:, first].sum(axis=1)
                open_reqs &= ~first
        if sims is not None:
            rise = np.maximum(sims[j], closest)
            gain -= novelty * (rise - closest)
            closest = rise
        gain[j] = -np.inf
    return out


def set_order(final: np.ndarray, sessions: np.ndarray, spread: float = 0.0, cover: float = 0.0,
              rows_of: Callable[[np.ndarray], Sequence[int]] | None = None, n_reqs: int = 0,
              window: int = WINDOW, novelty: float = 0.0, vectors: np.ndarray | None = None,
              scale: float = 1.0, asks: float = 0.0, asking: np.ndarray | None = None,
              reach: int = 0) -> np.ndarray:
    """Every turn's position, best first: the ranking's head re-selected greedily (:func:`greedy_head`),
    then the rest of the ranking. ``rows_of(head)`` gives the head's requirement rows (``stage1.incidence``
    over those positions), read only when ``cover`` and ``n_reqs`` are not 0; ``vectors`` every turn's
    vector (rows aligned with ``final``), read only when ``novelty`` is not 0; ``scale`` multiplies the
    ranking's score in the gain (the head is still the ranking's first ``window``); ``asking`` every turn's
    share of asking words (``turn_scores.asking``), of which a pick pays ``asks`` times, read only when
    ``asks`` is not 0. ``reach`` (read only when requirements count) widens the candidates to the ranking's
    first ``window + reach`` turns: a turn below the head that supplies a requirement no better-ranked
    candidate supplies earns its cover gain and can be picked before head turns, so the set at
    ``window`` turns may then hold turns from below the ranking's top ``window``."""
    order = rank_order(final)
    reqs = bool(cover and n_reqs and rows_of is not None)
    redundancy = bool(novelty and vectors is not None)
    asked = bool(asks and asking is not None)
    if not spread and not reqs and not redundancy and not asked:
        return order
    head = order[:window + (reach if reqs else 0)]
    bits = requirement_bits(rows_of(head), n_reqs) if reqs else None
    head_vectors = np.asarray(vectors)[head] if redundancy else None
    gain = scale * np.asarray(final, dtype=np.float64)[head]
    if asked:
        gain = gain - asks * np.asarray(asking, dtype=np.float64)[head]
    picked = head[greedy_head(gain, np.asarray(sessions)[head], spread, cover, bits, novelty, head_vectors)]
    return np.concatenate([picked, order[len(head):]])
