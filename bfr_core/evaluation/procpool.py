"""Offline (no-LLM) evaluation of whole scopes in worker processes: both cores for CPU-bound arms.

Covers: :func:`scope_payload` (what one scope's views are built from, read from the store by the
parent: turns, cached turn vectors of both dense models, cached NER output, cached question
vectors), :func:`run_scope` (a worker: builds the views from that payload, no store, and runs every
(question, arm) of the scope through ``pipeline.run_query``), :func:`scopes_in_processes` (a
spawn-context process pool over the scopes, results handed back in the order the scopes were given,
so the rows and the store writes are those of the sequential loop) and :func:`die_with_parent`
(workers end with the parent, SIGKILL included).

Why the parent reads and the workers do not: DuckDB lets one process write a file or several read
it, not both; the parent keeps the store open and remains its only writer. Cues that the store does
not cache (requirements, names) are encoded in the worker with the same encoder, which gives each
text the vector it gets alone (``embed.encode_queries``), so results do not depend on which process
ran a scope (checked by ``bench/bench_offline.py`` on dev50 and LoCoMo).

NER a worker parsed (texts the store's cache lacked) goes back with its rows and the parent caches it
(``entity.store_entities``), so the next run parses nothing again.

Does not cover: runs with an LLM (a client with its cache and call log stays in the parent; those
run in the parent's loop), thread executors and remote executors (``evaluation/executors.py``, in
progress on another branch: this module is the process step it can call).
"""

from __future__ import annotations

import contextlib
import ctypes
import multiprocessing
import os
import signal
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from bfr_core.config import Budget, Config
from bfr_core.records import Question, Scope, Turn
from bfr_core.retrieval.views.entity import store_entities
from bfr_core.sentences import search_texts
from bfr_core.store import Store, text_hash


@dataclass(frozen=True)
class ScopePayload:
    dataset_id: str
    scope: Scope
    turns: tuple[Turn, ...]
    vectors: np.ndarray
    short_vectors: np.ndarray | None
    ents: tuple[tuple[str, list[tuple[str, str]]], ...]  # (text, NER spans) of the texts the cache holds
    query_vectors: tuple[tuple[str, str, np.ndarray], ...]  # (model id, text, vector) for the LRU
    jobs: tuple[tuple[Question, str], ...]  # (question, arm) in the sequential loop's order


@dataclass(frozen=True)
class KnownNer:
    """NER from the payload (the store's cache); any text it lacks is parsed in the worker."""

    known: dict[str, list[tuple[str, str]]]
    parsed: dict[str, list[tuple[str, str]]] = field(default_factory=dict)  # handed back to the parent

    def __call__(self, texts: Sequence[str]) -> list[list[tuple[str, str]]]:
        from bfr_core.retrieval.views.entity import run_ner

        missing = [t for t in dict.fromkeys(texts) if t not in self.known and t not in self.parsed]
        if missing:
            self.parsed.update(zip(missing, run_ner(missing), strict=True))
        return [self.known[t] if t in self.known else self.parsed[t] for t in texts]


PR_SET_PDEATHSIG = 1  # linux/prctl.h


def die_with_parent(parent_pid: int, poll_s: float = 1.0) -> None:
    """A worker's initializer: end this process when ``parent_pid`` goes, even by SIGKILL (which
    runs no clean-up: a killed ``bfr eval --processes 2`` left its workers and their resource
    tracker running). Linux delivers SIGKILL on the parent's death (``PR_SET_PDEATHSIG``); a daemon
    thread checks the parent id as well (other systems, and a parent gone before the call)."""
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent_pid:
        os._exit(1)

    def watch() -> None:
        while os.getppid() == parent_pid:
            time.sleep(poll_s)
        os._exit(1)

    threading.Thread(target=watch, name="bfr-parent-watch", daemon=True).start()


def scope_payload(store: Store, dataset_id: str, scope_id: str, jobs: Sequence[tuple[Question, str]]) -> ScopePayload:
    """Everything a worker needs for one scope, read (not computed) from the store; question vectors
    the store lacks are encoded here and cached, as the sequential loop's ``prime`` does."""
    from bfr_core.retrieval.embed import query_vectors, vectors_for_texts
    from bfr_core.retrieval.encoders import default_spec, get_model
    from bfr_core.retrieval.views.common import index_text
    from bfr_core.retrieval.views.entity import known_entities

    spec = default_spec()
    models = [get_model(spec.base)] + ([get_model(spec.short)] if spec.short else [])
    turns = tuple(store.scope_turns(dataset_id, scope_id))
    texts = [index_text(t) for t in turns]
    vecs = [vectors_for_texts(store, m, texts) for m in models]
    # only what the NER cache holds (ingest fills it); the worker parses the rest if an arm searches
    # the entity view, as the sequential loop would, so no scope pays NER it would not have paid
    ents = known_entities(store, [t.text for t in turns])
    questions = search_texts([q.text for q in store.questions(dataset_id, scope_id=scope_id)]
                             + [q.text for q, _ in jobs])
    asked = set(search_texts(q.text for q, _ in jobs))
    qv: list[tuple[str, str, np.ndarray]] = []
    for m in models:
        found, _ = query_vectors(store, m, [t for t in questions if t not in asked], encode=False)
        found.update(query_vectors(store, m, [t for t in questions if t in asked])[0])
        qv += [(m.model_id, t, v) for t, v in sorted(found.items())]
    return ScopePayload(dataset_id, store.scope(dataset_id, scope_id), turns, vecs[0],
                        vecs[1] if len(vecs) > 1 else None, tuple(sorted(ents.items())), tuple(qv),
                        tuple(jobs))


def run_scope(payload: ScopePayload, run_id: str, budget: str | Budget | None, config: Config | None,
              k: int, spec_budget: str) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]], dict[str, Any]]:
    """A worker: the scope's views from ``payload``, then every job; (result rows, trace rows, NER the
    worker parsed: text -> spans, for the parent to cache)."""
    import json

    from bfr_core.errors import BfrError
    from bfr_core.evaluation.rows import failed_row, result_row
    from bfr_core.pipeline import run_query
    from bfr_core.retrieval.encoders import default_spec, get_model
    from bfr_core.retrieval.scope import build_views
    from bfr_core.retrieval.views.dense import remember_query_vector

    spec = default_spec()
    model = get_model(spec.base)
    short = get_model(spec.short) if spec.short and payload.short_vectors is not None else None
    for model_id, text, vec in payload.query_vectors:
        remember_query_vector((model_id, text), np.array(vec, copy=True))
    ner = KnownNer(dict(payload.ents))
    views = build_views(payload.scope, payload.turns, payload.vectors, model, None,
                        short_vectors=payload.short_vectors, short_model=short, ner=ner)
    rows, traces = [], []
    for q, arm in payload.jobs:
        try:
            trace = run_query(views, q.query(), arm, dataset_id=payload.dataset_id, budget=budget, config=config, k=k)
            trace_json = json.dumps(trace.to_dict())  # data JSON cannot hold fails this row, not the run
        except BfrError:
            raise
        except Exception as exc:  # one question's failure must not end the run (as the sequential loop)
            rows.append(failed_row(run_id, q, arm, spec_budget, f"{type(exc).__name__}: {exc}"))
            continue
        rows.append(result_row(run_id, q, trace, None))
        traces.append((run_id, q.question_id, arm, trace_json))
    return rows, traces, ner.parsed


def scopes_in_processes(
    store: Store, dataset_id: str, todo: Sequence[tuple[str, Sequence[tuple[Question, str]]]], workers: int,
    run_id: str, budget: str | Budget | None, config: Config | None, k: int, spec_budget: str,
) -> Iterator[tuple[str, list[tuple[Any, ...]], list[tuple[Any, ...]]]]:
    """(scope id, rows, trace rows) for each scope of ``todo``, in ``todo``'s order, computed by
    ``workers`` spawned processes; the parent reads each payload just before it is needed (at most
    ``2 * workers`` scopes in flight)."""
    ctx = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=workers, mp_context=ctx, initializer=die_with_parent,
                             initargs=(os.getpid(),)) as pool:
        pending: list[tuple[str, Any]] = []
        queue = list(todo)
        while queue or pending:
            while queue and len(pending) < 2 * workers:
                scope_id, jobs = queue.pop(0)
                payload = scope_payload(store, dataset_id, scope_id, jobs)
                pending.append((scope_id, pool.submit(run_scope, payload, run_id, budget, config, k, spec_budget)))
            scope_id, fut = pending.pop(0)
            rows, traces, parsed = fut.result()
            if parsed:  # the parent is the store's one writer: the next run reads these instead of parsing
                store_entities(store, [text_hash(t) for t in parsed], list(parsed.values()))
            yield scope_id, rows, traces
