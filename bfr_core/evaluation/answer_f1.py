"""The official LoCoMo answer score, replicated from ``task_eval/evaluation.py`` of
snap-research/LoCoMo (``normalize_answer``, ``f1_score``, ``f1``, ``eval_question_answering``):
Porter-stem token F1 with the per-category rules. Pure functions.

Does not cover: the LoCoMo exact-match / ROUGE / BERTScore variants, LLM judges (``roles``).
"""

from __future__ import annotations

import string
from collections import Counter

import numpy as np
import regex  # the official scorer's regex engine; its \b differs from re's (e.g. around '¼')

from bfr_core.text import stem

__all__ = ["normalize_answer", "f1_score", "f1_multi", "locomo_f1"]

_PUNCT = frozenset(string.punctuation)
# Official remove_articles also drops "and" (the SQuAD original drops only a/an/the). Compiled
# with the `regex` package (installed with nltk), as in the official file: `re` disagrees on word
# boundaries next to characters such as '¼' that str.isalnum() accepts but Unicode \w does not.
_ARTICLES = regex.compile(r"\b(a|an|the|and)\b")
# Official adversarial (category 5) check: a refusal phrase anywhere in the lower-cased output.
_ABSTAIN_PHRASES = ("no information available", "not mentioned")


def normalize_answer(s: str) -> str:
    """Official ``normalize_answer``: drop commas, lower-case, strip ASCII punctuation, drop
    a/an/the/and, collapse whitespace (in exactly that order)."""
    s = s.replace(",", "").lower()
    s = "".join(ch for ch in s if ch not in _PUNCT)
    s = _ARTICLES.sub(" ", s)
    return " ".join(s.split())


def f1_score(prediction: str, ground_truth: str) -> float:
    """Official ``f1_score``: multiset token F1 over Porter stems of the normalized strings.

    Returns 0.0 when nothing overlaps (including an empty prediction or ground truth).
    """
    pred = [stem(w) for w in normalize_answer(prediction).split()]
    truth = [stem(w) for w in normalize_answer(ground_truth).split()]
    num_same = sum((Counter(pred) & Counter(truth)).values())
    if num_same == 0:
        return 0.0
    precision = num_same / len(pred)
    recall = num_same / len(truth)
    return (2 * precision * recall) / (precision + recall)


def f1_multi(prediction: str, ground_truth: str) -> float:
    """Official ``f1`` (multi-answer, category 1): split both sides on ',', take for every
    ground-truth part the best F1 over prediction parts, and average over ground-truth parts."""
    predictions = [p.strip() for p in prediction.split(",")]
    truths = [g.strip() for g in ground_truth.split(",")]
    # np.mean, as in the official code, so sums round identically.
    return float(np.mean([max(f1_score(p, g) for p in predictions) for g in truths]))


def locomo_f1(prediction: str, answer: object, category: int) -> float:
    """LoCoMo answer score of one prediction, as in the official ``eval_question_answering``.

    * category 1 (multi-hop): :func:`f1_multi`.
    * categories 2, 3, 4: :func:`f1_score`; for category 3 the answer is first cut at the first
      ';' (the official file keeps only the first alternative).
    * category 5 (adversarial): 1.0 if the lower-cased prediction contains "no information
      available" or "not mentioned", else 0.0; the answer is ignored.

    ``answer`` is passed through ``str()`` first, because the released data holds some answers
    as integers (years); the official scorer does the same. Any other category raises
    ``ValueError`` (the official scorer raises too).
    """
    if isinstance(category, bool) or category not in (1, 2, 3, 4, 5):
        raise ValueError(f"LoCoMo category must be 1..5, got {category!r}")
    if category == 5:
        low = prediction.lower()
        return 1.0 if any(phrase in low for phrase in _ABSTAIN_PHRASES) else 0.0
    truth = str(answer)
    if category == 3:
        truth = truth.split(";")[0].strip()
    if category == 1:
        return f1_multi(prediction, truth)
    return f1_score(prediction, truth)
