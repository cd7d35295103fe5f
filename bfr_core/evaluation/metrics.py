"""Per-question retrieval metrics, and their aggregation. Pure functions, no store access.

Covers
------
* The paper's evidence-coverage proxies (Section 3, eq. 3-4 and 9; Appendix N):
  Gold Hit, Turn Hit, Evidence Recall (ER), Complete Evidence Recall (CER). These treat the
  evidence set E as a *set* of source-turn ids; order and duplicates do not matter.
* The official LongMemEval retrieval metrics, replicated from ``src/retrieval/eval_utils.py`` of
  xiaowu0162/LongMemEval (``evaluate_retrieval``, ``ndcg``, ``dcg``,
  ``evaluate_retrieval_turn2session``): recall_any@k, recall_all@k, ndcg_any@k. These are
  *positional*: they read the first k entries of a ranked list.
* :func:`score_question` bundles the retrieval metrics for one question; :func:`aggregate` averages
  rows of them as percentages, overall and per group.

Does not cover: answer scores (``answer_f1``), LLM judges or LLM-Suff@Set (``roles``), significance
tests (``stats``), anything that reads the store.

Conventions: inputs are never mutated; a bare ``str`` where a collection of ids is expected raises
``TypeError`` (iterating it would silently score characters). Undefined values are ``None`` and
aggregation skips them, so each mean has its own denominator (reported as ``n_scored``).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass

import numpy as np

__all__ = [
    "QuestionScores",
    "RetrievalScores",
    "RATE_METRICS",
    "MEAN_METRICS",
    "gold_hit",
    "turn_hit",
    "evidence_recall",
    "complete_evidence_recall",
    "dcg",
    "recall_any",
    "recall_all",
    "ndcg_any",
    "evaluate_retrieval",
    "evaluate_retrieval_turn2session",
    "noans_id",
    "official_scores",
    "score_question",
    "aggregate",
]


def _idset(ids: Iterable[str], name: str) -> frozenset[str]:
    if isinstance(ids, str):
        raise TypeError(f"{name} must be a collection of ids, not a single string: {ids!r}")
    return frozenset(ids)


def _check_k(k: int) -> None:
    # Official code slices rankings[:k]; a negative k would silently drop items from the end.
    if k < 0:
        raise ValueError(f"k must be >= 0, got {k}")


# --------------------------------------------------------------------------------------------
# The paper's set-level proxies (eq. 3, 4, 9)
# --------------------------------------------------------------------------------------------


def gold_hit(evidence: Iterable[str], gold: Iterable[str]) -> float | None:
    """G(q,E) = 1[src(E) ∩ G(q) ≠ ∅]; ``None`` when G(q) is empty (undefined, eq. 3)."""
    g = _idset(gold, "gold")
    if not g:
        return None
    return 1.0 if g & _idset(evidence, "evidence") else 0.0


def turn_hit(evidence: Iterable[str], answer_turns: Iterable[str]) -> float:
    """TH(q,E) = 1[src(E) ∩ H(q) ≠ ∅] (eq. 4).

    H(q) may be empty; that is a miss (0.0), not undefined, because the paper and LongMemEval
    average Turn Hit over all questions with unannotated items counted as misses.
    """
    h = _idset(answer_turns, "answer_turns")
    return 1.0 if h & _idset(evidence, "evidence") else 0.0


def evidence_recall(evidence: Iterable[str], gold: Iterable[str]) -> float | None:
    """ER(q,E) = |src(E) ∩ G(q)| / |G(q)|; ``None`` when G(q) is empty (eq. 9)."""
    g = _idset(gold, "gold")
    if not g:
        return None
    return len(g & _idset(evidence, "evidence")) / len(g)


def complete_evidence_recall(evidence: Iterable[str], gold: Iterable[str]) -> float | None:
    """CER(q,E) = 1[G(q) ⊆ src(E)]; ``None`` when G(q) is empty (eq. 9).

    Undefined rather than vacuously 1 for an empty gold set, unlike LongMemEval's recall_all.
    """
    g = _idset(gold, "gold")
    if not g:
        return None
    return 1.0 if g <= _idset(evidence, "evidence") else 0.0


# --------------------------------------------------------------------------------------------
# LongMemEval retrieval metrics (xiaowu0162/LongMemEval, src/retrieval/eval_utils.py)
# --------------------------------------------------------------------------------------------


def dcg(relevances: Sequence[float], k: int) -> float:
    """Official ``dcg``: rel[0] + sum_{i>=1} rel[i] / log2(i + 1), over the first k entries.

    Note the discount: position 0 and position 1 are both undiscounted (log2(2) = 1), position 2
    is divided by log2(3), ... This is the original Järvelin-Kekäläinen form, not the
    rel_i / log2(i + 2) form most libraries use; we keep it so ndcg_any matches the official
    numbers bit for bit (numpy is used for the same summation order).
    """
    _check_k(k)
    rel = np.asarray(relevances, dtype=float)[:k]
    if rel.size:
        return float(rel[0] + np.sum(rel[1:] / np.log2(np.arange(2, rel.size + 1))))
    return 0.0


def recall_any(ranked: Sequence[str], gold: Collection[str], k: int) -> float:
    """Official recall_any@k = 1[gold ∩ top-k ≠ ∅]; 0.0 for an empty gold set."""
    _check_k(k)
    g = _idset(gold, "gold")
    top = _idset(ranked[:k], "ranked")
    return float(any(doc in top for doc in g))


def recall_all(ranked: Sequence[str], gold: Collection[str], k: int) -> float:
    """Official recall_all@k = 1[gold ⊆ top-k]; 1.0 for an empty gold set (``all([])``).

    :func:`score_question` reports ``None`` instead for empty gold, because our contract averages
    recall_all over questions with gold turns only.
    """
    _check_k(k)
    g = _idset(gold, "gold")
    top = _idset(ranked[:k], "ranked")
    return float(all(doc in top for doc in g))


def ndcg_any(
    ranked: Sequence[str], gold: Collection[str], k: int, corpus: Sequence[str] | None = None
) -> float:
    """Official ``ndcg``: binary relevance of the top-k positions over the ideal DCG@k.

    The ideal ranking is the corpus relevance vector sorted descending, so the ideal DCG counts
    one relevant item per *corpus position* holding a gold id. Without ``corpus`` the corpus is
    taken to be ``ranked`` plus every gold id missing from it: exact when ``ranked`` ranks the
    whole haystack (as the official code always does), and otherwise the same value up to float
    rounding as long as the real corpus has at least k items (the official sum runs over
    min(k, len(corpus)) terms, and numpy's pairwise sum depends on the length).
    Positions are positional: a duplicated id in ``ranked`` counts twice, exactly as duplicated
    corpus ids do in the official code. Returns 0.0 when the ideal DCG is 0 (no gold, or k = 0).
    """
    _check_k(k)
    g = _idset(gold, "gold")
    if isinstance(ranked, str):
        raise TypeError("ranked must be a sequence of ids, not a single string")
    actual = [1 if doc in g else 0 for doc in ranked[:k]]
    if corpus is None:
        present = set(ranked)
        corpus = [*ranked, *(doc for doc in sorted(g) if doc not in present)]
    elif isinstance(corpus, str):
        raise TypeError("corpus must be a sequence of ids, not a single string")
    ideal = sorted((1 if doc in g else 0 for doc in corpus), reverse=True)
    ideal_dcg = dcg(ideal, k)
    if ideal_dcg == 0:
        return 0.0
    return dcg(actual, k) / ideal_dcg


@dataclass(frozen=True, slots=True)
class RetrievalScores:
    """What the official ``evaluate_retrieval`` returns, plus the k it used."""

    recall_any: float
    recall_all: float
    ndcg_any: float
    k: int


def evaluate_retrieval(
    ranked: Sequence[str], gold: Collection[str], k: int = 10, corpus: Sequence[str] | None = None
) -> RetrievalScores:
    """Official ``evaluate_retrieval`` on a ranked list of ids (instead of indices into a corpus)."""
    return RetrievalScores(
        recall_any(ranked, gold, k), recall_all(ranked, gold, k), ndcg_any(ranked, gold, k, corpus), k
    )


def strip_turn_id(turn_id: str) -> str:
    """A LongMemEval turn id's session id (the official ``strip_turn_id``: ids are "{session_id}_{index+1}")."""
    return "_".join(turn_id.split("_")[:-1])


def evaluate_retrieval_turn2session(
    ranked: Sequence[str], gold: Collection[str], k: int, corpus: Sequence[str]
) -> RetrievalScores:
    """Official ``evaluate_retrieval_turn2session``: turn ranking scored at session level.

    Turn ids are mapped to their session ids; k grows until the top-k positions cover k distinct
    sessions (or passes the corpus size), then the turn-level formulas run on the mapped ids, so
    several turns of one gold session all count in the DCG, as in the official code. ``corpus``
    (every turn id of the haystack, in any order) is required: it bounds the k-extension loop and
    defines the ideal DCG. The returned ``k`` is the effective k.
    """
    _check_k(k)
    if isinstance(ranked, str) or isinstance(corpus, str):
        raise TypeError("ranked and corpus must be sequences of ids, not single strings")
    gold_s = {strip_turn_id(x) for x in _idset(gold, "gold")}
    ranked_s = [strip_turn_id(x) for x in ranked]
    corpus_s = [strip_turn_id(x) for x in corpus]
    return evaluate_retrieval(ranked_s, gold_s, session_k(ranked_s, k, len(corpus_s)), corpus_s)


def session_k(ranked_sessions: Sequence[str], k: int, corpus_size: int) -> int:
    """The official k-extension: k grown until the top-k positions cover k distinct sessions (or
    pass ``corpus_size``)."""
    effective_k = k
    seen = set(ranked_sessions[:k])
    while effective_k <= corpus_size and len(seen) < k:  # set(ranked[:effective_k]), grown one id at a time
        effective_k += 1
        if effective_k <= len(ranked_sessions):
            seen.add(ranked_sessions[effective_k - 1])
    return effective_k


def session_recalls(ranked: Sequence[str], gold: Collection[str], k: int, corpus_size: int,
                    session_of: Callable[[str], str] = strip_turn_id) -> tuple[float, float]:
    """Official turn-to-session (recall_any@k, recall_all@k) with a session mapping (``session_of``:
    LongMemEval's ``strip_turn_id`` by default; another store's turn -> session lookup otherwise)."""
    gold_s = {session_of(x) for x in _idset(gold, "gold")}
    ranked_s = [session_of(x) for x in ranked]
    eff = session_k(ranked_s, k, corpus_size)
    return recall_any(ranked_s, gold_s, eff), recall_all(ranked_s, gold_s, eff)


def noans_id(turn_id: str, gold: Collection[str]) -> str:
    """The id LongMemEval's ``run_retrieval.py`` gives a corpus turn: a turn of an answer session
    (``answer`` in its session id) that is not a gold (``has_answer``) turn is renamed ``noans``
    (``answer_x_3`` -> ``noans_x_3``), so neither it nor its "session" is relevant there."""
    if "answer" in strip_turn_id(turn_id) and turn_id not in gold:
        return turn_id.replace("answer", "noans")
    return turn_id


def official_scores(
    ranked: Sequence[str], gold: Collection[str], corpus: Sequence[str], ks: Sequence[int] = (5, 10)
) -> dict[str, float | None]:
    """LongMemEval's official retrieval report for one question, from a turn ranking over ``corpus``.

    ``corpus`` is every turn id the ranking could hold (the official convention: user turns only);
    ``gold`` the has_answer turn ids, which may lie outside the corpus (an assistant turn). Both
    ``ranked`` and ``corpus`` are scored on ``run_retrieval.py``'s ids (:func:`noans_id`), and the
    relevant turns are the gold turns inside the corpus (its ``correct_docs``: the ids still holding
    ``answer``). Keys, for each k in ``ks``: ``turn_recall_any@k`` / ``turn_recall_all@k`` /
    ``turn_ndcg_any@k`` (:func:`evaluate_retrieval`) and ``session_recall_any@k`` /
    ``session_recall_all@k`` / ``session_ndcg_any@k`` (:func:`evaluate_retrieval_turn2session`), all
    ``None`` when no gold turn is inside the corpus (the official script scores such a question 0 /
    1 / 0 and averages it in; we leave it out of the means, which count it in ``n_scored``).
    Pure; abstention questions are the caller's to skip, as the official scorer does.
    """
    if isinstance(ranked, str) or isinstance(corpus, str):
        raise TypeError("ranked and corpus must be sequences of ids, not single strings")
    g = _idset(gold, "gold")
    inside = g & frozenset(corpus)  # their ids are not renamed
    ranked_l = [noans_id(t, g) for t in ranked]
    corpus_l = [noans_id(t, g) for t in corpus]
    out: dict[str, float | None] = {}
    for k in ks:
        t = evaluate_retrieval(ranked_l, inside, k, corpus_l) if inside else None
        s = evaluate_retrieval_turn2session(ranked_l, inside, k, corpus_l) if inside else None
        for lvl, r in (("turn", t), ("session", s)):
            out[f"{lvl}_recall_any@{k}"] = r.recall_any if r else None
            out[f"{lvl}_recall_all@{k}"] = r.recall_all if r else None
            out[f"{lvl}_ndcg_any@{k}"] = r.ndcg_any if r else None
    return out


def official_session_scores(
    ranked_sessions: Sequence[str], gold: Collection[str], corpus: Sequence[str], ks: Sequence[int] = (5, 10)
) -> dict[str, float | None]:
    """LongMemEval's official report for a *session* ranking (``run_retrieval.py`` at session
    granularity): each haystack session is one document, and the relevant ones are the sessions
    holding a gold turn inside ``corpus`` (the user turns; an answer session without one is
    ``noans`` there). The session keys of :func:`official_scores` from :func:`evaluate_retrieval`
    over the sessions of ``corpus`` (in order); the turn keys are ``None`` (a session ranking ranks no
    turn), as is every key when no gold turn is inside the corpus."""
    if isinstance(ranked_sessions, str) or isinstance(corpus, str):
        raise TypeError("ranked_sessions and corpus must be sequences of ids, not single strings")
    inside = _idset(gold, "gold") & frozenset(corpus)
    sessions = list(dict.fromkeys(strip_turn_id(t) for t in corpus))
    relevant = {strip_turn_id(t) for t in inside}
    out: dict[str, float | None] = {}
    for k in ks:
        s = evaluate_retrieval(ranked_sessions, relevant, k, sessions) if inside else None
        for m in ("recall_any", "recall_all", "ndcg_any"):
            out[f"turn_{m}@{k}"] = None
        out[f"session_recall_any@{k}"] = s.recall_any if s else None
        out[f"session_recall_all@{k}"] = s.recall_all if s else None
        out[f"session_ndcg_any@{k}"] = s.ndcg_any if s else None
    return out


# --------------------------------------------------------------------------------------------
# One question, and many
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class QuestionScores:
    """Retrieval metrics of one question. ``None`` means undefined (no gold), not zero."""

    gold_hit: float | None
    turn_hit: float
    er: float | None
    cer: float | None
    recall_any: float | None  # @k; None when gold is empty (see score_question)
    recall_all: float | None
    ndcg_any: float | None
    set_size: int  # distinct ids in the evidence set

    def as_dict(self) -> dict[str, float | int | None]:
        return asdict(self)


# Averaged as percentages by aggregate(); MEAN_METRICS are averaged as they are.
RATE_METRICS: tuple[str, ...] = ("gold_hit", "turn_hit", "er", "cer", "recall_any", "recall_all", "ndcg_any")
MEAN_METRICS: tuple[str, ...] = ("set_size",)


def score_question(
    evidence: Sequence[str],
    gold: Sequence[str],
    k: int | None = None,
    *,
    answer_turns: Sequence[str] | None = None,
    corpus: Sequence[str] | None = None,
) -> QuestionScores:
    """All retrieval metrics of one question.

    ``evidence`` is the retrieved set in rank order (order matters only for the @k metrics).
    ``gold`` is G(q), the supporting-record ids. ``answer_turns`` is H(q) for Turn Hit; it
    defaults to ``gold`` (LongMemEval: gold = has_answer turns, so G = H). They differ for the
    paper's Table 1, where the order turn supports the answer but only the arrival turn holds it.

    ``k`` cuts the ranked list for recall_any / recall_all / ndcg_any only; Gold Hit, Turn Hit,
    ER, CER and set_size always describe the whole set E. ``k=None`` means k = len(evidence).
    The @k metrics are ``None`` for empty gold: the official code would give recall_all = 1 and
    recall_any = ndcg = 0 there, which would bias means; our contract averages over questions
    with gold.
    """
    if isinstance(evidence, str):
        raise TypeError("evidence must be a sequence of ids, not a single string")
    kk = len(evidence) if k is None else k
    _check_k(kk)
    g = _idset(gold, "gold")
    h = g if answer_turns is None else _idset(answer_turns, "answer_turns")
    has_gold = bool(g)
    return QuestionScores(
        gold_hit=gold_hit(evidence, g),
        turn_hit=turn_hit(evidence, h),
        er=evidence_recall(evidence, g),
        cer=complete_evidence_recall(evidence, g),
        recall_any=recall_any(evidence, g, kk) if has_gold else None,
        recall_all=recall_all(evidence, g, kk) if has_gold else None,
        ndcg_any=ndcg_any(evidence, g, kk, corpus) if has_gold else None,
        set_size=len(_idset(evidence, "evidence")),
    )


def _summary(
    rows: Sequence[Mapping[str, object]], rates: Sequence[str], means: Sequence[str]
) -> dict[str, object]:
    out: dict[str, object] = {"n": len(rows)}
    n_scored: dict[str, int] = {}
    for name, scale in [(m, 100.0) for m in rates] + [(m, 1.0) for m in means]:
        vals = [float(v) for r in rows if (v := r.get(name)) is not None]
        n_scored[name] = len(vals)
        out[name] = scale * sum(vals) / len(vals) if vals else None
    out["n_scored"] = n_scored
    return out


def aggregate(
    rows: Sequence[Mapping[str, object]],
    by: str | None = None,
    *,
    rates: Sequence[str] = RATE_METRICS,
    means: Sequence[str] = MEAN_METRICS,
) -> dict[str, dict]:
    """Average per-question rows, overall and per value of ``rows[i][by]``.

    Each metric in ``rates`` is a mean of 0/1 (or [0, 1]) values reported as a percentage
    0-100; each metric in ``means`` (set_size by default) is a plain mean. ``None`` and missing
    keys are skipped, so every metric has its own denominator, given in ``n_scored``; a metric
    with nothing to average is ``None``. ``n`` counts all rows of the group.

    Returns ``{"overall": summary, "by": {group: summary}}``; groups appear in order of first
    occurrence; rows whose ``by`` value is missing or ``None`` are grouped under ``None``.
    Pass ``rates=(..., "f1")`` to average LoCoMo F1 the same way. ``QuestionScores.as_dict()``
    plus a question-type key makes a row.
    """
    rows = list(rows)  # a private copy; the caller's rows are only read
    groups: dict[object, list[Mapping[str, object]]] = {}
    if by is not None:
        for r in rows:
            groups.setdefault(r.get(by), []).append(r)
    return {
        "overall": _summary(rows, rates, means),
        "by": {key: _summary(grp, rates, means) for key, grp in groups.items()},
    }
