"""The score every turn gets in our arm ``conv-fusion``: the pieces (:func:`score_parts`), their weights
(:class:`OursSettings`, :func:`combine`) and the ranking they give (:func:`ranking`, :func:`top_unseen`).

``method.ours`` explains each piece and what it measured; this module computes them. Pure functions
over arrays aligned with ``views.turns``, plus one small cache of the stemmed BM25 view per scope.
Reads only the question text and date and the store's own turns, never gold ids, answers or types.
What depends on the scope alone (session codes, the stating role) is computed once per views object
(:func:`per_views`): on a long conversation it is most of a question's time
(bench/speed/bench_beam_warm.py).

Does not cover: the variants the shipped setting leaves off (``variants`` composes them from
these functions for the selection protocol and the ablation).
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

import numpy as np

from bfr_core.dates import date_windows, in_windows
from bfr_core.fusion import rank_order, z_fusion, zscore
from bfr_core.lru import LockedLRU
from bfr_core.method.speaker_names import key_position, name_keys, question_words
from bfr_core.method.word_trust import WordTrust, regime, share_found, word_trust
from bfr_core.records import Hit, Query
from bfr_core.retrieval.views.bm25 import BM25View
from bfr_core.sentences import clauses, question_share
from bfr_core.text import fold

W_BM25 = 1.0  # weight of z(BM25) in the text score: the unit every other weight is measured in (FIXED)
_NAME_WORD = re.compile(r"\b[^\W\d_]{3,}\b")  # a word of 3+ letters of any script (a capitalised one is a name)
ROLE_RATIO = 3.0  # median-length ratio that marks the other speaker as an assistant (FIXED)
ROLE_WORDS = 50  # ... whose median turn is a paragraph, at least this many words (FIXED)


@dataclass(frozen=True, slots=True)
class OursSettings:
    """The numbers of conv-fusion's ranking that the selection protocol chooses (bench/quality/bench_ours_selection.py
    ``GRID``) and the shipped setting uses. Numbers it fixes by argument (``FIXED``) are the module
    constants :data:`W_BM25`, :data:`ROLE_RATIO`, :data:`ROLE_WORDS` (and Stage I's cover, always on in ``ours``); the
    variants the shipped setting leaves off (another BM25 index, RRF, the static dense alone, recency,
    session documents, Rocchio feedback) live in ``variants``. The field defaults turn every
    prior, context and session term and the remark gate off (the z-fusion of stemmed BM25 and the dense
    view); the shipped values are :data:`DEFAULT`, read from ``ours.toml`` ``[ours]``."""

    w_dense: float = 1.0  # weight of z(dense view) in the text score
    speaker: float = 0.0  # added to the turns of the one scope speaker the question names
    dates: float = 0.0  # added to turns of sessions dated in a window the question names
    near1: float = 0.0  # weight of the better of the two adjacent turns' prior scores
    near2: float = 0.0  # weight of the better of the two turns two away
    session: float = 0.0  # weight of z(session relevance): the mean of its best session_top turns' text scores
    session_top: int = 1  # how many of a session's best turns make its relevance
    role: float = 0.0  # added to the stating role's turns (stating_role; never fires on symmetric stores)
    remark: str = "off"  # the gate that reads word_trust's signals ("off": words always lead; word_trust.GATES)
    remark_shift: float = 1.0  # in the remark regime: the share of the score given to the dense part alone
    remark_clauses: str = "off"  # the remark regime's dense part: the whole text's ("off") or its clauses' (CLAUSE_MODES)
    set_spread: float = 0.0  # the set at a budget (budget_set): a pick's cost per turn already taken from its session
    set_cover: float = 0.0  # ... its gain per share of Stage I's requirements it supplies first
    set_novelty: float = 0.0  # ... its cost per unit of its largest cosine to a taken turn (words regime)
    remark_novelty: float = 0.0  # the remark regime's set: the share of a pick's gain given to its distance
    set_asks: float = 0.0  # the words regime's set: a pick's cost per share of its words that ask (asking)
    set_reach: int = 0  # ... the turns below the ranking's head it may pick from on their cover gain
    head_model: str = ""  # the words regime's set: trees that re-order its head (head_model; a JSON file beside it)

    def ranking_only(self) -> OursSettings:
        """The same ranking with every set weight off: each budget's set is the ranking's top k."""
        return replace(self, set_spread=0.0, set_cover=0.0, set_novelty=0.0, remark_novelty=0.0, set_asks=0.0,
                       set_reach=0, head_model="")

    def set_terms(self, regime: str) -> tuple[float, float]:
        """(the ranking score's scale, the redundancy weight) of the set at a budget in a question's regime
        (``TurnScores.regime``): in the words regime (1, ``set_novelty``), an open-ended weight beside spread
        and cover; in the remark regime, whose score is the dense ranking's alone, a share ``s`` =
        ``remark_novelty`` (1 - s, s): 0 is the ranking, 1 takes the best turn and then each time the
        turn least like those already taken (maximal marginal relevance's two ends)."""
        if regime == "remark":
            return 1.0 - self.remark_novelty, self.remark_novelty
        return 1.0, self.set_novelty

    def asks_in(self, regime: str) -> float:
        """The set's cost per share of a pick's asking words (:func:`asking`) in a question's regime: ``set_asks``
        in the words regime, 0 in the remark regime (a remark's earlier messages may be questions themselves)."""
        return 0.0 if regime == "remark" else self.set_asks

    def head_in(self, regime: str) -> str:
        """The head model that re-orders the set's head (``head_model``) in a question's regime: ``head_model`` in
        the words regime, none in the remark regime, whose set has its own rule (``remark_novelty``) and whose
        questions the trees are not trained on."""
        return "" if regime == "remark" else self.head_model


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


CLAUSE_MODES = ("off", "mean", "max")  # remark_clauses: the whole text, or the mean / max of its clauses' z-scores
DEFAULT = load_settings()  # the shipped setting (bench_ours_selection's choice on every conversation)


# ----------------------------------------------------------------------------------------------
# Per views object: the stemmed BM25 view (the shared view is built unstemmed) and facts of the scope alone
# ----------------------------------------------------------------------------------------------

# (views, what it made) by (id(views), kind): holding the views keeps id() from being reused while cached.
_SCOPE: LockedLRU[tuple[Any, Any]] = LockedLRU(128)


def per_views(views: Any, kind: tuple, make: Any) -> Any:
    """``make()`` once per views object and ``kind`` (a tuple naming what it makes: a BM25 view, or a
    fact of the scope alone)."""
    key = (id(views), *kind)
    hit = _SCOPE.get(key)
    if hit is not None and hit[0] is views:
        return hit[1]
    return _SCOPE.put(key, (views, make()))[1]


def stemmed_bm25(views: Any) -> BM25View:
    """BM25 over the scope's Porter-stemmed bare turn texts (no "Speaker:" prefix), once per views."""
    return per_views(views, ("stemmed_bm25",), lambda: BM25View(views.turns, stemmed=True, with_speaker=False))


# ----------------------------------------------------------------------------------------------
# Score pieces (pure functions over arrays aligned with views.turns)
# ----------------------------------------------------------------------------------------------


def named_speakers(text: str, speakers: Sequence[str]) -> list[str]:
    """Scope speakers the question names: by name key (``speaker_names``: the first name, or the whole
    label where speakers share a first word, "Speaker 1"), or a capitalised nickname prefix ("Mel") of
    a first name. LongMemEval's "user" / "assistant" are roles, never names.
    """
    ws = question_words(text)
    caps = [fold(w) for w in _NAME_WORD.findall(text) if w[0].isupper() and w[1:].islower()]
    return [sp for sp, key in zip(speakers, name_keys(speakers), strict=True) if key and (
        key_position(ws, key) is not None or (len(key) == 1 and any(key[0].startswith(c) for c in caps)))]


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

    bm25: np.ndarray  # stemmed BM25 over the bare text (stemmed_bm25)
    dense: np.ndarray  # the dense view's similarity (static vectors z-merged with MiniLM on short turns)
    speaker: np.ndarray  # 1.0 on turns of the one speaker the question names
    dates: np.ndarray  # 1.0 on turns whose session is dated in a window the question names
    session: np.ndarray  # session code per turn (scope order)
    stating: np.ndarray  # 1.0 on turns of the stating role (see stating_role); all 0 when roles are symmetric
    named: str
    windows: tuple[tuple[str, str], ...]
    trust: WordTrust | None = None  # what the question's words are worth over this scope (word_trust)
    clauses: tuple[str, ...] = ()  # a remark's clauses (sentences.clauses; () for a question, a request or one clause)
    clause_dense: np.ndarray | None = None  # z(dense view similarity) per clause, one row each (None with no clauses)


@dataclass(frozen=True)
class TurnScores:
    """Every turn's score and its parts (arrays aligned with ``views.turns``), for the trace."""

    text: np.ndarray  # fused BM25 + dense
    speaker: np.ndarray  # speaker prior added
    dates: np.ndarray  # date prior added
    context: np.ndarray  # neighbour contribution added
    final: np.ndarray  # text + speaker + dates + role + context + session (the remark regime: see remark_scores)
    named: str  # the speaker the prior favours ("" = none)
    windows: tuple[tuple[str, str], ...]  # date windows (ISO days) the prior used
    session: np.ndarray | None = None  # session-relevance contribution added
    role: np.ndarray | None = None  # stating-role prior added
    regime: str = "words"  # "words" or "remark" (word_trust.regime)
    trust: WordTrust | None = None  # the signals the regime was read from
    remark: np.ndarray | None = None  # the remark regime's dense part added (None in the words regime)
    antecedent: dict[str, str] | None = None  # the associative step, when it ran: {"source", "statement"}
    clauses: dict[str, Any] | None = None  # the remark regime scored the clauses apart: {"mode", "texts"}

    def parts(self, i: int) -> dict[str, float]:
        out = {"text": round(float(self.text[i]), 4), "speaker": round(float(self.speaker[i]), 4),
               "dates": round(float(self.dates[i]), 4), "context": round(float(self.context[i]), 4)}
        for name in ("session", "role", "remark"):
            arr = getattr(self, name)
            if arr is not None:
                out[name] = round(float(arr[i]), 4)
        return out


def speaker_medians(turns: Sequence[Any]) -> dict[str, float]:
    """Each speaker's median turn length in words, speakers in name order."""
    lengths: dict[str, list[int]] = {}
    for t in turns:
        lengths.setdefault(t.speaker, []).append(len(t.text.split()))
    return {s: float(np.median(v)) for s, v in sorted(lengths.items())}


def stating_role(turns: Sequence[Any], ratio: float = ROLE_RATIO, words: float = ROLE_WORDS) -> str:
    """The speaker whose turns state facts, when the store shows a user/assistant asymmetry; else "".

    Observed, not named: with exactly two speakers, if one speaker's median turn is ``ratio`` times
    longer than the other's and at least ``words`` words (an assistant answering at length, in
    paragraphs), the other (the user) is the one who states facts about themself. Two people chatting
    write alike (LoCoMo's friends), and where one of them is terse ("ok", "sure") the other's median
    message is still a sentence, not a paragraph: no role prior, which would otherwise lift the terse
    speaker's turns.
    """
    medians = speaker_medians(turns)
    if len(medians) != 2 or ratio <= 0:
        return ""
    (a, ma), (b, mb) = medians.items()
    if ma >= max(ratio * max(mb, 1.0), words):
        return b
    if mb >= max(ratio * max(ma, 1.0), words):
        return a
    return ""


def scope_role(views: Any) -> str:
    """:func:`stating_role` of the scope's turns, once per views object (the ranking's role prior and the
    set's asking cost both read it)."""
    return per_views(views, ("stating_role",), lambda: stating_role(views.turns))


def session_max(s: np.ndarray, session: np.ndarray, top: int = 1) -> np.ndarray:
    """Per turn: the mean of the ``top`` best scores of its session (its session's relevance).

    One sort for all sessions (a mask per session costs a pass over the turns per session); each
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


def score_parts(views: Any, query: Query) -> ScoreParts:
    """Everything the ranking reads, unweighted (see :func:`combine`); no setting changes what it reads."""
    turns = views.turns
    n = len(turns)
    bm25 = stemmed_bm25(views)
    bm = np.asarray(bm25.scores(query.text), dtype=np.float64)
    dense = np.asarray(views.dense.scores(query.text), dtype=np.float64) if n else np.zeros(0)
    speakers = tuple(getattr(views.scope, "speakers", ())) or tuple(dict.fromkeys(t.speaker for t in turns))
    named = named_speakers(query.text, speakers)
    favour = named[0] if len(named) == 1 else ""
    spk = np.array([t.speaker == favour for t in turns], dtype=np.float64) if favour else np.zeros(n)
    dates = [t.date for t in turns]
    windows = date_windows(query.text, query.date, [d.year for d in dates if d is not None])
    dmask = in_windows(dates, windows)
    session = session_codes(views)
    role = scope_role(views)
    stating = np.array([t.speaker == role for t in turns], dtype=np.float64) if role else np.zeros(n)
    used = tuple((lo.date().isoformat(), hi.date().isoformat()) for lo, hi in windows) if dmask.any() else ()
    trust = word_trust(query.text, bm, dense, share_found(bm25.query_tokens(query.text), bm25.contains))
    pieces = clauses(query.text, trust.form) if n else ()  # a remark's clauses (none for a question or a request)
    per_clause = np.stack([zscore(np.asarray(views.dense.scores(c), dtype=np.float64)) for c in pieces]) if pieces else None
    return ScoreParts(bm25=bm, dense=dense, speaker=spk, dates=dmask.astype(np.float64), session=session,
                      stating=stating, named=favour, windows=used, trust=trust, clauses=pieces, clause_dense=per_clause)


def words_scores(p: ScoreParts, s: OursSettings, text: np.ndarray) -> TurnScores:
    """The words regime over a text score: the priors, their neighbours' context, session relevance."""
    n = len(text)
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
    return TurnScores(text, spk, dat, ctx, prior + ctx + sess, p.named if s.speaker else "",
                      p.windows if s.dates else (), sess, role, "words", p.trust)


def remark_scores(sc: TurnScores, dense: np.ndarray, shift: float, weight: float) -> TurnScores:
    """The remark regime: every part of ``sc`` scaled by (1 - ``shift``), plus ``shift`` times z(``dense``)
    at ``weight`` (the text score's total weight, so ``shift`` 1.0 is the dense ranking alone)."""
    keep = 1.0 - shift

    def scaled(x: np.ndarray | None) -> np.ndarray | None:
        return None if x is None else keep * x

    remark = shift * weight * zscore(dense)
    return replace(sc, text=keep * sc.text, speaker=keep * sc.speaker, dates=keep * sc.dates, context=keep * sc.context,
                   final=keep * sc.final + remark, session=scaled(sc.session), role=scaled(sc.role), regime="remark",
                   remark=remark)


def in_regime(sc: TurnScores, s: OursSettings, dense: np.ndarray, weight: float,
              clauses: dict[str, Any] | None = None) -> TurnScores:
    """``sc`` as the regime ``s.remark`` reads from its signals gives it (:func:`remark_scores` on a remark,
    recording ``clauses``, :func:`clause_note`, when ``dense`` was read from them)."""
    if regime(sc.trust, s.remark) != "remark":
        return sc
    return replace(remark_scores(sc, dense, s.remark_shift, weight), clauses=clauses)


def remark_similarity(p: ScoreParts, mode: str) -> np.ndarray:
    """The question's dense similarity as the remark regime reads it: the whole text's (``mode`` "off", or
    a text that does not split into clauses), or the mean or max over its clauses of their z-scores."""
    if mode not in CLAUSE_MODES:
        raise ValueError(f"remark_clauses must be one of {', '.join(CLAUSE_MODES)}, not {mode!r}")
    if mode == "off" or p.clause_dense is None:
        return p.dense
    return p.clause_dense.mean(axis=0) if mode == "mean" else p.clause_dense.max(axis=0)


def clause_note(p: ScoreParts, mode: str) -> dict[str, Any] | None:
    """What the trace says when the remark regime scored the clauses apart (None when it did not)."""
    return {"mode": mode, "texts": list(p.clauses)} if mode != "off" and p.clause_dense is not None else None


def combine(p: ScoreParts, s: OursSettings = DEFAULT, remark_dense: np.ndarray | None = None) -> TurnScores:
    """The arm's one ranking from its parts (see the module docstring); ``remark_dense`` replaces the
    question's similarity in the remark regime (``ours.associate``: the question's and its antecedent's);
    without it that regime reads :func:`remark_similarity`."""
    text = z_fusion((p.bm25, p.dense), (W_BM25, s.w_dense), len(p.bm25))
    dense = remark_similarity(p, s.remark_clauses) if remark_dense is None else remark_dense
    return in_regime(words_scores(p, s, text), s, dense, W_BM25 + s.w_dense, clause_note(p, s.remark_clauses))


def score_turns(views: Any, query: Query, s: OursSettings = DEFAULT) -> TurnScores:
    """The arm's one ranking (see the module docstring)."""
    return combine(score_parts(views, query), s)


def asking(views: Any) -> np.ndarray:
    """Per turn, the share of its words that ask (``sentences.question_share``), once per views object; all 0
    where the scope has a stating role (:func:`stating_role`).

    Between peers, a turn that only asks ("What type of music do you play?") holds the other's answer, not a
    fact, and at a small budget it takes the place of a turn that states one; the set at a budget
    (``budget_set``) charges it ``set_asks`` per share. Beside an assistant, the user's questions and requests
    are where the user states their own facts ("Can you suggest a lens for the camera I bought?"), so a store
    with a stating role charges nothing."""
    def make() -> np.ndarray:
        turns = views.turns
        if scope_role(views):
            return _frozen(np.zeros(len(turns)))
        return _frozen(np.array([question_share(t.text) for t in turns], dtype=np.float64))

    return per_views(views, ("asking",), make)


def session_codes(views: Any) -> np.ndarray:
    """Session code per turn (scope order), once per views object."""
    return per_views(views, ("session_codes",), lambda: _frozen(_session_codes(views.turns)))


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


def top_unseen(scores: np.ndarray, ids: Sequence[str], k: int, exclude: frozenset[str],
               order: np.ndarray | None = None) -> list[Hit]:
    """The exclusion rule (Eq. 8) on our ranking: the ``k`` first turns not in ``exclude`` in ``order``
    (positions, best first; the ranking of ``scores`` when None)."""
    out: list[Hit] = []
    for i in ranking(scores) if order is None else order:
        if len(out) >= k:
            break
        if ids[i] not in exclude:
            out.append(Hit(ids[i], float(scores[i]), "ours", len(out)))
    return out
