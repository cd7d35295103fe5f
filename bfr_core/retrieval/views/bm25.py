"""BM25 (Okapi) over one scope's turns: the lexical view, and the Mem0 baseline's scorer.

Covers: rank_bm25's ``BM25Okapi`` (k1, b, epsilon as constructor arguments with the library's
defaults) over :func:`bfr_core.text.tokenize` tokens (stop words removed, no stemming by default;
both switchable) of each turn's index text (``"Speaker: text"`` for named speakers, see
``views.common.index_text``). ``rank_bm25`` computes the idf table; scoring is ours: per-term postings with the
BM25 term weight precomputed, so a query costs a few numpy adds instead of rank_bm25's Python loop
over every document per query term. Scores equal ``BM25Okapi.get_scores`` (tested).

Does not cover: BM25 variants (BM25L/Plus), phrase or field weighting, stemming by default (the
LoCoMo anchors were measured without it; bench/quality/bench_retrieval.py measures it stemmed too).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Sequence

import numpy as np
from rank_bm25 import BM25Okapi

from bfr_core.records import Hit, Turn
from bfr_core.retrieval.views.common import index_text, top_hits
from bfr_core.text import tokenize


class BM25View:
    """``search(cue, k, exclude)`` by BM25 over the scope's turns; ``scores(cue)`` aligned with turns."""

    name = "bm25"

    def __init__(
        self, turns: Sequence[Turn], *, k1: float = 1.5, b: float = 0.75, epsilon: float = 0.25,
        stop: bool = True, stemmed: bool = False, with_speaker: bool = True, positive_only: bool = False,
    ) -> None:
        self.turn_ids = tuple(t.turn_id for t in turns)
        self.stop, self.stemmed, self.positive_only = stop, stemmed, positive_only
        self.k1, self.b, self.epsilon = k1, b, epsilon
        docs = [tokenize(index_text(t) if with_speaker else t.text, stop=stop, stemmed=stemmed) for t in turns]
        self._postings: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        if not any(docs):  # rank_bm25 divides by the corpus size and the vocabulary size
            return
        bm = BM25Okapi(docs, k1=k1, b=b, epsilon=epsilon)
        doc_len = np.asarray(bm.doc_len, dtype=np.float64)
        norm = k1 * (1 - b + b * doc_len / bm.avgdl)  # per-document length normalisation
        rows: dict[str, tuple[list[int], list[int]]] = {}
        for i, doc in enumerate(docs):
            for term, tf in Counter(doc).items():
                ids, tfs = rows.setdefault(term, ([], []))
                ids.append(i)
                tfs.append(tf)
        for term, (ids, tfs) in rows.items():
            idx = np.asarray(ids, dtype=np.int64)
            tf = np.asarray(tfs, dtype=np.float64)
            self._postings[term] = (idx, bm.idf[term] * tf * (k1 + 1) / (tf + norm[idx]))

    def query_tokens(self, cue: str) -> list[str]:
        return tokenize(cue, stop=self.stop, stemmed=self.stemmed)

    def contains(self, term: str) -> bool:
        """Whether a query token (as :meth:`query_tokens` gives it) occurs in any turn."""
        return term in self._postings

    def scores(self, cue: str) -> np.ndarray:
        """BM25 score of every turn (aligned with the scope's turns); repeated query terms count again."""
        out = np.zeros(len(self.turn_ids), dtype=np.float64)
        for term in self.query_tokens(cue):
            post = self._postings.get(term)
            if post is not None:
                out[post[0]] += post[1]  # a term's postings hold each document once
        return out

    def search(self, cue: str, k: int, exclude: Collection[str] = frozenset()) -> list[Hit]:
        return top_hits(self.scores(cue), self.turn_ids, k, exclude, self.name,
                        positive_only=self.positive_only)
