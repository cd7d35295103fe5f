"""The variants of our arm's ranking that its shipped setting leaves off: what the weight-selection
protocol searches and the ablation compares against.

Covers: :class:`Variant`, the shipped ``OursSettings`` plus choices and terms that are not settings of
the arm: the BM25 index ("plain" = the shared unstemmed view, "stemmed+speaker" = "Speaker: text"
indexed), w_bm25 (the unit, 0 = dense alone), RRF instead of z-score fusion, the static vectors' cosine
instead of the dense view, recency, the session BM25 and session topic terms (and the topic's vectors),
Rocchio feedback in the remark regime, and Stage I without its cover. :func:`variant_parts` computes
what they read beside ``turn_scores.score_parts`` (and what the head model's features read,
``head_model``); :func:`combine` weighs them through ``turn_scores``' own ``z_fusion``, ``words_scores``
and ``in_regime`` (no patching); ``ours.run_variant`` is the arm over a variant. ``Variant()`` (every
extra off) scores exactly as ``turn_scores.combine`` does.

The terms: recency = times (session date rank - 0.5); the session document = doc_bm25 * z(stemmed BM25
over each session's joined text) + doc_dense * z(cosine of the question with the session's normalised
mean turn vector) added after the context and session terms.

Does not cover: choosing among the variants (the selection bench), the shipped ranking
(``turn_scores``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

import numpy as np

from bfr_core.fusion import rank_fusion, rank_order, z_fusion, zscore
from bfr_core.method import turn_scores
from bfr_core.method.head_model import PARTS as HEAD_PARTS
from bfr_core.method.turn_scores import OursSettings, ScoreParts, TurnScores, per_views
from bfr_core.method.word_trust import WordTrust, word_trust
from bfr_core.records import Query, Turn
from bfr_core.retrieval.views.bm25 import BM25View
from bfr_core.retrieval.views.dense import query_vector

INDEXES = ("stemmed", "plain", "stemmed+speaker")  # Variant.bm25 values ("stemmed" is conv-fusion's)
DOC_VIEWS = ("static", "short")  # Variant.doc_view values
ROCCHIO_BETA = 0.75  # Rocchio's usual feedback weight beside the query's 1.0 (SMART; Manning et al., ch. 9)


@dataclass(frozen=True)
class Variant:
    """conv-fusion's ranking at ``settings`` with the pieces its shipped setting leaves off (defaults: off, as shipped)."""

    settings: OursSettings = turn_scores.DEFAULT
    bm25: str = "stemmed"  # which lexical scores (INDEXES)
    w_bm25: float = turn_scores.W_BM25  # weight of z(BM25) in the text score
    fusion: str = "z"  # "z" (z-score sum) or "rrf" (reciprocal rank, c = 60)
    dense_view: bool = True  # the dense view, or the static base vectors' cosine alone
    recency: float = 0.0  # times (session date rank - 0.5): later sessions first among near ties
    doc_bm25: float = 0.0  # weight of z(stemmed BM25 of the session's joined text)
    doc_dense: float = 0.0  # weight of z(cosine of the question with the session's mean turn vector): its topic
    doc_view: str = "static"  # the topic's vectors: "short" (MiniLM, turns within its cap) or "static"
    prf: int = 0  # in the remark regime: Rocchio feedback from the dense view's top-prf turns (0 = off)
    cover: bool = True  # Stage I's minimum requirement cover leads E0


@dataclass(frozen=True)
class VariantParts:
    """``turn_scores.score_parts`` plus what the variants read (each only when asked for, arrays aligned with turns)."""

    core: ScoreParts
    bm25: dict[str, np.ndarray]  # by Variant.bm25
    trust: dict[str, WordTrust | None]  # word_trust over each of those
    dense_static: np.ndarray | None = None
    recency: np.ndarray | None = None
    doc_bm25: np.ndarray | None = None
    doc_dense: dict[str, np.ndarray] = field(default_factory=dict)  # by Variant.doc_view
    dense_prf: dict[int, np.ndarray] = field(default_factory=dict)  # by Variant.prf


# ----------------------------------------------------------------------------------------------
# What the variants read
# ----------------------------------------------------------------------------------------------


def speaker_bm25(views: Any) -> BM25View:
    """Stemmed BM25 over "Speaker: text" (as the shared views index), once per views."""
    return per_views(views, ("bm25", "stemmed+speaker"), lambda: BM25View(views.turns, stemmed=True, with_speaker=True))


def session_docs(turns: Sequence[Turn]) -> list[Turn]:
    """One pseudo-turn per session (scope order): the session's turns' texts joined, first turn's ids."""
    first: dict[str, Turn] = {}
    texts: dict[str, list[str]] = {}
    for t in turns:
        first.setdefault(t.session_id, t)
        texts.setdefault(t.session_id, []).append(t.text)
    return [replace(first[sid], text="\n".join(texts[sid])) for sid in first]


def session_bm25(views: Any) -> BM25View:
    """Stemmed BM25 whose documents are the scope's sessions (:func:`session_docs`), once per views."""
    return per_views(views, ("session_bm25",),
                     lambda: BM25View(session_docs(views.turns), stemmed=True, with_speaker=False))


def session_sums(vectors: np.ndarray, session: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per session (code order): the sum of its turns' vectors and that sum's L2 norm (no query in it)."""
    n_sessions = int(session.max()) + 1 if len(session) else 0
    sums = np.zeros((n_sessions, vectors.shape[1] if vectors.ndim == 2 else 0))
    np.add.at(sums, session, np.asarray(vectors, dtype=np.float64))
    return sums, np.linalg.norm(sums, axis=1)


def session_mean_cosine(vectors: np.ndarray, query: np.ndarray, session: np.ndarray,
                        sums: tuple[np.ndarray, np.ndarray] | None = None) -> np.ndarray:
    """Per session (code order): cosine of ``query`` with the L2-normalised mean of its turns' vectors
    (``sums``: :func:`session_sums` of the same vectors, when already made)."""
    total, norms = sums if sums is not None else session_sums(vectors, session)
    return np.where(norms > 0, total @ np.asarray(query, dtype=np.float64) / np.maximum(norms, 1e-12), 0.0)


def session_topic(views: Any, text: str, session: np.ndarray, view: str = "static") -> np.ndarray:
    """Per turn: the cosine of ``text`` with its session's mean vector (:func:`session_mean_cosine`).

    ``view`` "short" reads the dense view's MiniLM vectors (zero rows, the turns over its token cap,
    drop out of the mean); a scope without them, or "static", reads the base vectors.
    """
    if view not in DOC_VIEWS:
        raise ValueError(f"doc_view must be 'static' or 'short', not {view!r}")
    dense = getattr(views, "dense", None)
    short = getattr(dense, "short_vectors", None)
    if view == "short" and short is not None and getattr(dense, "short_mask", np.zeros(0, bool)).any():
        sums = per_views(views, ("session_sums", "short", hash(session.tobytes())),
                         lambda: session_sums(short, session))
        return session_mean_cosine(short, query_vector(dense.short_model, text), session, sums)[session]
    sums = per_views(views, ("session_sums", "static", hash(session.tobytes())),
                     lambda: session_sums(views.turn_vectors, session))
    return session_mean_cosine(views.turn_vectors, views.encode([text])[0], session, sums)[session]


def session_recency(turns: Sequence[Any], session: np.ndarray) -> np.ndarray:
    """Per turn: its session's date rank scaled to [0, 1] (ties and missing dates by scope order)."""
    n = len(turns)
    if not n or session.max() == 0:
        return np.full(n, 0.5)
    first: dict[int, Any] = {}
    for t, c in zip(turns, session, strict=True):
        first.setdefault(int(c), t.date)
    codes = sorted(first, key=lambda c: (first[c] is None, first[c] or datetime.min, c))
    rank = {c: r / (len(codes) - 1) for r, c in enumerate(codes)}
    return np.array([rank[int(c)] for c in session])


def rocchio_vector(vectors: np.ndarray, query: np.ndarray, top: np.ndarray, beta: float = ROCCHIO_BETA) -> np.ndarray:
    """The unit query moved toward the unit mean of ``vectors[top]`` (rows of zeros ignored)."""
    rows = vectors[top]
    rows = rows[np.linalg.norm(rows, axis=1) > 0]
    q = np.asarray(query, dtype=np.float64)
    q = q / max(float(np.linalg.norm(q)), 1e-12)
    if not len(rows):
        return q
    c = rows.mean(axis=0)
    return q + beta * c / max(float(np.linalg.norm(c)), 1e-12)


def rocchio_scores(dense: Any, text: str, m: int, beta: float = ROCCHIO_BETA) -> np.ndarray:
    """Dense pseudo-relevance feedback: the dense view's scores for ``text`` moved toward its own ``m``
    best turns (each vector set, static and MiniLM, moved in its own space; merged as the view merges)."""
    first = np.asarray(dense.scores(text), dtype=np.float64)
    top = rank_order(first)[:m]
    base = dense.vectors @ rocchio_vector(dense.vectors, query_vector(dense.model, text), top, beta)
    mask = getattr(dense, "short_mask", None)
    if dense.short_model is None or mask is None or not mask.any():
        return np.asarray(base, dtype=np.float64)
    short = dense.short_vectors @ rocchio_vector(dense.short_vectors, query_vector(dense.short_model, text), top, beta)
    out = np.empty(len(base), dtype=np.float64)
    out[mask] = zscore(short[mask])
    out[~mask] = zscore(base[~mask])
    return out


def needs(variants: Iterable[Variant]) -> dict[str, Any]:
    """The :func:`variant_parts` arguments that cover every variant given (and, for one whose settings name a
    head model, everything its features read: ``head_model.PARTS``)."""
    vs = list(variants)
    head = any(v.settings.head_model for v in vs)
    indexes = [v.bm25 for v in vs] + (list(HEAD_PARTS["indexes"]) if head else [])
    doc_views = [v.doc_view for v in vs if v.doc_dense] + (list(HEAD_PARTS["doc_views"]) if head else [])
    return {"indexes": tuple(dict.fromkeys(indexes)), "doc_views": tuple(dict.fromkeys(doc_views)),
            "prfs": tuple(dict.fromkeys(v.prf for v in vs if v.prf)),
            "static": head or any(not v.dense_view for v in vs), "recency": head or any(v.recency for v in vs),
            "doc_bm25": head or any(v.doc_bm25 for v in vs)}


def variant_parts(views: Any, query: Query, indexes: Sequence[str] = ("stemmed",), doc_views: Sequence[str] = (),
                  prfs: Sequence[int] = (), static: bool = False, recency: bool = False,
                  doc_bm25: bool = False, core: ScoreParts | None = None) -> VariantParts:
    """``turn_scores.score_parts`` (``core``, when already made for this question) and, as asked, the other
    BM25 indexes (each with its word-trust signals), the static cosine, recency, the session BM25, the
    session topic per vector set, Rocchio feedback."""
    p = turn_scores.score_parts(views, query) if core is None else core
    n, text = len(views.turns), query.text
    bm25: dict[str, np.ndarray] = {}
    for idx in indexes:
        if idx not in INDEXES:
            raise ValueError(f"bm25 must be one of {', '.join(INDEXES)}, not {idx!r}")
        bm25[idx] = (p.bm25 if idx == "stemmed" else
                     np.asarray(views.bm25_scores(text) if idx == "plain" else speaker_bm25(views).scores(text),
                                dtype=np.float64))
    share = p.trust.term_share if p.trust is not None else 1.0
    trust = {idx: p.trust if idx == "stemmed" else word_trust(text, x, p.dense, share) for idx, x in bm25.items()}
    empty = np.zeros(0)
    out = VariantParts(p, bm25, trust)
    if static:
        out = replace(out, dense_static=np.asarray(views.turn_vectors @ views.encode([text])[0], dtype=np.float64)
                      if n else empty)
    if recency:
        out = replace(out, recency=per_views(views, ("session_recency",), lambda: session_recency(views.turns, p.session)))
    if doc_bm25:
        out = replace(out, doc_bm25=session_bm25(views).scores(text)[p.session] if n else empty)
    return replace(out, doc_dense={v: session_topic(views, text, p.session, v) if n else empty for v in doc_views},
                   dense_prf={m: rocchio_scores(views.dense, text, m) if n else empty for m in prfs})


# ----------------------------------------------------------------------------------------------
# The ranking a variant gives
# ----------------------------------------------------------------------------------------------


def text_score(vp: VariantParts, v: Variant) -> np.ndarray:
    """The variant's BM25 and dense (or static) scores fused: z-scores (conv-fusion's) or RRF."""
    p, n = vp.core, len(vp.core.bm25)
    pairs = ((vp.bm25[v.bm25], v.w_bm25), (p.dense if v.dense_view else vp.dense_static, v.settings.w_dense))
    if v.fusion == "z":
        return z_fusion([x for x, _ in pairs], [w for _, w in pairs], n)
    if v.fusion == "rrf":
        keep = [(x, w) for x, w in pairs if w]
        return rank_fusion([x for x, _ in keep], [w for _, w in keep]) if keep else np.zeros(n)
    raise ValueError(f"fusion must be 'z' or 'rrf', not {v.fusion!r}")


def session_doc(vp: VariantParts, v: Variant) -> np.ndarray | None:
    """doc_bm25 * z(session BM25) + doc_dense * z(session topic), per turn; None when both are off."""
    if not (v.doc_bm25 or v.doc_dense):
        return None
    return z_fusion([vp.doc_bm25, vp.doc_dense.get(v.doc_view)], [v.doc_bm25, v.doc_dense],
                                len(vp.core.bm25))


def combine(vp: VariantParts, v: Variant) -> TurnScores:
    """The variant's ranking: its text score, conv-fusion's priors, context and session term (``words_scores``),
    recency and the session document added, then the regime (``in_regime``; Rocchio feedback there)."""
    s = v.settings
    sc = turn_scores.words_scores(vp.core, s, text_score(vp, v))
    final = sc.final
    if v.recency:
        final = final + v.recency * (vp.recency - 0.5)
    doc = session_doc(vp, v)
    if doc is not None:
        final = final + doc
    sc = replace(sc, final=final, trust=vp.trust[v.bm25])
    if v.prf:  # Rocchio feedback replaces the remark's own similarity
        return turn_scores.in_regime(sc, s, vp.dense_prf[v.prf], v.w_bm25 + s.w_dense)
    return turn_scores.in_regime(sc, s, turn_scores.remark_similarity(vp.core, s.remark_clauses), v.w_bm25 + s.w_dense,
                                 turn_scores.clause_note(vp.core, s.remark_clauses))


def score_variant(views: Any, query: Query, v: Variant) -> TurnScores:
    """:func:`combine` over the parts ``v`` reads."""
    return combine(variant_parts(views, query, **needs([v])), v)

