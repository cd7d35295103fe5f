"""Every view over one scope, built once and shared: what an arm receives as ``ctx.views``.

Covers: :class:`ScopeViews` (the scope's turns in order, lookups by id and position, the BM25,
dense, entity, session and hybrid views, the scope's turn vectors and the embedder that made them;
by default the dense view also ranks short turns with MiniLM, see ``encoders.DenseSpec``, while
``turn_vectors`` / ``encode`` stay in the base model's single space for vector arithmetic)
and :func:`scope_views`, which builds one from the store and keeps the most recent ones in a
bounded LRU keyed by (store, dataset, ingest time, scope, model). Turn vectors come from the
embedding cache; texts not cached yet (a store ingested with ``--no-embed``, or another model) are
encoded here once and cached, which is how one haystack becomes ready without embedding the
whole dataset. The entity map is built on the entity view's first search (NER is the slow part).

Does not cover: cross-scope search (a question only ever searches its own scope), invalidation
within a process beyond the ingest time (re-ingesting a dataset changes it, so the key changes).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import numpy as np

from bfr_core.lru import LockedLRU
from bfr_core.progress import Progress
from bfr_core.records import Scope, Turn
from bfr_core.retrieval.embed import vectors_for_texts
from bfr_core.retrieval.encoders import Embedder, default_spec, get_model
from bfr_core.retrieval.views.bm25 import BM25View
from bfr_core.retrieval.views.common import index_text
from bfr_core.retrieval.views.dense import DenseView, query_vector
from bfr_core.retrieval.views.entity import EntityView, cached_ner
from bfr_core.retrieval.views.hybrid import HybridView
from bfr_core.retrieval.views.session import SessionView
from bfr_core.sentences import search_texts
from bfr_core.store import Store

CACHE_SIZE = 64  # scopes kept per process (a LongMemEval haystack's views take ~1-2 MB)


@dataclass(frozen=True, eq=False)  # identity equality: the fields hold dicts and arrays
class ScopeViews:
    """What an arm reads (``ctx.views``). It carries no dataset id (``scope.dataset_id`` is blank: a
    benchmark's name is a label) and no store handle (the entity view gets a texts -> entities
    function for its NER cache); tests/test_integrity.py checks both."""

    scope: Scope  # dataset_id blanked by build_views
    turns: tuple[Turn, ...]  # scope order: session position, then turn index
    position: dict[str, int]  # turn id -> index into turns
    by_id: dict[str, Turn]
    bm25: BM25View
    dense: DenseView
    entity: EntityView
    session: SessionView
    hybrid: HybridView
    turn_vectors: np.ndarray  # (len(turns), d) float32, L2-normalised, aligned with turns (base model)
    model: Embedder  # the base model: turn_vectors and encode() share its space

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Vectors of ``texts`` from the same embedder as ``turn_vectors`` (rows L2-normalised)."""
        texts = list(texts)
        if not texts:
            return np.zeros((0, self.turn_vectors.shape[1] if self.turn_vectors.ndim == 2 else self.model.dim),
                            np.float32)
        if len(texts) <= 32:  # short lists are cues and requirements: reuse the query LRU
            return np.stack([query_vector(self.model, t) for t in texts])
        return self.model.encode(texts)

    def bm25_scores(self, text: str) -> np.ndarray:
        """BM25 score of every turn for ``text``, aligned with ``turns``."""
        return self.bm25.scores(text)


def build_views(
    scope: Scope, turns: Sequence[Turn], vectors: np.ndarray, model: Embedder,
    store: Store | None = None, *, short_vectors: np.ndarray | None = None, short_model: Embedder | None = None,
    ner: Callable[[Sequence[str]], list] | None = None,
) -> ScopeViews:
    """Assemble the views over ``turns`` (pure apart from the NER cache in ``store``; ``ner`` replaces
    that cache, e.g. with NER output read in another process). The views keep neither the dataset id
    nor ``store``."""
    turns = tuple(turns)
    bm25 = BM25View(turns)
    dense = DenseView(turns, vectors, model, short_vectors, short_model)
    return ScopeViews(
        scope=replace(scope, dataset_id=""), turns=turns,
        position={t.turn_id: i for i, t in enumerate(turns)}, by_id={t.turn_id: t for t in turns},
        bm25=bm25, dense=dense, entity=EntityView(turns, ner or store_ner(store)),
        session=SessionView(turns), hybrid=HybridView(bm25, dense), turn_vectors=vectors, model=model,
    )


def store_ner(store: Store | None) -> Callable[[Sequence[str]], list]:
    """NER through ``store``'s cache as a plain function: the entity view holds no store handle."""
    def ner(texts: Sequence[str]) -> list:
        return cached_ner(store, texts)

    return ner


_CACHE: LockedLRU[ScopeViews] = LockedLRU(CACHE_SIZE)


def _store_key(store: Store) -> str:
    # In-memory stores have no path: key them by identity so two of them never share views.
    return store.path if store.path != ":memory:" else f":memory:{id(store)}"


def scope_views(
    store: Store, dataset_id: str, scope_id: str, *, model_id: str | None = None,
    model: Embedder | None = None, progress: Progress | None = None, asking: Sequence[str] = (),
) -> ScopeViews:
    """The views over one scope, from the LRU or built now (encoding any uncached turn texts).

    ``asking``: question texts about to be run on the views; the vectors of their search texts are
    read from the store or encoded now in batches (and cached), not one encoding per first search.

    By default the dense view follows ``encoders.default_spec()`` (static base + MiniLM on short texts).
    ``model_id`` picks one registered embedder alone; ``model`` passes one directly (tests,
    experiments) and wins over ``model_id``.
    """
    short_model: Embedder | None = None
    if model is None and model_id is None:
        spec = default_spec()
        model = get_model(spec.base)
        short_model = get_model(spec.short) if spec.short else None
    model = model or get_model(model_id)
    info = store.dataset(dataset_id)
    key = (_store_key(store), dataset_id, str(info["ingested_at"]) if info else "", scope_id, model.model_id,
           short_model.model_id if short_model else "")
    hit = _CACHE.get(key)
    if hit is not None:
        if asking:
            hit.dense.prime(search_texts(asking), store)
        return hit
    scope = store.scope(dataset_id, scope_id)
    turns = store.scope_turns(dataset_id, scope_id)
    texts = [index_text(t) for t in turns]
    vectors = vectors_for_texts(store, model, texts, progress=progress)
    short = vectors_for_texts(store, short_model, texts, progress=progress) if short_model else None
    views = build_views(scope, turns, vectors, model, store, short_vectors=short, short_model=short_model)
    # The scope's questions: their vectors cached at ingest go into the query LRU (nothing encoded).
    views.dense.prime(search_texts(q.text for q in store.questions(dataset_id, scope_id=scope_id)), store, encode=False)
    if asking:
        views.dense.prime(search_texts(asking), store)
    return _CACHE.put(key, views)


def clear_cache() -> None:
    """Forget every cached scope (tests; the app's Refresh button)."""
    _CACHE.clear()
