"""Our own arm ``bfr`` (beyond the paper): more gold evidence at the same evidence-set size.

The paper's gain over one-shot retrieval is mostly a budget effect (BM25+MiniLM fusion at 40 turns
already beats BFR-MV at ~40 turns). This arm keeps the paper's shape - a Stage I pool, requirements,
FCA context, lattice, prefilter, minimum cover and grounding, then budgeted completion rounds with
the exclusion rule - but ranks every turn by one score that knows about conversations:

    text(i)    = z(BM25 over stemmed bare text)(i) + z(dense view)(i)            z-score fusion
    prior(i)   = text(i) + SPEAKER * [the one speaker the question names spoke i]
                         + DATES * [i's session is dated in a window the question names]
    score(i)   = prior(i) + NEAR1 * max(prior(i-1), prior(i+1)) + NEAR2 * max(prior(i-2), prior(i+2))
                 (neighbours within the same session only)
                 + SESSION * z(max text(j) over the turns j of i's session)     session relevance

The dense view is the store's default index: static vectors z-merged with MiniLM on turns that fit
its token cap (views/dense.py). Until issue 16 the arm read the static vectors alone; on dev50's
long user/assistant histories that cost 8 points of Turn Hit at 40 turns (ranking top-40 86.0 ->
94.0, recall_all 85.4 -> 93.8; LoCoMo 93.7 -> 94.0 Gold Hit). Session relevance lets the answer
turn of a session that matches the question well outrank a lone lexical match elsewhere (dev50
Turn Hit at 10 turns 82.0 -> 86.0, LoCoMo Gold Hit at 10 84.0 -> 85.1; bench/out/ours_selection.json).
Stage II keeps the ranking's own order (``dedup`` off): stage2.retain's near-duplicate filter on
static vectors skipped relevant long turns on dev50 (pipeline 92.0 / 91.7 at 40 turns with it).

Measured and left off (0 by default, kept as settings so the selection grid re-checks them;
bench/out/ours_selection.json, ranking top-k): a prior for the "stating" role (observed: with two
speakers, the one whose median turn is 3x shorter; never fires on LoCoMo, no change on dev50 at
0.5), a session-recency term for knowledge updates (0.3: LoCoMo Gold Hit at 10 85.1 -> 84.9, CER
at 40 83.3 -> 82.9, dev50 unchanged), and a session relevance from its best 2-3 turns instead of its
best (LoCoMo -0.2 to -0.5 at 10 turns, dev50 unchanged; bench/explore/explore_bfr_v2.py).

Why each piece (bench/out/ours_ablation.json removes each in turn):
* stemming and z-score fusion: RRF throws the score gaps away; z-scores keep "one turn matches
  every term" apart from "forty turns match one term". BM25 indexes the bare text: the shared
  views' "Speaker: text" prefix spreads the name's weight over every turn of that speaker and of
  turns addressing them, which the speaker prior below does more sharply.
* speaker prior: LoCoMo questions name one of the two speakers ("What does Melanie do to
  destress?"); the answer is in that speaker's turns, whose text rarely repeats the name.
* dates: a question that names a date ("in the first weekend of October 2023", or "two weeks ago"
  with the question's own date) points at sessions dated in or just after that window, because
  conversations report events a few days late.
* conversational context: answers sit one or two turns from the best-matching turn (the question,
  then the reply; the setup, then the detail). Smoothing the score over neighbours ranks the reply
  by its context instead of adding fixed neighbours, which would spend budget on weak ones.

Stage I reuses ``stage1`` (incidence, prefilter, minimum cover, coverage order) over our pool; E0 is
the cover first, then the pool in score order, up to ``b`` turns. Stage II deepens the same ranking
in budgeted rounds (one call per round through the exclusion rule, ``stage2.retain`` for the
near-duplicate filter and k_keep). Target set size: ``b + min(B_new, rounds * keep, calls * keep)``
(``b`` = ``config.retrieval.ground``; MV grid: C0 -> 10, C1 -> 30, C2..C6 -> 40, C7..C9 -> 60).

Explored and dropped (no gain in bench/explore_ours.py): requirement-aimed completion cues (a slot
per uncovered requirement), pseudo-relevance feedback, fixed neighbour expansion, a per-session
diversity penalty, RRF.

Does not cover: LLM selection in Stage I (an LLM, when given, only decomposes), coreference, learned
weights. Reads only the question text and date, never gold ids, answers or categories.
"""

from __future__ import annotations

import calendar
import re
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

import numpy as np

from bfr_core.config import Budget
from bfr_core.dates import find_date_constraints as parse_dates
from bfr_core.method.requirements import decompose_with_source
from bfr_core.method.stage1 import coverage_order, lattice_steps, min_cover, selection_step
from bfr_core.method.stage2 import retain
from bfr_core.records import Hit, Query, Step
from bfr_core.retrieval.views.bm25 import BM25View
from bfr_core.text import words

if TYPE_CHECKING:
    from bfr_core.method.arms import ArmContext


@dataclass(frozen=True, slots=True)
class OursSettings:
    w_bm25: float = 1.0  # weight of z(BM25) in the text score
    w_dense: float = 1.0  # weight of z(dense cosine) in the text score
    stemmed: bool = True  # BM25 over Porter-stemmed tokens (the shared BM25 view is unstemmed)
    bm25_speaker: bool = False  # index "Speaker: text" like the shared views; the speaker prior does it better
    fusion: str = "z"  # "z" (z-score sum) or "rrf" (reciprocal rank, c = 60; ablation only)
    speaker: float = 6.0  # added to the turns of the one scope speaker the question names
    dates: float = 2.0  # added to turns of sessions dated in a window the question names
    near1: float = 0.6  # weight of the better of the two adjacent turns' prior scores
    near2: float = 0.4  # weight of the better of the two turns two away
    cover: bool = True  # Stage I: the pool's minimum requirement cover leads E0
    novelty_slack: int = 5  # extra candidates a call asks for, so near-duplicates do not starve k_keep
    dense_view: bool = True  # dense = the dense view (static z-merged with MiniLM on short turns), not static alone
    session: float = 0.5  # weight of z(session relevance): the mean of its best session_top turns' text scores
    session_top: int = 1  # how many of a session's best turns make its relevance
    role: float = 0.0  # added to the stating role's turns (stating_role; 0 on symmetric stores)
    role_ratio: float = 3.0  # median-length ratio that marks the other speaker as an assistant
    dedup: bool = False  # Stage II skips near-duplicates of kept turns (stage2.retain); off: see docstring
    recency: float = 0.0  # times (session date rank - 0.5): later sessions first among near ties


DEFAULT = OursSettings()
RRF_C = 60.0  # Cormack et al. (2009), as in the hybrid view
DAY_SLACK = (3, 10)  # a named day: sessions from 3 days before to 10 days after it
MONTH_SLACK = 14  # a named month or year: sessions up to two weeks after its end


# ----------------------------------------------------------------------------------------------
# Stemmed BM25 over a scope, cached per views object (the shared view is built unstemmed)
# ----------------------------------------------------------------------------------------------

_BM25: OrderedDict[tuple[int, bool], tuple[Any, BM25View]] = OrderedDict()
_BM25_SIZE = 64


def stemmed_bm25(views: Any, with_speaker: bool = False) -> BM25View:
    key = (id(views), with_speaker)
    hit = _BM25.get(key)
    if hit is not None and hit[0] is views:
        _BM25.move_to_end(key)
        return hit[1]
    view = BM25View(views.turns, stemmed=True, with_speaker=with_speaker)
    _BM25[key] = (views, view)  # holding the views keeps id() from being reused while cached
    while len(_BM25) > _BM25_SIZE:
        _BM25.popitem(last=False)
    return view


# ----------------------------------------------------------------------------------------------
# Score pieces (pure functions over arrays aligned with views.turns)
# ----------------------------------------------------------------------------------------------


def zscore(s: np.ndarray) -> np.ndarray:
    sd = float(s.std()) if len(s) else 0.0
    return (s - s.mean()) / sd if sd > 0 else np.zeros(len(s))


def rank_fusion(parts: Sequence[np.ndarray], weights: Sequence[float]) -> np.ndarray:
    out = np.zeros(len(parts[0]) if parts else 0)
    for w, s in zip(weights, parts, strict=True):
        order = np.lexsort((np.arange(len(s)), -s))
        r = np.empty(len(s))
        r[order] = np.arange(1, len(s) + 1)
        out += w / (RRF_C + r)
    return out * RRF_C  # back to roughly unit scale, so the priors mean the same in both modes


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


_NUM = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
        "eight": 8, "nine": 9, "ten": 10, "few": 3, "couple": 2}
_AGO = re.compile(r"\b(\d+|a|an|one|two|three|four|five|six|seven|eight|nine|ten|few|couple of)\s+"
                  r"(day|week|month|year)s?\s+ago\b", re.IGNORECASE)
_LAST = re.compile(r"\b(?:last|past|previous)\s+(week(?:end)?|month|year|monday|tuesday|wednesday|thursday|"
                   r"friday|saturday|sunday)\b|\byesterday\b", re.IGNORECASE)
_UNIT_DAYS = {"day": 1, "week": 7, "month": 30, "year": 365}


def date_windows(text: str, qdate: datetime | None, years: Sequence[int]) -> list[tuple[datetime, datetime]]:
    """Session-date windows the question points at.

    Named dates (``requirements.parse_dates``) widen forward by a slack because conversations report
    events late; a month without a year is tried in every year of ``years`` (the scope's session
    years). Relative times ("two weeks ago", "last weekend") need the question date.
    """
    out: list[tuple[datetime, datetime]] = []
    for _, (y, m, d) in parse_dates(text):
        if m is None and y is None:
            continue
        for yy in ([y] if y else sorted(set(years))):
            if m and d:
                try:
                    day = datetime(yy, m, d)
                except ValueError:
                    continue
                out.append((day - timedelta(days=DAY_SLACK[0]), day + timedelta(days=DAY_SLACK[1])))
            elif m:
                end = datetime(yy, m, calendar.monthrange(yy, m)[1], 23, 59)
                out.append((datetime(yy, m, 1), end + timedelta(days=MONTH_SLACK)))
            else:
                out.append((datetime(yy, 1, 1), datetime(yy, 12, 31, 23, 59) + timedelta(days=MONTH_SLACK)))
    if qdate is not None:
        for mt in _AGO.finditer(text):
            word = mt.group(1).lower().split()[0]
            days = (int(word) if word.isdigit() else _NUM.get(word, 1)) * _UNIT_DAYS[mt.group(2).lower()]
            slack = timedelta(days=max(2, days // 4))
            centre = qdate - timedelta(days=days)
            out.append((centre - slack, centre + slack))
        for mt in _LAST.finditer(text):
            unit = (mt.group(1) or "").lower()
            days = {"week": 7, "weekend": 7, "month": 30, "year": 365}.get(unit, 7 if unit else 1)
            out.append((qdate - timedelta(days=2 * days), qdate))
    return out


def in_windows(dates: Sequence[datetime | None], windows: Sequence[tuple[datetime, datetime]]) -> np.ndarray:
    """Per turn: its session date falls in a window. A window holding every turn says nothing."""
    if not windows:
        return np.zeros(len(dates), dtype=bool)
    mask = np.array([d is not None and any(lo <= d <= hi for lo, hi in windows) for d in dates], dtype=bool)
    return mask if not mask.all() else np.zeros(len(dates), dtype=bool)


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


@dataclass(frozen=True)
class TurnScores:
    """Every turn's score and its parts (arrays aligned with ``views.turns``), for the trace."""

    text: np.ndarray  # fused BM25 + dense
    speaker: np.ndarray  # speaker prior added
    dates: np.ndarray  # date prior added
    context: np.ndarray  # neighbour contribution added
    final: np.ndarray  # text + speaker + dates + context + session + role + recency
    named: str  # the speaker the prior favours ("" = none)
    windows: tuple[tuple[str, str], ...]  # date windows (ISO days) the prior used
    session: np.ndarray | None = None  # session-relevance contribution added
    role: np.ndarray | None = None  # stating-role prior added
    recency: np.ndarray | None = None  # recency contribution added

    def parts(self, i: int) -> dict[str, float]:
        out = {"text": round(float(self.text[i]), 4), "speaker": round(float(self.speaker[i]), 4),
               "dates": round(float(self.dates[i]), 4), "context": round(float(self.context[i]), 4)}
        for name in ("session", "role", "recency"):
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
    """Per turn: the mean of the ``top`` best scores of its session (its session's relevance)."""
    out = np.zeros(len(s))
    for c in np.unique(session):
        m = session == c
        vals = np.sort(s[m])[::-1][:top]
        out[m] = vals.mean()
    return out


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
    session = _session_codes(turns)
    role = stating_role(turns, s.role_ratio)
    stating = np.array([t.speaker == role for t in turns], dtype=np.float64) if role else np.zeros(n)
    used = tuple((lo.date().isoformat(), hi.date().isoformat()) for lo, hi in windows) if dmask.any() else ()
    return ScoreParts(np.asarray(bm, dtype=np.float64), dense, static, spk, dmask.astype(np.float64), session,
                      session_recency(turns, session), stating, favour, used)


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
    final = prior + ctx + sess + rec
    return TurnScores(text, spk, dat, ctx, final, p.named if s.speaker else "", p.windows if s.dates else (),
                      sess, role, rec)


def score_turns(views: Any, query: Query, s: OursSettings = DEFAULT) -> TurnScores:
    """The arm's one ranking (see the module docstring)."""
    return combine(score_parts(views, query, s), s)


def _session_codes(turns: Sequence[Any]) -> np.ndarray:
    codes: dict[str, int] = {}
    return np.array([codes.setdefault(t.session_id, len(codes)) for t in turns], dtype=np.int64)


def ranking(scores: np.ndarray) -> np.ndarray:
    """Positions by descending score, ties by turn order."""
    return np.lexsort((np.arange(len(scores)), -scores))


def top_unseen(scores: np.ndarray, ids: Sequence[str], k: int, exclude: frozenset[str]) -> list[Hit]:
    """The exclusion rule (Eq. 8) on our ranking: the ``k`` best turns not in ``exclude``."""
    out: list[Hit] = []
    for i in ranking(scores):
        if len(out) >= k:
            break
        if ids[i] not in exclude:
            out.append(Hit(ids[i], float(scores[i]), "ours", len(out)))
    return out


# ----------------------------------------------------------------------------------------------
# Stage I over our pool
# ----------------------------------------------------------------------------------------------


def target_size(ground: int, b: Budget) -> int:
    """Evidence-set size the arm aims at: E0 plus what the completion budget can retain."""
    return ground + max(0, min(b.new, b.rounds * b.keep, b.calls * b.keep))


def stage_one(ctx: ArmContext, query: Query, sc: TurnScores, s: OursSettings) -> tuple[list[Step], list[str]]:
    """Pool, requirements, FCA context / lattice / prefilter / cover over the pool, grounding -> E0."""
    views, rc = ctx.views, ctx.config.retrieval
    order = ranking(sc.final)
    pool_idx = [int(i) for i in order[: rc.pool]]
    pool_ids = [views.turns[i].turn_id for i in pool_idx]
    steps = [Step("pool", f"Pool: top {len(pool_ids)} by context-aware hybrid score", (), 0, {
        "view": "ours", "named_speaker": sc.named, "date_windows": [list(w) for w in sc.windows],
        "candidates": [{"turn_id": t, "score": round(float(sc.final[i]), 4), "rank": r, **sc.parts(i)}
                       for r, (i, t) in enumerate(zip(pool_idx, pool_ids, strict=True))],
    })]
    reqs, source = decompose_with_source(query, ctx.llm)
    steps.append(Step("requirements", f"{len(reqs)} requirement(s)", (), 0, {
        "requirements": [r.to_dict() for r in reqs], "source": source}))
    selected: list[str] = []
    if s.cover and pool_idx and reqs:
        selected = _cover_steps(ctx, reqs, pool_idx, pool_ids, steps)
    b = rc.ground
    e0 = list(dict.fromkeys(selected[:b] + pool_ids))[:b]
    if len(e0) < b:  # a pool smaller than b (tiny scopes, small config): continue down the ranking
        e0 = list(dict.fromkeys(e0 + [views.turns[int(i)].turn_id for i in order]))[:b]
    pos = views.position
    steps.append(Step("grounding", f"E0: {len(e0)} source turns (cover, then score order)", tuple(e0), 0, {
        "e0": e0, "scores": {t: round(float(sc.final[pos[t]]), 4) for t in e0}, "cover": selected[:b],
    }))
    return steps, e0


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


def complete(ctx: ArmContext, query: Query, e0: Sequence[str], sc: TurnScores, s: OursSettings) -> list[Step]:
    """Budgeted rounds (Algorithm 2's counters and stopping rule); one call per round."""
    b, views = ctx.budget, ctx.views
    ids = tuple(t.turn_id for t in views.turns)
    evidence = list(dict.fromkeys(e0))
    t = b_call = b_new = 0
    steps: list[Step] = []
    budget_d = {"rounds": b.rounds, "calls": b.calls, "new": b.new, "keep": b.keep}
    while t < b.rounds and b_call < b.calls and b_new < b.new and len(evidence) < len(ids):
        start = frozenset(evidence)
        want = min(b.keep, b.new - b_new)
        hits = top_unseen(sc.final, ids, want + s.novelty_slack, start)
        b_call += 1
        kept = (retain([hits], evidence, want, views, sc.final) if s.dedup
                else [h.turn_id for h in hits[:want]])
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
    """The arm with explicit settings (the ablations in bench/bench_ours.py call this)."""
    sc = score_turns(ctx.views, query, settings)
    steps, e0 = stage_one(ctx, query, sc, settings)
    if ctx.budget.rounds and ctx.budget.calls and ctx.budget.new:
        steps += complete(ctx, query, e0, sc, settings)
    return steps


def bfr(ctx: ArmContext, query: Query) -> list[Step]:
    """Our arm at the context's budget (default C6 -> 40 turns)."""
    return run(ctx, query, DEFAULT)
