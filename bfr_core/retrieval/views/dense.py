"""Dense view: cosine similarity between the cue and one scope's cached turn vectors.

Covers: exact search (a matrix-vector product over the scope's ~500-700 L2-normalised rows, so
cosine = dot), the query encoded with the same embedder as the turns, and a process-wide LRU of
query vectors keyed by (model id, text): Stage II and the baselines resubmit the same question.
The LRU is primed with the question vectors the store caches (``embed.ensure_embeddings``), so a
benchmark question never pays an encoding; a new cue pays one MiniLM call the first time.

With a ``short`` companion (``encoders.DenseSpec``, the default): turns whose text fits MiniLM's
token cap are ranked by MiniLM cosine, the longer ones by the base (static) model's cosine, and the
two groups' scores are z-scored per query (mean 0, sd 1 within the group) before they are merged,
because cosines of two models are not on one scale. Hit scores are then z-scores, not cosines.
``turn_vectors`` stay in the base space either way.

Does not cover: approximate indexes (not needed at scope size), re-ranking.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

import numpy as np

from bfr_core.fusion import zscore
from bfr_core.lru import LockedLRU
from bfr_core.records import Hit, Turn
from bfr_core.retrieval.embed import encode_queries, query_vectors
from bfr_core.retrieval.encoders import Embedder, get_model
from bfr_core.retrieval.views.common import top_hits
from bfr_core.store import Store

_QCACHE: LockedLRU[np.ndarray] = LockedLRU(4096)  # query vectors kept per process, by (model id, text)
Z_EPS = 1e-9  # added to each group's sd when the two models' cosines are z-scored: a group of equal scores gives 0s


def remember_query_vector(key: tuple[str, str], vec: np.ndarray) -> np.ndarray:
    """Keep ``vec`` as the query vector of ``key`` = (model id, text) in this process's LRU, read-only;
    a worker primes it with the vectors its driver shipped."""
    vec.setflags(write=False)  # shared through the cache: nobody may mutate it
    return _QCACHE.put(key, vec)


def _query_vector(model_id: str, text: str) -> np.ndarray:
    hit = _QCACHE.get((model_id, text))
    if hit is not None:
        return hit
    return remember_query_vector((model_id, text), encode_queries(get_model(model_id), [text])[0].copy())


def clear_query_cache() -> None:
    """Forget every cached query vector (tests and benchmarks that swap models)."""
    _QCACHE.clear()


def _registered(model: Embedder) -> bool:
    try:
        return get_model(model.model_id) is model
    except Exception:  # an ad-hoc embedder (tests): no shared cache
        return False


def query_vector(model: Embedder, text: str) -> np.ndarray:
    """The query's vector, from the LRU when seen before (models outside the registry skip it)."""
    if _registered(model):
        return _query_vector(model.model_id, text)
    return encode_queries(model, [text])[0]


def prime_queries(model: Embedder, texts: Sequence[str], store: Store | None = None, *,
                  encode: bool = True) -> None:
    """Put the vectors of queries about to be searched (a scope's questions) in the LRU, through
    ``embed.query_vectors``: read back from ``store`` where cached (ingest caches every question's),
    the rest encoded in batches of equal token count (~12x less MiniLM time than one call per
    question) and written to ``store``, or left for the first search when ``encode`` is off."""
    if not _registered(model):
        return
    missing = [t for t in dict.fromkeys(texts) if (model.model_id, t) not in _QCACHE]
    found, _ = query_vectors(store, model, missing, encode=encode)
    for text, vec in found.items():
        remember_query_vector((model.model_id, text), vec.copy())


class DenseView:
    """``search(cue, k, exclude)`` by cosine; ``vectors`` rows aligned with ``turns``."""

    name = "dense"

    def __init__(
        self, turns: Sequence[Turn], vectors: np.ndarray, model: Embedder,
        short_vectors: np.ndarray | None = None, short_model: Embedder | None = None,
    ) -> None:
        if len(turns) != len(vectors):
            raise ValueError(f"{len(turns)} turns but {len(vectors)} vectors")
        self.turn_ids = tuple(t.turn_id for t in turns)
        self.vectors = vectors
        self.model = model
        self.short_model = short_model if short_vectors is not None else None
        self.short_vectors = short_vectors
        # Zero rows of the short model are texts over its token cap (encoders.ShortOnlyEmbedder).
        self.short_mask = (np.linalg.norm(short_vectors, axis=1) > 0 if short_vectors is not None
                           else np.zeros(len(self.turn_ids), dtype=bool))
        if short_vectors is not None and len(short_vectors) != len(vectors):
            raise ValueError(f"{len(vectors)} vectors but {len(short_vectors)} short-text vectors")

    def scores(self, cue: str) -> np.ndarray:
        """Similarity of every turn to ``cue`` (cosines, or merged z-scores with a short model)."""
        if not self.turn_ids:
            return np.zeros(0, dtype=np.float32)
        base = self.vectors @ query_vector(self.model, cue)
        if self.short_model is None or not self.short_mask.any():
            return base
        short = self.short_vectors @ query_vector(self.short_model, cue)
        out = np.empty(len(base), dtype=np.float64)
        out[self.short_mask] = zscore(short[self.short_mask], eps=Z_EPS)
        out[~self.short_mask] = zscore(base[~self.short_mask], eps=Z_EPS)
        return out

    def prime(self, cues: Sequence[str], store: Store | None = None, *, encode: bool = True) -> None:
        """Ready the vectors of cues that will be searched soon (see :func:`prime_queries`)."""
        prime_queries(self.model, cues, store, encode=encode)
        if self.short_model is not None:
            prime_queries(self.short_model, cues, store, encode=encode)

    def search(self, cue: str, k: int, exclude: Collection[str] = frozenset()) -> list[Hit]:
        return top_hits(self.scores(cue), self.turn_ids, k, exclude, self.name)
