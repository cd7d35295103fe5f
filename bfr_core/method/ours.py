"""Our own arm (beyond the paper), registered as ``conv-fusion`` (``bfr`` is accepted as an alias,
``arm_names``): conversation-aware score fusion, for more gold evidence at the same evidence-set size.

It keeps the paper's shape - a Stage I pool, requirements, FCA context, lattice, prefilter, minimum
cover and grounding, then budgeted completion rounds with the exclusion rule - but ranks every turn
by one score that knows about conversations:

    text(i)    = z(BM25 over stemmed bare text)(i) + W_DENSE * z(dense view)(i)     z-score fusion
    prior(i)   = text(i) + SPEAKER * [the one speaker the question names spoke i]
                         + DATES * [i's session is dated in a window the question names]
                         + ROLE * [the stating role spoke i]        (user/assistant stores only)
    score(i)   = prior(i) + NEAR1 * max(prior(i-1), prior(i+1)) + NEAR2 * max(prior(i-2), prior(i+2))
                 (neighbours within the same session only)
                 + SESSION * z(mean text score of the SESSION_TOP best turns of i's session)

The capitals are ``turn_scores.OursSettings``; the shipped values are ``ours.toml`` ``[ours]``.

Why each piece:
* stemming and z-score fusion: RRF throws the score gaps away; z-scores keep "one turn matches
  every term" apart from "forty turns match one term". BM25 indexes the bare text: a "Speaker: text"
  prefix would spread the name's weight over every turn of that speaker, which the speaker prior
  does more sharply.
* speaker prior: a question that names one of two speakers ("What does Melanie do to destress?") is
  answered in that speaker's turns, whose text rarely repeats the name.
* dates: a question that names a date ("in the first weekend of October 2023", or "two weeks ago"
  with the question's own date) points at sessions dated in or just after that window, because
  conversations report events a few days late.
* conversational context: answers sit one or two turns from the best-matching turn (the question,
  then the reply). Smoothing the score over neighbours ranks the reply by its context instead of
  adding fixed neighbours, which would spend budget on weak ones.
* stating role: with two speakers, the one whose median turn is 3x shorter than the other's, when
  the other's median turn is a paragraph of 50 words or more (a user beside an assistant), states
  the facts; it never fires on two friends, nor on a terse person beside a chatty one.

The remark regime: where the question's words carry little (``method.word_trust``: a remark rather
than a question or a request), every part above is scaled by (1 - REMARK_SHIFT) and REMARK_SHIFT
times the remark's z-scored dense similarity is added, read clause by clause where REMARK_CLAUSES
says so (``bfr_core.sentences``: each clause may match a different earlier message). The Stage I
cover, which matches requirement words, is skipped there (E0 = score order). The pool step records
the regime, its signals and the clauses. With a model, :func:`associate` also has it write the
earlier message the question refers back to and averages its similarities in (HyDE's recipe).

The set at each budget (``budget_set``): the ranking's first 40 turns are re-selected greedily, each
pick paying SET_SPREAD per turn already taken from its session, earning SET_COVER per share of Stage I's
requirements it supplies first and, between peers, paying SET_ASKS per share of its words that ask; every
prefix is the greedy set at that budget, and at 40 turns the set is the ranking's top 40 unless SET_REACH
lets a turn from below the head in on its cover gain. In the words regime, when the settings name a head
model (``head_model``: gradient-boosted trees over the ranking's parts, Stage I's requirement share and each
turn's relation to the head's first turns), the 40 turns are then re-ordered by its score: the set at 40
stays the same, the smaller sets change. Stage I reuses ``stage1`` over this pool (E0 = the cover first,
then the set order, up to ``b`` turns); Stage II deepens the same order in budgeted rounds (one call per
round through the exclusion rule).

Every number is either a coordinate of the selection grid, chosen by bench/quality/bench_ours_selection.py
with conversation-level cross-validation, or fixed by an argument that reads no benchmark question;
the variants the selection searched but the shipped setting leaves off are composed from
``turn_scores``' functions in ``variants``.

Does not cover: LLM selection in Stage I (an LLM, when given, decomposes and, in the remark regime,
writes the antecedent, nothing else), coreference, learned weights. Reads only the question text and
date, never gold ids, answers or categories.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import numpy as np

from bfr_core.fusion import zscore
from bfr_core.llm.base import LLMCallFailed
from bfr_core.method import head_model, variants
from bfr_core.method.budget_set import WINDOW, set_order
from bfr_core.method.cover import coverage_order, min_cover
from bfr_core.method.requirements import decompose_with_source
from bfr_core.method.stage1 import incidence, lattice_steps, selection_step
from bfr_core.method.turn_scores import (
    DEFAULT,
    OursSettings,
    ScoreParts,
    TurnScores,
    asking,
    combine,
    ranking,
    remark_similarity,
    score_parts,
    session_codes,
    top_unseen,
)
from bfr_core.records import Query, Step
from bfr_core.roles import antecedent

if TYPE_CHECKING:
    from bfr_core.method.arms import ArmContext


# ----------------------------------------------------------------------------------------------
# Stage I over our pool
# ----------------------------------------------------------------------------------------------


def initial_evidence(ctx: ArmContext, query: Query, sc: TurnScores, cover: bool = True,
              settings: OursSettings = DEFAULT,
              vp: variants.VariantParts | None = None) -> tuple[list[Step], list[str], np.ndarray]:
    """Pool, requirements, FCA context / lattice / prefilter / cover over the pool, grounding -> E0
    (``cover`` False: E0 in set order alone, the ablation of bench/quality/bench_ours.py); also returns the set
    order (:func:`set_order_of` at ``settings``; ``vp``: what its head model reads, made here when the settings
    name one and none is given) that E0 and Stage II follow after the cover."""
    views, rc = ctx.views, ctx.config.retrieval
    if settings.head_in(sc.regime) and vp is None:
        vp = variants.variant_parts(views, query, **head_model.PARTS)
    order = ranking(sc.final)
    pool_idx = [int(i) for i in order[: rc.pool]]
    pool_ids = [views.turns[i].turn_id for i in pool_idx]
    steps = [Step("pool", f"Pool: top {len(pool_ids)} by context-aware hybrid score", (), 0, {
        "view": "ours", "named_speaker": sc.named, "date_windows": [list(w) for w in sc.windows],
        "regime": sc.regime,
        "signals": sc.trust.to_dict() if sc.trust is not None else None,
        "antecedent": sc.antecedent,
        "clauses": sc.clauses,
        "candidates": [{"turn_id": t, "score": round(float(sc.final[i]), 4), "rank": r, **sc.parts(i)}
                       for r, (i, t) in enumerate(zip(pool_idx, pool_ids, strict=True))],
    })]
    # the remark regime skips the cover, so its requirements are only shown: no model call is spent on them
    remark = sc.regime == "remark"
    reqs, source = decompose_with_source(query, None if remark else ctx.llm)
    if remark and ctx.llm is not None:
        source += " (the remark regime uses no cover: the model was not asked)"
    steps.append(Step("requirements", f"{len(reqs)} requirement(s)", (), 0, {
        "requirements": [r.to_dict() for r in reqs], "source": source}))
    selected: list[str] = []
    # the cover matches the question's requirement words; in the remark regime those words were judged to
    # carry little (word_trust), so E0 is the score order there
    if cover and pool_idx and reqs and not remark:
        selected = _cover_steps(ctx, reqs, pool_idx, pool_ids, steps)
    sets = set_order_of(views, sc, [] if remark else reqs, settings, vp)
    b = rc.ground
    ranked = [views.turns[int(i)].turn_id for i in sets]
    e0 = list(dict.fromkeys(selected[:b] + ranked))[:b]
    pos = views.position
    steps.append(Step("grounding", f"E0: {len(e0)} source turns (cover, then set order)", tuple(e0), 0, {
        "e0": e0, "scores": {t: round(float(sc.final[pos[t]]), 4) for t in e0}, "cover": selected[:b],
        "set": {"spread": settings.set_spread, "cover": settings.set_cover,
                "novelty": settings.set_terms(sc.regime)[1], "asks": settings.asks_in(sc.regime), "window": WINDOW,
                "reach": settings.set_reach, "head_model": settings.head_in(sc.regime),
                "moved": [t for t, i in zip(ranked[:b], order[:b], strict=False) if pos[t] != int(i)]},
    }))
    return steps, e0, sets


def set_order_of(views: Any, sc: TurnScores, reqs: Sequence[Any], settings: OursSettings,
                 vp: variants.VariantParts | None = None) -> np.ndarray:
    """``budget_set.set_order`` over this scope: sessions from the store, Stage I's incidence over the head
    (requirement vectors encoded only when the cover weight or the head model reads them, once per set of
    head turns), the scope's turn vectors and its turns' asking shares (``turn_scores.asking``, read only when
    the asking cost or the head model does); then, when ``settings`` names a head model for the question's
    regime (``OursSettings.head_in``), its head re-ordered by it (``head_model.reselect`` over ``vp``, the
    question's parts with what its features read)."""
    made: dict[frozenset[int], dict[int, int]] = {}

    def rows_of(head: np.ndarray) -> list[int]:
        idx = [int(i) for i in head]
        key = frozenset(idx)
        if key not in made:  # the head model reads the same turns the cover did, in set order
            made[key] = dict(zip(idx, incidence(views, reqs, idx, views.encode([r.text for r in reqs])), strict=True))
        return [made[key][i] for i in idx]

    scale, novelty = settings.set_terms(sc.regime)
    asks = settings.asks_in(sc.regime)
    order = set_order(sc.final, session_codes(views), settings.set_spread, settings.set_cover, rows_of,
                      len(reqs), novelty=novelty, vectors=views.turn_vectors, scale=scale, asks=asks,
                      asking=asking(views) if asks else None, reach=settings.set_reach)
    model = settings.head_in(sc.regime)
    if not model:
        return order
    if vp is None:
        raise ValueError(f"the head model {model!r} reads the question's variant parts; none given")
    return head_model.reselect(order, sc, vp, rows_of, len(reqs), views.turn_vectors, asking(views), model)


def _cover_steps(ctx: ArmContext, reqs: Sequence[Any], pool_idx: list[int], pool_ids: list[str],
                 steps: list[Step]) -> list[str]:
    """The FCA part of Stage I, through stage1's own functions; appends its steps, returns the cover."""
    views, rc = ctx.views, ctx.config.retrieval
    req_vecs = views.encode([r.text for r in reqs])
    rows, kept, lattice = lattice_steps(views, reqs, pool_ids, pool_idx, req_vecs, rc.prefilter)
    steps.extend(lattice)
    ranks = list(range(len(pool_ids)))
    sel, method = min_cover(rows, kept, ranks)
    sel = coverage_order(sel, rows, ranks)
    steps.append(selection_step(rows, sel, kept, pool_ids, reqs, method, False))
    selected = [pool_ids[g] for g in sel]
    return selected


# ----------------------------------------------------------------------------------------------
# Stage II: deepen the same ranking under the budget
# ----------------------------------------------------------------------------------------------


def complete(ctx: ArmContext, query: Query, e0: Sequence[str], sc: TurnScores,
             order: np.ndarray | None = None) -> list[Step]:
    """Budgeted rounds (Algorithm 2's counters and stopping rule); one call per round, each taking the
    next unseen turns in ``order`` (the set order; the ranking when None)."""
    b, views = ctx.budget, ctx.views
    ids = tuple(t.turn_id for t in views.turns)
    evidence = list(dict.fromkeys(e0))
    t = b_call = b_new = 0
    steps: list[Step] = []
    budget_d = {"rounds": b.rounds, "calls": b.calls, "new": b.new, "keep": b.keep}
    while t < b.rounds and b_call < b.calls and b_new < b.new and len(evidence) < len(ids):
        start = frozenset(evidence)
        want = min(b.keep, b.new - b_new)
        hits = top_unseen(sc.final, ids, want, start, order)
        b_call += 1
        kept = [h.turn_id for h in hits]
        evidence.extend(kept)
        b_new += len(kept)
        t += 1
        pos = views.position
        action = {"view": "ours", "index": "hybrid+context", "cue": query.text, "skipped": False,
                  "candidates": [{"turn_id": h.turn_id, "score": round(h.score, 4), **sc.parts(pos[h.turn_id])}
                                 for h in hits]}
        stop = ("rounds" if t >= b.rounds else "calls" if b_call >= b.calls else "new" if b_new >= b.new
                else "scope" if len(evidence) >= len(ids) else None)
        steps.append(Step("round", f"Round {t}: +{len(kept)} via ours", tuple(evidence), b_call, {
            "round": t, "schedule": "ours", "actions": [action], "retained": kept,
            "counters": {"rounds": t, "calls": b_call, "new": b_new}, "budget": budget_d, "stopped_by": stop,
        }))
        if not kept:
            break  # nothing new can come from the same ranking
    return steps


# ----------------------------------------------------------------------------------------------
# The arm
# ----------------------------------------------------------------------------------------------


def run(ctx: ArmContext, query: Query, settings: OursSettings = DEFAULT) -> list[Step]:
    """The arm with explicit settings (and, with a model, the associative step: :func:`associate`)."""
    parts = score_parts(ctx.views, query)
    sc = associate(ctx, query, parts, settings, combine(parts, settings))
    vp = (variants.variant_parts(ctx.views, query, core=parts, **head_model.PARTS) if settings.head_in(sc.regime)
          else None)
    return run_scored(ctx, query, sc, settings=settings, vp=vp)


def run_variant(ctx: ArmContext, query: Query, v: variants.Variant) -> list[Step]:
    """The arm (Stage I, Stage II) over a variant's ranking (``variants.combine``): the ablation's arms."""
    vp = variants.variant_parts(ctx.views, query, **variants.needs([v]))
    return run_scored(ctx, query, variants.combine(vp, v), v.cover, v.settings, vp)


def associate(ctx: ArmContext, query: Query, parts: ScoreParts, settings: OursSettings, sc: TurnScores) -> TurnScores:
    """The associative step: in the remark regime and with a model (``ctx.llm``), the model
    writes the earlier message the question refers back to (``roles.antecedent``) and the regime's
    dense part becomes the mean of the question's and that message's z-scored dense similarities, as
    hypothetical-document retrieval averages the query with its generated documents (HyDE; one to one,
    no weight chosen). Anything else - the words regime, no model, the offline rules' "undecided", a
    failed call - leaves ``sc`` as it is (a failure or "undecided" is recorded in it for the trace)."""
    if sc.regime != "remark" or ctx.llm is None:
        return sc

    source = str(getattr(ctx.llm, "label", "llm"))
    try:
        statement = antecedent.antecedent(ctx.llm, query.text)
    except LLMCallFailed as exc:
        return replace(sc, antecedent={"source": f"{source} (call failed: {exc.reason})", "statement": ""})
    if not statement:
        return replace(sc, antecedent={"source": f"{source} (undecided)", "statement": ""})
    other = np.asarray(ctx.views.dense.scores(statement), dtype=np.float64)
    return replace(with_antecedent(parts, settings, other), antecedent={"source": source, "statement": statement})


def with_antecedent(parts: ScoreParts, settings: OursSettings, other: np.ndarray) -> TurnScores:
    """The ranking with the antecedent's dense similarities ``other`` (aligned with the turns) averaged
    one to one with the question's (``turn_scores.remark_similarity``: its clauses' where the setting
    reads them), z-scored each, in the remark regime's dense part."""
    own = remark_similarity(parts, settings.remark_clauses)
    return combine(parts, settings, remark_dense=(zscore(own) + zscore(other)) / 2)


def run_scored(ctx: ArmContext, query: Query, sc: TurnScores, cover: bool = True,
               settings: OursSettings = DEFAULT, vp: variants.VariantParts | None = None) -> list[Step]:
    """The arm over given turn scores (:func:`run_variant` passes a variant's; ``cover``: see
    :func:`initial_evidence`; ``settings``: the set weights read; ``vp``: the question's variant parts, passed
    to :func:`initial_evidence`, which makes them when the head model needs them and none are given)."""
    steps, e0, order = initial_evidence(ctx, query, sc, cover, settings, vp)
    if ctx.budget.rounds and ctx.budget.calls and ctx.budget.new:
        steps += complete(ctx, query, e0, sc, order)
    return steps


def conv_fusion(ctx: ArmContext, query: Query) -> list[Step]:
    """The ``conv-fusion`` arm at the context's budget (default C6 -> 40 turns)."""
    return run(ctx, query, DEFAULT)
