"""Dense view: cosine similarity between the cue and one scope's cached turn vectors.

Covers: exact search (a matrix-vector product over the scope's ~500-700 L2-normalised rows, so
cosine = dot), the query encoded with the same embedder as the turns, and a process-wide LRU of
query vectors keyed by (model id, text): Stage II and the baselines resubmit the same question.

Does not cover: approximate indexes (not needed at scope size), re-ranking.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from functools import lru_cache

import numpy as np

from bfr_core.embed import Embedder, get_model
from bfr_core.records import Hit, Turn
from bfr_core.views.common import top_hits


@lru_cache(maxsize=4096)
def _query_vector(model_id: str, text: str) -> np.ndarray:
    vec = get_model(model_id).encode([text])[0]
    vec.setflags(write=False)  # shared through the cache: nobody may mutate it
    return vec


def query_vector(model: Embedder, text: str) -> np.ndarray:
    """The query's vector, from the LRU when seen before (models outside the registry skip it)."""
    try:
        registered = get_model(model.model_id) is model
    except Exception:  # an ad-hoc embedder (tests): no shared cache
        registered = False
    return _query_vector(model.model_id, text) if registered else model.encode([text])[0]


class DenseView:
    """``search(cue, k, exclude)`` by cosine; ``vectors`` rows aligned with ``turns``."""

    name = "dense"

    def __init__(self, turns: Sequence[Turn], vectors: np.ndarray, model: Embedder) -> None:
        if len(turns) != len(vectors):
            raise ValueError(f"{len(turns)} turns but {len(vectors)} vectors")
        self.turn_ids = tuple(t.turn_id for t in turns)
        self.vectors = vectors
        self.model = model

    def scores(self, cue: str) -> np.ndarray:
        if not self.turn_ids:
            return np.zeros(0, dtype=np.float32)
        return self.vectors @ query_vector(self.model, cue)

    def search(self, cue: str, k: int, exclude: Collection[str] = frozenset()) -> list[Hit]:
        return top_hits(self.scores(cue), self.turn_ids, k, exclude, self.name)
