"""Stage I: FCA-MS (the paper's Algorithm 1) - compose a complementary initial evidence set E0.

    C_q <- TopN(Retrieve_agent(q), N)      pool: N = 50 from the dense (MiniLM) view   (line 3)
    R_q <- Decompose(q)                    requirements.decompose                       (line 4)
    P_q <- FCAPrefilter(R_q, C_q, P)       formal context, lattice, prefilter to P = 20 (line 5)
    (S^, Gamma) <- MinSubset(q, P_q)       exact / greedy set cover, or the LLM         (line 6)
    S <- Sanitize(S^, Gamma, P_q)          valid ids once, coverage order               (line 7)
    if S = {}: S <- First_f(P_q)           fallback f = 3                               (lines 8-10)
    E0 <- PositiveOverlapTop_b(S, M)       grounding to b = 10 source turns             (line 11)

Decisions (the paper leaves them to the implementation)
-------------------------------------------------------
* Agent-memory notes are our flat turns: the pool is the dense view's top-N turns (the paper's
  A-Mem notes were retrieved the same way, by MiniLM similarity).
* Incidence ``I(g, r)``: candidate ``g`` covers requirement ``r`` when (lexical) it contains enough
  of r's stemmed terms (all of 1-2, half of longer lists; related event verbs count, see
  ``lexicon.RELATED_STEMS``), names by text or speaker, dates by the session date; or (semantic) the
  MiniLM cosine between r's text and the turn is >= :data:`COVER_COSINE`. Names and date
  constraints use the lexical test only (a name's embedding says little about a turn); so do the
  who / where / when slots (the event's words and a name, place or time in the turn). A ``latest``
  requirement keeps only its covering candidates of the newest session date (:func:`newest_only`).
* Prefilter: concepts are visited by decreasing intent size (most requirements covered first),
  ties by the best pool rank in the extent; each contributes its extent in pool order, skipping
  near-duplicates (cosine >= :data:`NEAR_DUP` or identical text), until P are kept. The top
  concept (every object) comes last, so leftover room is filled by pool rank. Afterwards every
  requirement with a non-empty extent keeps at least one member (swap out the lowest-priority
  member whose removal uncovers nothing).
* Minimum subset: the smallest subset of the prefiltered pool whose intents cover every coverable
  requirement, ties broken by the smallest sum of pool ranks, then rank order. Exact search over
  distinct coverage patterns while the search stays under :data:`EXACT_LIMIT` subsets, greedy
  (most new requirements, then best rank) otherwise. With an LLM, ``bfr_core.roles.selector.select_subset``
  answers instead and its output is sanitised the same way.
* Grounding (PositiveOverlapTop_b): our notes ARE turns, so phi maps each selected note to itself
  exactly; those come first in coverage order. The remaining b - |S| places go to the scope's
  other turns ranked by positive overlap with the selected content and its context (the question):
  the IDF-weighted count of shared distinct stemmed terms (a plain count let long chatty turns
  win: 45.3 vs 56.4 Gold Hit for FCA-MS on LoCoMo), ties by pool rank then turn order; zero
  overlap is never kept, so E0 can be shorter than b on tiny scopes.

Stage I charges no completion calls (the paper's C0: 0.00 calls), so every step reports calls=0.

Does not cover: note evolution or LLM-written note context (A-Mem), multi-pool retrieval.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from weakref import WeakKeyDictionary

import numpy as np

from bfr_core.llm.base import LLMCallFailed
from bfr_core.method import fca
from bfr_core.method.cover import coverage_order, min_cover, union
from bfr_core.method.requirements import Requirement, covers_lexically, decompose_with_source
from bfr_core.records import Hit, Query, Step
from bfr_core.roles import selector
from bfr_core.roles.fit import fit_for
from bfr_core.text import tokenize

if TYPE_CHECKING:
    from bfr_core.method.arms import ArmContext

COVER_COSINE = 0.6  # MiniLM cosine at which a turn is taken to supply a requirement (0.45-0.7 within 0.6 GH)
NEAR_DUP = 0.95  # cosine above which two candidates are the same exhibit said twice
SEMANTIC_KINDS = frozenset({"fact", "bridge", "list", "temporal", "latest"})


# ----------------------------------------------------------------------------------------------
# Per-scope cache: stemmed content-term sets of every turn (shared with grounding and Stage II)
# ----------------------------------------------------------------------------------------------

_PER_SCOPE: WeakKeyDictionary[Any, dict[str, Any]] = WeakKeyDictionary()


def scope_cache(views: Any) -> dict[str, Any]:
    """A dict living as long as ``views`` does (the index's LRU decides that); {} if not weak-referable."""
    try:
        found = _PER_SCOPE.get(views)
        if found is None:
            found = _PER_SCOPE[views] = {}
        return found
    except TypeError:  # views without __weakref__ (or unhashable): no caching, still correct
        return {}


def turn_stems(views: Any) -> tuple[frozenset[str], ...]:
    """Stemmed, stop-word-free term sets aligned with ``views.turns`` (cached per views object)."""
    cache = scope_cache(views)
    if "stems" not in cache:
        cache["stems"] = tuple(frozenset(tokenize(t.text, stemmed=True)) for t in views.turns)
    return cache["stems"]


# ----------------------------------------------------------------------------------------------
# Result of Stage I (the arms read E0 and the question vector from it)
# ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class StageOne:
    steps: tuple[Step, ...]
    e0: tuple[str, ...]
    requirements: tuple[Requirement, ...]
    question_vector: np.ndarray  # MiniLM vector of the question (Stage II retention reads it)


def incidence(views: Any, reqs: Sequence[Requirement], pool_idx: Sequence[int],
              req_vecs: np.ndarray | None) -> list[int]:
    """One attribute bitmask per pool candidate (bit j: covers requirement j)."""
    rows = covering(views, reqs, pool_idx, req_vecs)
    return latest_rows(rows, reqs, [views.turns[i].date for i in pool_idx])


def latest_rows(rows: Sequence[int], reqs: Sequence[Requirement], dates: Sequence[Any]) -> list[int]:
    """``rows`` with each ``latest`` requirement's bit kept on its newest candidates only (:func:`newest_only`)."""
    out = list(rows)
    for j, r in enumerate(reqs):
        if r.kind == "latest":
            out = newest_only(out, j, dates)
    return out


def covering(views: Any, reqs: Sequence[Requirement], pool_idx: Sequence[int],
             req_vecs: np.ndarray | None) -> list[int]:
    """:func:`incidence` before the ``latest`` rule: bit j where the candidate supplies requirement j
    by its words or (semantic kinds) its static-vector cosine."""
    stems = turn_stems(views)
    sims = None
    if req_vecs is not None and len(pool_idx):
        sims = req_vecs @ views.turn_vectors[list(pool_idx)].T  # (J, n)
    rows = []
    for col, i in enumerate(pool_idx):
        turn, ts = views.turns[i], stems[i]
        row = 0
        for j, r in enumerate(reqs):
            if covers_lexically(r, turn, ts) or (
                    sims is not None and r.kind in SEMANTIC_KINDS and sims[j, col] >= COVER_COSINE):
                row |= 1 << j
        rows.append(row)
    return rows


def newest_only(rows: Sequence[int], j: int, dates: Sequence[Any]) -> list[int]:
    """Bit ``j`` kept only on the candidates of the newest date among those that have it (a
    ``latest`` requirement: the value after any update); unchanged when none is dated."""
    dated = [d for g, d in enumerate(dates) if rows[g] >> j & 1 and d is not None]
    if not dated:
        return list(rows)
    newest = max(dated)
    return [row if not row >> j & 1 or dates[g] == newest else row & ~(1 << j) for g, row in enumerate(rows)]


def prefilter(found: Sequence[fca.Concept], rows: Sequence[int], vecs: np.ndarray, texts: Sequence[str],
              cap: int) -> tuple[list[int], list[int]]:
    """Lattice-driven prefilter over pool positions 0..n-1. Returns (kept positions, concept ids used)."""
    n = len(rows)
    order = sorted((c for c in range(len(found)) if found[c].extent),
                   key=lambda c: (-found[c].intent.bit_count(), min(fca.bits(found[c].extent)), c))
    kept: list[int] = []
    used: list[int] = []
    dup: set[int] = set()
    for c in order:
        took = False
        for g in fca.bits(found[c].extent):
            if len(kept) >= cap:
                break
            if g in kept or g in dup:
                continue
            if _near_duplicate(g, kept, vecs, texts):
                dup.add(g)
                continue
            kept.append(g)
            took = True
        if took:
            used.append(c)
        if len(kept) >= cap:
            break
    # every requirement with a non-duplicate candidate keeps one representative: it replaces the
    # lowest-priority member whose removal uncovers nothing
    n_attr = max((r.bit_length() for r in rows), default=0)
    for j in range(n_attr):
        bit = 1 << j
        if any(rows[g] & bit for g in kept):
            continue
        cands = [g for g in range(n) if rows[g] & bit and g not in dup and g not in kept]
        if not cands:
            continue
        full = union(rows, kept)
        for pos in range(len(kept) - 1, -1, -1):
            if union(rows, kept[:pos] + kept[pos + 1:]) == full:
                kept[pos] = cands[0]
                break
    return kept, used


def _near_duplicate(g: int, kept: Sequence[int], vecs: np.ndarray, texts: Sequence[str]) -> bool:
    if not kept:
        return False
    norm = " ".join(texts[g].lower().split())
    if any(" ".join(texts[k].lower().split()) == norm for k in kept):
        return True
    return bool(np.max(vecs[list(kept)] @ vecs[g]) >= NEAR_DUP)


def idf(views: Any) -> dict[str, float]:
    """Inverse document frequency ln(n / df) of every stemmed term of the scope (cached)."""
    cache = scope_cache(views)
    if "idf" not in cache:
        stems = turn_stems(views)
        df: dict[str, int] = {}
        for st in stems:
            for w in st:
                df[w] = df.get(w, 0) + 1
        n = max(len(stems), 1)
        cache["idf"] = {w: float(np.log(n / c)) for w, c in df.items()}
    return cache["idf"]


def ground(views: Any, query: Query, selected_ids: Sequence[str], pool_rank: dict[str, int],
           b: int) -> tuple[list[str], dict[str, float]]:
    """PositiveOverlapTop_b: the selected turns, then turns by positive overlap with the selected
    content and its context (the question). Overlap is IDF-weighted (sum of ln(n/df) over shared
    distinct terms) so that a shared rare word outweighs shared common ones; ties by pool rank, then
    turn order."""
    stems = turn_stems(views)
    weights = idf(views)
    pos = views.position
    sel = [t for t in selected_ids if t in pos][:b]
    bag: set[str] = set(tokenize(query.text, stemmed=True))
    for t in sel:
        bag |= stems[pos[t]]

    def overlap(st: frozenset[str]) -> float:
        # fsum: a set's iteration order changes with the process's hash seed, and a plain float sum
        # in that order gave near-ties that flipped between two runs (13 of 1,536 LoCoMo E0 orders)
        return math.fsum(weights.get(w, 0.0) for w in st & bag)

    scores: dict[str, float] = {t: round(overlap(stems[pos[t]]), 6) for t in sel}
    chosen = set(sel)
    far = len(pool_rank) + 1
    ranked = []
    for i, st in enumerate(stems):
        tid = views.turns[i].turn_id
        if tid in chosen or not st & bag:
            continue
        s = overlap(st)
        if s > 0:
            ranked.append((-s, pool_rank.get(tid, far), i, tid))
    ranked.sort()
    e0 = list(sel)
    for neg, _, _, tid in ranked[: max(0, b - len(sel))]:
        e0.append(tid)
        scores[tid] = round(-neg, 6)
    return e0, scores


# ----------------------------------------------------------------------------------------------
# The arm
# ----------------------------------------------------------------------------------------------


def stage_one(ctx: ArmContext, query: Query) -> StageOne:
    views, rc = ctx.views, ctx.config.retrieval
    steps: list[Step] = []

    # line 3: expanded pool from the dense view
    pool: list[Hit] = views.dense.search(query.text, rc.pool, ())
    pool_ids = [h.turn_id for h in pool]
    pool_idx = [views.position[t] for t in pool_ids]
    rank = {t: i for i, t in enumerate(pool_ids)}
    steps.append(Step("pool", f"Pool: top {len(pool)} of the dense view", (), 0, {
        "view": "dense",
        "candidates": [{"turn_id": h.turn_id, "score": round(float(h.score), 6), "rank": i}
                       for i, h in enumerate(pool)],
    }))

    # line 4: requirements (one encode call for the question and the requirement texts)
    reqs, source = decompose_with_source(query, ctx.llm)
    vecs = views.encode([query.text] + [r.text for r in reqs])
    qvec, req_vecs = vecs[0], vecs[1:]
    steps.append(Step("requirements", f"{len(reqs)} requirement(s)", (), 0, {
        "requirements": [r.to_dict() for r in reqs], "source": source,
    }))

    # formal context and lattice; line 5: prefilter to P
    rows, kept, lattice = lattice_steps(views, reqs, pool_ids, pool_idx, req_vecs, rc.prefilter)
    steps.extend(lattice)
    kept_ids = [pool_ids[g] for g in kept]

    # lines 6-10: minimum subset, sanitise, fallback
    ranks = list(range(len(pool_ids)))
    raw_ids, failed = None, ""
    if ctx.llm is not None and "select" in getattr(ctx.llm, "roles", ("select",)):  # a replay may decompose only
        try:
            raw_ids = _llm_select(ctx.llm, query, reqs, kept_ids, views)
        except LLMCallFailed as exc:  # the question goes on with the rules' cover, and the trace says so
            failed = f" after the provider call failed: {exc.reason}"
    if raw_ids is not None:
        by_id = {pool_ids[g]: g for g in kept}
        sel, method = [by_id[t] for t in dict.fromkeys(raw_ids) if t in by_id], "llm"  # valid ids, once
    else:
        sel, method = min_cover(rows, kept, ranks)
        method += failed
    sel = coverage_order(sel, rows, ranks)
    fallback = not sel
    if fallback:
        sel = kept[: rc.fallback]
    selected_ids = [pool_ids[g] for g in sel]
    steps.append(selection_step(rows, sel, kept, pool_ids, reqs, method, fallback))

    # line 11: grounding
    e0, scores = ground(views, query, selected_ids, rank, rc.ground)
    steps.append(Step("grounding", f"E0: {len(e0)} source turns", tuple(e0), 0, {
        "e0": e0, "scores": scores,
    }))
    return StageOne(tuple(steps), tuple(e0), tuple(reqs), qvec)


def lattice_steps(views: Any, reqs: Sequence[Requirement], pool_ids: Sequence[str], pool_idx: Sequence[int],
                  req_vecs: np.ndarray, p: int) -> tuple[list[int], list[int], list[Step]]:
    """The formal context (pool x requirements), its concept lattice and the prefilter to ``p``:
    returns the incidence rows, the kept pool positions and the three trace steps."""
    rows = incidence(views, reqs, list(pool_idx), req_vecs)
    fctx = fca.FormalContext(tuple(pool_ids), tuple(r.rid for r in reqs), tuple(rows))
    found = fca.concepts(fctx)
    edges = fca.covering(found)
    lv = fca.levels(found, edges)
    texts = [views.turns[i].text for i in pool_idx]
    pvecs = views.turn_vectors[list(pool_idx)] if len(pool_idx) else np.zeros((0, 1))
    kept, used = prefilter(found, rows, pvecs, texts, p)
    kept_set = set(kept)
    return rows, kept, [
        Step("context", f"Formal context: {len(pool_ids)} x {len(reqs)}", (), 0, {
            "objects": list(pool_ids), "attributes": [r.rid for r in reqs], "incidence": fctx.matrix(),
        }),
        Step("lattice", f"Lattice: {len(found)} concepts", (), 0, {
            "concepts": [{"id": i, "extent": [pool_ids[g] for g in fca.bits(c.extent)],
                          "intent": [reqs[j].rid for j in fca.bits(c.intent)], "level": lv[i]}
                         for i, c in enumerate(found)],
            "edges": [[lo, up] for lo, up in edges], "used": used,
        }),
        Step("prefilter", f"Prefilter: kept {len(kept)} of {len(pool_ids)}", (), 0, {
            "kept": [pool_ids[g] for g in kept], "dropped": [t for g, t in enumerate(pool_ids) if g not in kept_set],
        }),
    ]


def selection_step(rows: Sequence[int], sel: Sequence[int], kept: Sequence[int], pool_ids: Sequence[str],
                   reqs: Sequence[Requirement], method: str, fallback: bool) -> Step:
    """The trace step of a minimum-subset selection: what each selected turn covers, and which
    requirements stay uncovered or could not be covered by any kept candidate."""
    covered, coverable = union(rows, sel), union(rows, kept)
    return Step("selection", f"Selected {len(sel)} turn(s) ({method})", (), 0, {
        "selected": [pool_ids[g] for g in sel],
        "coverage": {pool_ids[g]: [reqs[j].rid for j in fca.bits(rows[g])] for g in sel},
        "uncovered": [r.rid for j, r in enumerate(reqs) if not covered >> j & 1],
        "uncoverable": [r.rid for j, r in enumerate(reqs) if not coverable >> j & 1],
        "fallback": fallback, "method": method,
    })


def _llm_select(llm: Any, query: Query, reqs: Sequence[Requirement], kept_ids: Sequence[str],
                views: Any) -> list[str]:
    """LLMMinSubset: ``selector.select_subset`` over the prefiltered pool; when its selected ids are
    empty, its requirement-coverage output is used instead (Appendix E), in requirement order."""
    texts = fit_for(llm, query.text, [views.by_id[t].text for t in kept_ids])
    pool = list(zip(kept_ids, texts, strict=True))
    ids, coverage = selector.select_subset(llm, query.text, pool, requirements=[r.text for r in reqs])
    if not ids:
        ids = [i for r in reqs for i in coverage.get(r.text, [])]
    return [str(x) for x in ids]


def fca_ms(ctx: ArmContext, query: Query) -> list[Step]:
    """The fca-ms arm: Stage I alone (budget C0); its evidence is E0."""
    return list(stage_one(ctx, query).steps)
