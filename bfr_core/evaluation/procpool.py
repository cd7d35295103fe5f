"""Offline (no-LLM) evaluation of whole scopes in worker processes: both cores for CPU-bound arms.

Covers: :func:`run_scope` (a worker: builds the views from the scope's payload,
``retrieval.payload``, read from the store by the parent, and runs every (question, arm) of the scope
through ``pipeline.run_query``), :func:`scopes_in_processes` (a
spawn-context process pool over the scopes, results handed back in the order the scopes were given,
so the rows and the store writes are those of the sequential loop) and :func:`die_with_parent`
(workers end with the parent, SIGKILL included).

The parent keeps the store open and remains its only writer (``retrieval.payload`` says why); results
do not depend on which process ran a scope (checked by ``bench/speed/bench_offline.py`` on dev50 and LoCoMo).

NER a worker parsed (texts the store's cache lacked) goes back with its rows and the parent caches it
(``entity.store_entities``), so the next run parses nothing again.

Does not cover: runs with an LLM (a client with its cache and call log stays in the parent; those
run in the parent's loop), thread executors and remote executors (``evaluation/executors.py``, in
progress on another branch: this module is the process step it can call).
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import multiprocessing
import os
import signal
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from typing import Any

from bfr_core.config import Budget, Config
from bfr_core.errors import BfrError
from bfr_core.evaluation.rows import failed_row, result_row
from bfr_core.pipeline import run_query
from bfr_core.records import Question
from bfr_core.retrieval.payload import ScopePayload, payload_views, scope_payload
from bfr_core.retrieval.views.entity import store_entities
from bfr_core.store import Store, text_hash

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


def run_scope(payload: ScopePayload, jobs: Sequence[tuple[Question, str]], run_id: str, budget: str | Budget | None,
              config: Config | None, k: int,
              spec_budget: str) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]], dict[str, Any]]:
    """A worker: the scope's views from ``payload``, then every (question, arm) of ``jobs`` in order;
    (result rows, trace rows, NER the worker parsed: text -> spans, for the parent to cache)."""
    views, ner = payload_views(payload)
    dataset_id = payload.key[0]
    rows, traces = [], []
    for q, arm in jobs:
        try:
            trace = run_query(views, q.query(), arm, dataset_id=dataset_id, budget=budget, config=config, k=k)
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
                payload = scope_payload(store, dataset_id, scope_id, [q.text for q, _ in jobs])
                pending.append((scope_id, pool.submit(run_scope, payload, tuple(jobs), run_id, budget, config, k,
                                                      spec_budget)))
            scope_id, fut = pending.pop(0)
            rows, traces, parsed = fut.result()
            if parsed:  # the parent is the store's one writer: the next run reads these instead of parsing
                store_entities(store, [text_hash(t) for t in parsed], list(parsed.values()))
            yield scope_id, rows, traces
