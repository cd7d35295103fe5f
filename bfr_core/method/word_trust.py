"""How much ``conv-fusion`` can trust the question's words: observable signals and the regime they give.

Covers: the question's grammatical form (``sentences.form``: a question, a request, or a remark), the
lexical match's own strength over the scope (the top BM25 z-score), the share of the question's
informative terms the scope contains at all, the agreement of the lexical and dense rankings (the
overlap of their top :data:`AGREE_K`), and the regime a gate reads from them (:func:`regime`):
"words" (the full ranking) or "remark" (the dense part leads; ``turn_scores.combine`` applies it).
Pure functions over the question text and score arrays; the gate is a coordinate of the selection
protocol (bench/quality/bench_ours_selection.py), never the dataset, question type or ids.

Does not cover: the weights of either regime (``turn_scores``), what a remark presupposes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from bfr_core.fusion import rank_order, zscore
from bfr_core.sentences import form

AGREE_K = 10  # the smallest evidence-set size the workbench reports
WEAK_Z = 3.0  # "no turn stands out": the top BM25 score is under the usual 3-sigma outlier line
GATES = ("off", "form", "form|disagree", "form|weak")


@dataclass(frozen=True, slots=True)
class WordTrust:
    """What the question's words are worth over this scope (observed, before any weight)."""

    form: str  # "question", "request" or "remark"
    bm25_top_z: float  # (max - mean) / sd of BM25 over the scope (0 when BM25 is flat)
    term_share: float  # share of the question's informative terms found in the scope (1.0 with none)
    agreement: float  # |top-k BM25 & top-k dense| / k, k = AGREE_K (or the scope size)

    def to_dict(self) -> dict[str, float | str]:
        return {"form": self.form, "bm25_top_z": round(self.bm25_top_z, 3),
                "term_share": round(self.term_share, 3), "agreement": round(self.agreement, 3)}


def top_z(scores: np.ndarray) -> float:
    """The best score's z-score, (max - mean) / sd; 0.0 when the scores are flat or empty."""
    return float(zscore(scores).max()) if len(scores) else 0.0


def agreement(a: np.ndarray, b: np.ndarray, k: int = AGREE_K) -> float:
    """Overlap of the two rankings' top k (ties by turn order), as a share of k (0.0 on an empty scope)."""
    k = min(k, len(a))
    if k == 0:
        return 0.0
    return len(set(rank_order(a)[:k].tolist()) & set(rank_order(b)[:k].tolist())) / k


def share_found(terms: Sequence[str], found: Callable[[str], bool]) -> float:
    """Share of the distinct ``terms`` that ``found`` accepts (1.0 when there are none)."""
    distinct = set(terms)
    return sum(bool(found(t)) for t in distinct) / len(distinct) if distinct else 1.0


def word_trust(text: str, bm25: np.ndarray, dense: np.ndarray, term_share: float) -> WordTrust:
    """The signals of one question over one scope (``bm25`` and ``dense`` aligned with its turns)."""
    return WordTrust(form(text), top_z(bm25), term_share, agreement(bm25, dense))


def regime(t: WordTrust | None, gate: str) -> str:
    """"remark" (the dense part leads) or "words", as ``gate`` reads the signals.

    "off": always words. "form": a remark (neither a question nor a request). "form|disagree": that,
    or the lexical and dense top-k share no turn. "form|weak": that, or no turn's BM25 stands
    :data:`WEAK_Z` sd above the mean.
    """
    if gate not in GATES:
        raise ValueError(f"remark gate must be one of {', '.join(GATES)}, not {gate!r}")
    if t is None or gate == "off":
        return "words"
    if t.form == "remark":
        return "remark"
    if gate == "form|disagree" and t.agreement == 0.0:
        return "remark"
    if gate == "form|weak" and t.bm25_top_z < WEAK_Z:
        return "remark"
    return "words"


def describe(regime_name: str, signals: dict | None) -> str:
    """One line for the trace: the regime and the signals it was read from (as :meth:`WordTrust.to_dict`)."""
    if not signals:
        return f"regime: {regime_name}"
    return (f"regime: {regime_name} (form {signals.get('form', '?')}, BM25 top z {signals.get('bm25_top_z', '?')}, "
            f"terms found {signals.get('term_share', '?')}, lexical/dense top-{AGREE_K} agreement "
            f"{signals.get('agreement', '?')})")
