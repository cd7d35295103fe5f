"""One scope's views for a worker without the store: a process of ``bfr eval --processes N`` or a
remote (Ray) worker. Thread workers share the driver's views (``scope.scope_views``) instead.

Covers: :class:`ScopePayload` (what rebuilds one scope's views: its turns, their cached vectors under
the default dense models, the cached NER output of its turn texts, and the query vectors of its
questions), :func:`scope_payload` (read by the driver, the store's one writer, from the store's
caches; the vectors of the questions about to be asked that the store lacks are encoded and cached
there), :class:`KnownNer` (NER from the payload; a text it lacks is parsed in the worker and kept in
``parsed`` for the driver to cache) and :func:`payload_views` (the worker's views, built once per
scope per process).

Why the driver reads and workers do not: DuckDB lets one process write a file or several read it,
not both. The worker gets the store's own vectors and NER, so it ranks exactly as the driver would;
cues the store does not cache (requirements, names) are encoded in the worker with the same encoder,
which gives each text the vector it gets alone (``embed.encode_queries``).

Does not cover: the LLM client a remote worker builds (``evaluation.evaluate.worker_llm``), running
the arms (``evaluation.procpool``, ``evaluation.evaluate``).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from bfr_core.records import Scope, Turn
from bfr_core.retrieval.embed import query_vectors, vectors_for_texts
from bfr_core.retrieval.encoders import default_spec, get_model
from bfr_core.retrieval.scope import ScopeViews, build_views
from bfr_core.retrieval.views import entity
from bfr_core.retrieval.views.common import index_text
from bfr_core.retrieval.views.dense import remember_query_vector
from bfr_core.sentences import search_texts
from bfr_core.store import Store

Ents = list[tuple[str, str]]  # (label, span text) per text, as the entity view's NER gives them


@dataclass(frozen=True, eq=False)  # identity equality: the fields hold arrays
class ScopePayload:
    """Everything that rebuilds one scope's views without the store (picklable)."""

    key: tuple[str, str, str]  # (dataset id, scope id, the dataset's ingest time): a worker's cache key
    scope: Scope
    turns: tuple[Turn, ...]
    vectors: np.ndarray  # base model, rows aligned with turns
    short_vectors: np.ndarray | None  # the short-text model's, when the default spec has one
    model_id: str
    short_model_id: str  # "" without a short-text model
    entities: tuple[tuple[str, Ents], ...]  # (turn text, NER spans) of the texts the store's cache holds
    query_vectors: tuple[tuple[str, str, np.ndarray], ...]  # (model id, text, vector) for the query LRU


def scope_payload(store: Store, dataset_id: str, scope_id: str, asked: Sequence[str]) -> ScopePayload:
    """The payload of one scope, read (not computed) from the store. ``asked``: the question texts
    about to be run; their search texts' vectors are read back or encoded and cached now, the other
    questions' cached vectors come along as they are (nothing encoded for them)."""
    spec = default_spec()
    models = [get_model(spec.base)] + ([get_model(spec.short)] if spec.short else [])
    turns = tuple(store.scope_turns(dataset_id, scope_id))
    texts = [index_text(t) for t in turns]
    vecs = [vectors_for_texts(store, m, texts) for m in models]
    # only what the NER cache holds (ingest may fill it); the worker parses the rest if an arm searches
    # the entity view, as the driver's views would, so no scope pays NER it would not have paid
    ents = entity.known_entities(store, [t.text for t in turns])
    wanted = set(search_texts(asked))
    questions = search_texts([q.text for q in store.questions(dataset_id, scope_id=scope_id)] + list(asked))
    qv: list[tuple[str, str, np.ndarray]] = []
    for m in models:
        found, _ = query_vectors(store, m, [t for t in questions if t not in wanted], encode=False)
        found.update(query_vectors(store, m, [t for t in questions if t in wanted])[0])
        qv += [(m.model_id, t, v) for t, v in sorted(found.items())]
    info = store.dataset(dataset_id)
    return ScopePayload((dataset_id, scope_id, str(info["ingested_at"]) if info else ""),
                        store.scope(dataset_id, scope_id), turns, vecs[0], vecs[1] if len(vecs) > 1 else None,
                        models[0].model_id, models[1].model_id if len(models) > 1 else "",
                        tuple(sorted(ents.items())), tuple(qv))


@dataclass(frozen=True)
class KnownNer:
    """NER from the payload (the store's cache); any text it lacks is parsed in the worker, once."""

    known: dict[str, Ents]
    parsed: dict[str, Ents] = field(default_factory=dict)  # handed back for the driver to cache

    def __call__(self, texts: Sequence[str]) -> list[Ents]:
        missing = [t for t in dict.fromkeys(texts) if t not in self.known and t not in self.parsed]
        if missing:
            self.parsed.update(zip(missing, entity.run_ner(missing), strict=True))  # looked up per call: patchable
        return [self.known[t] if t in self.known else self.parsed[t] for t in texts]


_BUILT: dict[tuple[str, str, str], tuple[ScopeViews, KnownNer]] = {}  # one scope at a time per worker process
_BUILT_LOCK = threading.Lock()


def payload_views(payload: ScopePayload) -> tuple[ScopeViews, KnownNer]:
    """The views of ``payload``'s scope and the NER function they parse through, built once per
    process for the scope last asked for (a run goes scope by scope; the query LRU is primed with the
    payload's vectors)."""
    with _BUILT_LOCK:
        hit = _BUILT.get(payload.key)
        if hit is not None:
            return hit
        model = get_model(payload.model_id)
        short = get_model(payload.short_model_id) if payload.short_model_id else None
        for model_id, text, vec in payload.query_vectors:
            remember_query_vector((model_id, text), np.array(vec, copy=True))
        ner = KnownNer(dict(payload.entities))
        views = build_views(payload.scope, payload.turns, payload.vectors, model, None,
                            short_vectors=payload.short_vectors if short is not None else None,
                            short_model=short, ner=ner)
        _BUILT.clear()
        _BUILT[payload.key] = (views, ner)
        return views, ner
