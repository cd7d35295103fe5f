"""The score every turn gets in our arm ``bfr``: the pieces (:func:`score_parts`), their weights
(:class:`OursSettings`, :func:`combine`) and the ranking they give (:func:`ranking`, :func:`top_unseen`).

``method.ours`` explains each piece and what it measured; this module computes them. Pure functions
over arrays aligned with ``views.turns``, plus one small cache of the stemmed BM25 view per scope.
Reads only the question text and date and the store's own turns, never gold ids, answers or types.
What depends on the scope alone (session codes, the stating role, each session's summed vectors) is
computed once per views object (:func:`_cached`): on a 1,556-turn BEAM 1M conversation it was 75% of
a warm question's time (bench/out/beam_warm_profile.json).
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass, fields, replace
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np

from bfr_core.dates import date_windows, in_windows
from bfr_core.lru import LockedLRU
from bfr_core.method.word_trust import WordTrust, regime, share_found, word_trust
from bfr_core.records import Hit, Query, Turn
from bfr_core.retrieval.views.bm25 import BM25View
from bfr_core.retrieval.views.common import rank_order
from bfr_core.retrieval.views.dense import query_vector
from bfr_core.retrieval.views.hybrid import RRF_C, rrf
from bfr_core.text import words


@dataclass(frozen=True, slots=True)
class OursSettings:
    """The numbers of bfr's ranking: what the selection protocol searches (bench/bench_ours_selection.py
    ``GRID``) plus the few it fixes by argument (``FIXED``). The field defaults are the protocol's start,
    the z-fusion baseline (every prior, context and session term off); the shipped values are
    :data:`DEFAULT`, read from ``ours.toml`` ``[ours]``."""

    w_bm25: float = 1.0  # weight of z(BM25) in the text score (the unit; fixed)
    w_dense: float = 1.0  # weight of z(dense cosine) in the text score
    stemmed: bool = True  # BM25 over Porter-stemmed tokens (the shared BM25 view is unstemmed)
    bm25_speaker: bool = False  # index "Speaker: text" like the shared views
    fusion: str = "z"  # "z" (z-score sum) or "rrf" (reciprocal rank, c = 60)
    speaker: float = 0.0  # added to the turns of the one scope speaker the question names
    dates: float = 0.0  # added to turns of sessions dated in a window the question names
    near1: float = 0.0  # weight of the better of the two adjacent turns' prior scores
    near2: float = 0.0  # weight of the better of the two turns two away
    cover: bool = True  # Stage I: the pool's minimum requirement cover leads E0 (the paper's; fixed)
    dense_view: bool = False  # dense = the dense view (static z-merged with MiniLM on short turns), or static alone
    session: float = 0.0  # weight of z(session relevance): the mean of its best session_top turns' text scores
    session_top: int = 1  # how many of a session's best turns make its relevance
    role: float = 0.0  # added to the stating role's turns (stating_role; never fires on symmetric stores)
    role_ratio: float = 3.0  # median-length ratio that marks the other speaker as an assistant (fixed)
    recency: float = 0.0  # times (session date rank - 0.5): later sessions first among near ties
    doc_bm25: float = 0.0  # weight of z(stemmed BM25 of the session's joined text)
    doc_dense: float = 0.0  # weight of z(cosine of the question with the session's mean turn vector): its topic
    doc_view: str = "static"  # the topic's vectors: "short" (MiniLM, turns within its cap) or "static" (the base model)
    remark: str = "off"  # the gate that reads word_trust's signals ("off": words always lead; word_trust.GATES)
    remark_shift: float = 1.0  # in the remark regime: the share of the score given to the dense part alone
    prf: int = 0  # in the remark regime: Rocchio feedback from the dense view's top-prf turns (0 = off)


SETTINGS_FILE = Path(__file__).with_name("ours.toml")


def load_settings(path: str | Path = SETTINGS_FILE) -> OursSettings:
    """OursSettings from a TOML file's ``[ours]`` table (fields not named keep their defaults); a
    missing table or an unknown key is a one-line error naming the file."""
    data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    if "ours" not in data:
        raise ValueError(f"{path}: no [ours] table")
    known = {f.name for f in fields(OursSettings)}
    unknown = sorted(set(data["ours"]) - known)
    if unknown:
        raise ValueError(f"{path}: unknown key(s) in [ours]: {', '.join(unknown)}")
    return OursSettings(**data["ours"])


DEFAULT = load_settings()  # the shipped setting (bench_ours_selection's choice on every conversation)


# ----------------------------------------------------------------------------------------------
# Per views object: the stemmed BM25 views (the shared view is built unstemmed) and facts of the scope alone
# ----------------------------------------------------------------------------------------------

# (views, what it made) by (id(views), kind): holding the views keeps id() from being reused while cached.
_SCOPE: LockedLRU[tuple[Any, Any]] = LockedLRU(128)


def _cached(views: Any, kind: tuple, make: Any) -> Any:
    """``make()`` once per views object and ``kind`` (a BM25 view, or a fact of the scope alone)."""
    key = (id(views), *kind)
    hit = _SCOPE.get(key)
    if hit is not None and hit[0] is views:
        return hit[1]
    return _SCOPE.put(key, (views, make()))[1]


def stemmed_bm25(views: Any, with_speaker: bool = False) -> BM25View:
    return _cached(views, ("turns", with_speaker),
                        lambda: BM25View(views.turns, stemmed=True, with_speaker=with_speaker))


def session_docs(turns: Sequence[Turn]) -> list[Turn]:
    """One pseudo-turn per session (scope order): the session's turns' texts joined, first turn's ids."""
    first: dict[str, Turn] = {}
    texts: dict[str, list[str]] = {}
    for t in turns:
        first.setdefault(t.session_id, t)
        texts.setdefault(t.session_id, []).append(t.text)
    return [replace(first[sid], text="\n".join(texts[sid])) for sid in first]


def session_bm25(views: Any) -> BM25View:
    """Stemmed BM25 whose documents are the scope's sessions (:func:`session_docs`), cached per views."""
    return _cached(views, ("sessions",),
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
    if view not in ("static", "short"):
        raise ValueError(f"doc_view must be 'static' or 'short', not {view!r}")
    dense = getattr(views, "dense", None)
    short = getattr(dense, "short_vectors", None)
    if view == "short" and short is not None and getattr(dense, "short_mask", np.zeros(0, bool)).any():
        sums = _cached(views, ("session_sums", "short", hash(session.tobytes())),
                       lambda: _frozen(*session_sums(short, session)))
        return session_mean_cosine(short, query_vector(dense.short_model, text), session, sums)[session]
    sums = _cached(views, ("session_sums", "static", hash(session.tobytes())),
                   lambda: _frozen(*session_sums(views.turn_vectors, session)))
    return session_mean_cosine(views.turn_vectors, views.encode([text])[0], session, sums)[session]


# ----------------------------------------------------------------------------------------------
# Score pieces (pure functions over arrays aligned with views.turns)
# ----------------------------------------------------------------------------------------------


def zscore(s: np.ndarray) -> np.ndarray:
    sd = float(s.std()) if len(s) else 0.0
    return (s - s.mean()) / sd if sd > 0 else np.zeros(len(s))


def rank_fusion(parts: Sequence[np.ndarray], weights: Sequence[float]) -> np.ndarray:
    """The hybrid view's RRF (c = 60), times c: back to roughly unit scale, so the priors mean the same."""
    return rrf(list(parts), RRF_C, list(weights)) * RRF_C if parts else np.zeros(0)


def named_speakers(text: str, speakers: Sequence[str]) -> list[str]:
    """Scope speakers the question names: by first name, or a capitalised nickname prefix ("Mel").

    LongMemEval's "user" / "assistant" are roles, never names.
    """
    ws = set(words(text))
    caps = [w.lower() for w in re.findall(r"\b[A-Z][a-z]{2,}\b", text)]
    out = []
    for sp in speakers:
        first = (sp.split() or [""])[0].lower()
        if not first or first in ("user", "assistant"):
            continue
        if first in ws or any(first.startswith(c) for c in caps):
            out.append(sp)
    return out


def neighbour_max(s: np.ndarray, session: np.ndarray, d: int) -> np.ndarray:
    """max(s(i-d), s(i+d)) over neighbours in the same session; 0 where there is none."""
    n = len(s)
    best = np.full(n, -np.inf)
    if n > d:
        same = session[d:] == session[:-d]
        best[d:] = np.where(same, s[:-d], -np.inf)
        best[:-d] = np.maximum(best[:-d], np.where(same, s[d:], -np.inf))
    return np.where(np.isfinite(best), best, 0.0)


@dataclass(frozen=True)
class ScoreParts:
    """What the ranking reads from the store and the question, before any weight (arrays aligned with turns)."""

    bm25: np.ndarray  # stemmed BM25 (or the shared view's, per settings)
    dense: np.ndarray  # the dense view's similarity (static vectors z-merged with MiniLM on short turns)
    dense_static: np.ndarray  # cosine with the static base vectors alone (the arm's dense before issue 16)
    speaker: np.ndarray  # 1.0 on turns of the one speaker the question names
    dates: np.ndarray  # 1.0 on turns whose session is dated in a window the question names
    session: np.ndarray  # session code per turn (scope order)
    recency: np.ndarray  # session date rank in [0, 1] (0 = oldest, 1 = newest; 0.5 without dates)
    stating: np.ndarray  # 1.0 on turns of the stating role (see stating_role); all 0 when roles are symmetric
    named: str
    windows: tuple[tuple[str, str], ...]
    doc_bm25: np.ndarray | None = None  # per turn: its session document's stemmed BM25 (session_bm25)
    doc_dense: np.ndarray | None = None  # per turn: its session's mean-vector cosine (session_mean_cosine)
    trust: WordTrust | None = None  # what the question's words are worth over this scope (word_trust)
    dense_prf: np.ndarray | None = None  # the dense view's scores for the Rocchio-moved query (rocchio_scores)


@dataclass(frozen=True)
class TurnScores:
    """Every turn's score and its parts (arrays aligned with ``views.turns``), for the trace."""

    text: np.ndarray  # fused BM25 + dense
    speaker: np.ndarray  # speaker prior added
    dates: np.ndarray  # date prior added
    context: np.ndarray  # neighbour contribution added
    final: np.ndarray  # text + speaker + dates + context + session + role + recency + session_doc
    named: str  # the speaker the prior favours ("" = none)
    windows: tuple[tuple[str, str], ...]  # date windows (ISO days) the prior used
    session: np.ndarray | None = None  # session-relevance contribution added
    role: np.ndarray | None = None  # stating-role prior added
    recency: np.ndarray | None = None  # recency contribution added
    session_doc: np.ndarray | None = None  # session-document contribution added (None when its weights are 0)
    topic_weight: float = 0.0  # the weight the session topic carried
    regime: str = "words"  # "words" or "remark" (word_trust.regime)
    trust: WordTrust | None = None  # the signals the regime was read from
    remark: np.ndarray | None = None  # the remark regime's dense part added (None in the words regime)

    def parts(self, i: int) -> dict[str, float]:
        out = {"text": round(float(self.text[i]), 4), "speaker": round(float(self.speaker[i]), 4),
               "dates": round(float(self.dates[i]), 4), "context": round(float(self.context[i]), 4)}
        for name in ("session", "role", "recency", "session_doc", "remark"):
            arr = getattr(self, name)
            if arr is not None:
                out[name] = round(float(arr[i]), 4)
        return out


def stating_role(turns: Sequence[Any], ratio: float) -> str:
    """The speaker whose turns state facts, when the store shows a user/assistant asymmetry; else "".

    Observed, not named: with exactly two speakers, if one speaker's median turn is ``ratio`` times
    longer than the other's (an assistant answering at length), the other (the user) is the one who
    states facts about themself. LoCoMo's two friends write turns of similar length: no role prior.
    """
    lengths: dict[str, list[int]] = {}
    for t in turns:
        lengths.setdefault(t.speaker, []).append(len(t.text.split()))
    if len(lengths) != 2 or ratio <= 0:
        return ""
    (a, la), (b, lb) = sorted(lengths.items())
    ma, mb = float(np.median(la)), float(np.median(lb))
    if ma >= ratio * max(mb, 1.0):
        return b
    if mb >= ratio * max(ma, 1.0):
        return a
    return ""


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


def session_max(s: np.ndarray, session: np.ndarray, top: int = 1) -> np.ndarray:
    """Per turn: the mean of the ``top`` best scores of its session (its session's relevance).

    One sort for all sessions (a mask per session was 50 ms a question on 1,556 turns); each
    session's best scores are summed best first, as ``np.sort(...)[::-1][:top].mean()`` did."""
    n = len(s)
    if not n:
        return np.zeros(0)
    order = np.lexsort((-s, session))  # by session, best score first
    codes, vals = session[order], np.asarray(s, dtype=np.float64)[order]
    starts = np.flatnonzero(np.r_[True, codes[1:] != codes[:-1]])
    rank = np.arange(n) - np.repeat(starts, np.diff(np.r_[starts, n]))
    keep = rank < top
    size = int(session.max()) + 1
    total = np.zeros(size)
    for r in range(min(top, int(rank.max()) + 1)):  # best first, one rank at a time: the old summation order
        at = rank == r
        total[codes[at]] += vals[at]
    count = np.bincount(codes[keep], minlength=size)
    return (total / np.maximum(count, 1))[session]


def score_parts(views: Any, query: Query, s: OursSettings = DEFAULT) -> ScoreParts:
    """Everything the ranking reads, unweighted (see :func:`combine`)."""
    turns = views.turns
    n = len(turns)
    bm = stemmed_bm25(views, s.bm25_speaker).scores(query.text) if s.stemmed else views.bm25_scores(query.text)
    # cosine with the scope's own turn vectors; views.encode reuses the dense view's query cache
    static = np.asarray(views.turn_vectors @ views.encode([query.text])[0], dtype=np.float64) if n else np.zeros(0)
    dense = np.asarray(views.dense.scores(query.text), dtype=np.float64) if n else np.zeros(0)
    speakers = tuple(getattr(views.scope, "speakers", ())) or tuple(dict.fromkeys(t.speaker for t in turns))
    named = named_speakers(query.text, speakers)
    favour = named[0] if len(named) == 1 else ""
    spk = np.array([t.speaker == favour for t in turns], dtype=np.float64) if favour else np.zeros(n)
    dates = [t.date for t in turns]
    windows = date_windows(query.text, query.date, [d.year for d in dates if d is not None])
    dmask = in_windows(dates, windows)
    session = _cached(views, ("session_codes",), lambda: _frozen(_session_codes(turns)))
    role = _cached(views, ("stating_role", s.role_ratio), lambda: stating_role(turns, s.role_ratio))
    stating = np.array([t.speaker == role for t in turns], dtype=np.float64) if role else np.zeros(n)
    used = tuple((lo.date().isoformat(), hi.date().isoformat()) for lo, hi in windows) if dmask.any() else ()
    doc_bm = doc_dn = None
    if n and s.doc_bm25:
        doc_bm = session_bm25(views).scores(query.text)[session]
    if n and s.doc_dense:
        doc_dn = session_topic(views, query.text, session, s.doc_view)
    bm = np.asarray(bm, dtype=np.float64)
    vocab = stemmed_bm25(views)
    trust = word_trust(query.text, bm, dense, share_found(vocab.query_tokens(query.text), vocab.contains))
    prf = rocchio_scores(views.dense, query.text, s.prf) if n and s.prf else None
    return ScoreParts(bm, dense, static, spk, dmask.astype(np.float64), session,
                      session_recency(turns, session), stating, favour, used, doc_bm, doc_dn, trust, prf)


ROCCHIO_BETA = 0.75  # Rocchio's usual feedback weight beside the query's 1.0 (SMART; Manning et al., ch. 9)


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


def combine(p: ScoreParts, s: OursSettings = DEFAULT) -> TurnScores:
    """The arm's one ranking from its parts (see the module docstring)."""
    n = len(p.bm25)
    dense = p.dense if s.dense_view else p.dense_static
    keep = [(x, w) for x, w in ((p.bm25, s.w_bm25), (dense, s.w_dense)) if w]
    if not keep:
        text = np.zeros(n)
    elif s.fusion == "rrf":
        text = rank_fusion([x for x, _ in keep], [w for _, w in keep])
    else:
        text = sum((w * zscore(x) for x, w in keep), start=np.zeros(n))
    spk = s.speaker * p.speaker
    dat = s.dates * p.dates
    role = s.role * p.stating
    prior = text + spk + dat + role
    ctx = np.zeros(n)
    if s.near1:
        ctx += s.near1 * neighbour_max(prior, p.session, 1)
    if s.near2:
        ctx += s.near2 * neighbour_max(prior, p.session, 2)
    sess = s.session * zscore(session_max(text, p.session, s.session_top)) if s.session else np.zeros(n)
    rec = s.recency * (p.recency - 0.5)
    doc = session_doc(p, s)
    final = prior + ctx + sess + rec + (doc if doc is not None else 0.0)
    out = TurnScores(text, spk, dat, ctx, final, p.named if s.speaker else "", p.windows if s.dates else (),
                     sess, role, rec, doc, s.doc_dense, "words", p.trust)
    if regime(p.trust, s.remark) == "remark":
        out = remark_scores(out, p, s)
    return out


def remark_scores(sc: TurnScores, p: ScoreParts, s: OursSettings) -> TurnScores:
    """The remark regime: every part scaled by (1 - remark_shift), plus remark_shift times the dense
    part alone (the dense view, or its Rocchio feedback with ``prf``) at the text score's total weight."""
    dense = p.dense_prf if s.prf else p.dense
    if dense is None:
        raise ValueError("prf set after score_parts ran without it")
    keep = 1.0 - s.remark_shift

    def scaled(x: np.ndarray | None) -> np.ndarray | None:
        return None if x is None else keep * x

    remark = s.remark_shift * (s.w_bm25 + s.w_dense) * zscore(dense)
    return replace(sc, text=keep * sc.text, speaker=keep * sc.speaker, dates=keep * sc.dates, context=keep * sc.context,
                   final=keep * sc.final + remark, session=scaled(sc.session), role=scaled(sc.role),
                   recency=scaled(sc.recency), session_doc=scaled(sc.session_doc), regime="remark", remark=remark)


def session_doc(p: ScoreParts, s: OursSettings) -> np.ndarray | None:
    """doc_bm25 * z(session BM25) + doc_dense * z(session mean cosine), per turn; None when both are off."""
    terms = [(w, x) for w, x in ((s.doc_bm25, p.doc_bm25), (s.doc_dense, p.doc_dense)) if w]
    if not terms:
        return None
    if any(x is None for _, x in terms):
        raise ValueError("session-document weights set after score_parts ran without them")
    return sum((w * zscore(x) for w, x in terms), start=np.zeros(len(p.bm25)))


def score_turns(views: Any, query: Query, s: OursSettings = DEFAULT) -> TurnScores:
    """The arm's one ranking (see the module docstring)."""
    return combine(score_parts(views, query, s), s)


def _frozen(*arrays: np.ndarray) -> Any:
    """Arrays shared by every question of a scope, made read-only (one array, or a tuple of them)."""
    for a in arrays:
        a.setflags(write=False)
    return arrays[0] if len(arrays) == 1 else arrays


def _session_codes(turns: Sequence[Any]) -> np.ndarray:
    codes: dict[str, int] = {}
    return np.array([codes.setdefault(t.session_id, len(codes)) for t in turns], dtype=np.int64)


def ranking(scores: np.ndarray) -> np.ndarray:
    """Positions by descending score, ties by turn order (``views.common.rank_order``)."""
    return rank_order(scores)


def top_unseen(scores: np.ndarray, ids: Sequence[str], k: int, exclude: frozenset[str]) -> list[Hit]:
    """The exclusion rule (Eq. 8) on our ranking: the ``k`` best turns not in ``exclude``."""
    out: list[Hit] = []
    for i in ranking(scores):
        if len(out) >= k:
            break
        if ids[i] not in exclude:
            out.append(Hit(ids[i], float(scores[i]), "ours", len(out)))
    return out
