"""Arms x questions -> per-question results and traces in the store; resumable; summarised as JSON.

A run is identified by what determines its output (dataset, arms, budget, k, provider, limit or
seeded sample, with ``conv-fusion`` among the arms a hash of its weights, :func:`settings_key`, and the content
hash of the dataset version, :func:`bind_data`), so re-running the same command on the same data resumes it: finished (question, arm) pairs are skipped, a killed run
loses at most the batch in flight, and rows are never duplicated (primary keys, one transaction
per batch). Answer-level scores (answer, F1, judge, Suff) are optional columns filled when a
provider is set (see ``bfr_core.evaluation.answers``).

The (question, arm) pairs run on an :class:`~bfr_core.evaluation.executors.Executor` (threads by
default, or a Ray cluster); the calling thread alone writes the store, one scope per batch, in the
same order whatever the number of workers, so the rows do not depend on it. A thread worker gets the
scope's views and the run's client (:class:`LocalScope`); a remote one gets what rebuilds them
without the store (:class:`RemoteScope`: the scope's ``retrieval.payload.ScopePayload`` and the LLM
settings) and sends back its calls for the driver to log
(``llm.cache.RecordingLLM``). The table SQL lives in ``bfr_core.runs``.

Model failures: an arm whose every model call for a question failed for good (``LLMCallFailed``, each
role having fallen back to the offline rules) did not run as configured, so that row is stored as
``failed`` with the reason (a rerun of the command redoes it); when every model call of a run failed,
the run is left unfinished and :class:`ModelCallsFailed` says so (the provider is unreachable or
misconfigured: its rows are the rules' work, not the model's).

Scoring follows DESIGN.md section 4: LoCoMo questions with usable gold ids (categories 1-4) are
scored; LongMemEval Turn Hit averages over all questions (unannotated count as misses) and
``recall_all`` over the questions with gold turns.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any

from bfr_core.arm_names import CONV_FUSION, canonical_arm
from bfr_core.config import Budget, Config, LLMConfig
from bfr_core.errors import BfrError
from bfr_core.evaluation.executors import Executor, ThreadExecutor
from bfr_core.evaluation.procpool import scopes_in_processes
from bfr_core.evaluation.rows import failed_row, result_row
from bfr_core.evaluation.sampling import stratified_sample
from bfr_core.llm.base import LLMCallFailed
from bfr_core.llm.cache import CallRecord, LLMCache, Meter, RecordingLLM, call_arm, meters, spent_ms
from bfr_core.llm.factory import make_provider
from bfr_core.llm.limits import Limits, limiter_for
from bfr_core.llm.retry import RetryingLLM, RetryPolicy
from bfr_core.method import turn_scores
from bfr_core.pipeline import run_query
from bfr_core.progress import Progress, RunStatus
from bfr_core.records import Question, Trace
from bfr_core.retrieval.encoders import default_spec
from bfr_core.retrieval.payload import ScopePayload, payload_views, scope_payload
from bfr_core.retrieval.scope import scope_views
from bfr_core.runs import (
    done_pairs,
    ensure_schema,
    finish_run,
    load_trace_dict,
    register_run,
    stale_runs,
    write_batch,
)
from bfr_core.store import Store

BENCHMARK_DATASETS = {"locomo": "locomo", "longmemeval": "longmemeval"}


@dataclass(frozen=True, slots=True)
class RunSpec:
    dataset_id: str
    arms: tuple[str, ...]
    budget: str = ""  # "" = each arm's default operating point
    k: int = 10
    provider: str = "offline rules"
    limit: int | None = None
    sample: int | None = None  # a stratified sample of this many questions (bfr_core.evaluation.sampling)
    seed: int = 0
    data_sha: str = ""  # the dataset version's content hash (:func:`bind_data` sets it from the store)

    def __post_init__(self) -> None:  # an alias (``arm_names``) runs, and is stored, as its arm
        object.__setattr__(self, "arms", tuple(dict.fromkeys(canonical_arm(a) for a in self.arms)))

    @property
    def run_id(self) -> str:
        parts: list[Any] = [self.dataset_id, sorted(self.arms), self.budget, self.k, self.provider, self.limit]
        if self.sample:  # appended only when set, so the ids of earlier runs stay what they were
            parts += [self.sample, self.seed]
        if CONV_FUSION in self.arms:  # our arm's weights change with the code: a run at other weights is another run
            parts.append(settings_key())
        if self.data_sha:  # other data under the same dataset name (``bfr ingest --replace``) is another run
            parts.append(self.data_sha)
        key = json.dumps(parts)
        return f"{self.dataset_id}-{hashlib.sha1(key.encode()).hexdigest()[:10]}"


def settings_key() -> str:
    """A short hash of our arm's shipped weights (``turn_scores.DEFAULT``): in the id of every run with
    ``conv-fusion``, so re-running after the weights change starts a new run instead of resuming into rows
    scored at the old ones."""
    return hashlib.sha1(json.dumps(asdict(turn_scores.DEFAULT), sort_keys=True).encode()).hexdigest()[:8]


def bind_data(store: Store, spec: RunSpec) -> RunSpec:
    """``spec`` with the content hash of the dataset version the store holds now, so its run id names
    that version: after ``bfr ingest --replace`` with other data the same command is a new run, never a
    resume into rows computed on the old data. A spec bound to another version is refused."""
    row = store.dataset(spec.dataset_id)
    if row is None:
        raise BfrError(f"dataset '{spec.dataset_id}' is not in {store.path}; ingest it first")
    sha = str(row["source_sha256"])
    if spec.data_sha and spec.data_sha != sha:
        raise BfrError(f"dataset '{spec.dataset_id}' changed since this run was planned (its data was replaced); "
                       "start the run again")
    return replace(spec, data_sha=sha)


def resumed_stale(store: Store, spec: RunSpec) -> str | None:
    """The id of the run this (bound) spec would have resumed before its dataset was replaced, if any:
    the command's run on an earlier version of the data, which the new run does not touch."""
    stale = stale_runs(store, spec.dataset_id)
    earlier = {replace(spec, data_sha=sha).run_id for sha in {*stale.values(), ""}}
    return next((run_id for run_id in stale if run_id in earlier), None)


def select_questions(store: Store, dataset_id: str, limit: int | None = None, sample: int | None = None,
                     seed: int = 0) -> list[Question]:
    """The questions a run scores: LoCoMo-style scoreable flags, then a seeded sample stratified by
    type (``sample``) or the first ``limit``."""
    qs = store.questions(dataset_id, scoreable_only=True)
    if not qs:
        if store.dataset(dataset_id) is None:
            raise BfrError(f"no dataset '{dataset_id}' in {store.path}; ingest it first")
        raise BfrError(f"dataset '{dataset_id}' in {store.path} has no scoreable question (none has gold evidence "
                       "turns): a retrieval run has nothing to score")
    if sample:
        qs = stratified_sample(qs, sample, seed)
    return qs[:limit] if limit else qs


# -- the work of one (question, arm), wherever it runs ----------------------------------------
@dataclass(frozen=True, slots=True)
class RunParams:
    """What every (question, arm) of a run shares besides the scope."""

    run_id: str
    dataset_id: str
    budget: str | Budget | None
    spec_budget: str
    k: int
    config: Config | None


@dataclass(frozen=True, eq=False)
class LocalScope:
    """A thread worker's context: the scope's views and the run's (cached, logging) client."""

    params: RunParams
    views: Any
    llm: Any = None

    def open(self) -> tuple[Any, Any]:
        return self.views, self.llm


@dataclass(frozen=True, eq=False)
class RemoteScope:
    """A remote worker's context: the scope's payload (``retrieval.payload``: what rebuilds its views
    without the store, so the worker ranks exactly as the driver would) and the LLM settings a worker
    builds its own client from (API keys come from the worker's environment, never from here)."""

    params: RunParams
    payload: ScopePayload
    llm: LLMConfig | None = None

    def open(self) -> tuple[Any, Any]:
        return payload_views(self.payload)[0], (worker_llm(self.llm) if self.llm is not None else None)


@dataclass(frozen=True, slots=True)
class Retrieved:
    """One (question, arm) done: its results row, its trace (JSON), from a remote worker the LLM calls
    it made (the driver logs them), and how many of its model calls returned and failed for good."""

    row: tuple[Any, ...]
    trace_json: str | None
    calls: tuple[CallRecord, ...] = ()
    model_ok: int = 0
    model_failed: int = 0
    model_error: str = ""


class ModelCallsFailed(BfrError):
    """Every model call of a run failed for good: its rows are stored as failed, the run is unfinished."""


class _CallTally:
    """One job's view of the run's client: the same client, counting the calls that returned and the
    calls that failed for good (and the last reason)."""

    def __init__(self, llm: Any) -> None:
        self._llm = llm
        self.ok = 0
        self.failed = 0
        self.reason = ""

    def __getattr__(self, name: str) -> Any:
        return getattr(self._llm, name)

    def complete(self, request: Any) -> Any:
        try:
            resp = self._llm.complete(request)
        except LLMCallFailed as exc:
            self.failed += 1
            self.reason = exc.reason
            raise
        self.ok += 1
        return resp


_WORKER_LLMS: dict[LLMConfig, Any] = {}
_WORKER_LOCK = threading.Lock()


def worker_llm(config: LLMConfig) -> Any:
    """A remote worker's client (one per settings per process) for ``config``: the provider, retried under its limits, recording calls."""
    with _WORKER_LOCK:
        if config not in _WORKER_LLMS:
            inner = make_provider(config)
            slots = 1 if inner.provider == "local" else config.concurrency
            limiter = limiter_for(inner.label, Limits(slots, config.rpm, config.tpm))
            _WORKER_LLMS[config] = RecordingLLM(RetryingLLM(inner, RetryPolicy(max_retries=config.max_retries),
                                                            concurrency=slots, limiter=limiter))
        return _WORKER_LLMS[config]


def retrieve_one(ctx: LocalScope | RemoteScope, item: tuple[Question, str]) -> Retrieved:
    """Run ``arm`` on ``question`` in ``ctx``'s scope: its row and trace (a failure is a failed row)."""
    q, arm = item
    p = ctx.params
    views, client = ctx.open()
    llm = _CallTally(client) if client is not None else None
    drain = getattr(client, "drain", None)
    llm_start = spent_ms(client)

    def done(row: tuple[Any, ...], trace_json: str | None) -> Retrieved:
        ok, failed, why = (llm.ok, llm.failed, llm.reason) if llm is not None else (0, 0, "")
        return Retrieved(row, trace_json, tuple(drain()) if drain else (), ok, failed, why)

    try:
        with call_arm(arm):
            trace = run_query(views, q.query(), arm, dataset_id=p.dataset_id, budget=p.budget, llm=llm,
                              config=p.config, k=p.k)
        trace_json = json.dumps(trace.to_dict())  # data JSON cannot hold fails this row, not the run
    except LLMCallFailed as exc:  # a model that failed for good on this question: record, go on
        return done(failed_row(p.run_id, q, arm, p.spec_budget, f"llm: {exc.reason}"), None)
    except BfrError:
        raise
    except Exception as exc:  # one question's failure must not end the run
        return done(failed_row(p.run_id, q, arm, p.spec_budget, f"{type(exc).__name__}: {exc}"), None)
    if llm is not None and llm.failed and not llm.ok:  # the rules' fallback, not the configured model's work
        return done(failed_row(p.run_id, q, arm, p.spec_budget,
                               f"llm: all {llm.failed} model call(s) failed ({llm.reason})"), None)
    row = result_row(p.run_id, q, trace, spent_ms(client) - llm_start if client is not None else None)
    return done(row, trace_json)


# -- the run ----------------------------------------------------------------------------------
class StatusTracker:
    """Counts units and the calls behind them for a progress line (the driver's thread only)."""

    def __init__(self, total: int, clients: Sequence[Any] = (), price: Callable[[int, int], float | None] | None = None,
                 start_done: int = 0) -> None:
        self.total, self.done, self.start_done = total, start_done, start_done
        self.clients = list(clients)
        self.price = price
        self.remote = Meter()  # calls that remote workers reported
        self.t0 = time.perf_counter()

    def record(self, calls: Sequence[CallRecord]) -> None:
        for c in calls:
            self.remote.add(c.resp)

    def status(self) -> RunStatus:
        ms = [*meters(*self.clients), self.remote]
        tin, tout = sum(m.tokens_in for m in ms), sum(m.tokens_out for m in ms)
        cost = self.price(tin, tout) if self.price else 0.0
        return RunStatus(self.done - self.start_done, self.total - self.start_done, time.perf_counter() - self.t0,
                         sum(m.calls for m in ms), sum(m.cached for m in ms), sum(m.failed for m in ms),
                         tin, tout, cost)


def evaluate(
    store: Store, spec: RunSpec, *, llm: Any = None, config: Config | None = None,
    progress: Progress | None = None, budget: Budget | None = None,
    on_question: Callable[[Question, Trace], None] | None = None,
    executor: Executor | None = None, llm_config: LLMConfig | None = None,
    price: Callable[[int, int], float | None] | None = None, processes: int = 1,
) -> str:
    """Run every arm on every selected question; returns the run id. Safe to call again.

    ``executor`` runs the (question, arm) pairs (default: one thread, the sequential loop). A remote
    executor needs ``llm_config`` when ``llm`` is set (its workers build their own clients). The
    progress label is the run's :class:`~bfr_core.progress.RunStatus` line. ``processes`` > 1 on a run
    without an LLM: scopes run in worker processes (``procpool``), the same rows in the same order."""
    executor = executor or ThreadExecutor(1)
    remote = bool(getattr(executor, "remote", False))
    if remote and llm is not None and llm_config is None:
        raise BfrError("a remote executor needs the LLM settings (llm_config) to build its workers' clients")
    ensure_schema(store)
    spec = bind_data(store, spec)
    questions = select_questions(store, spec.dataset_id, spec.limit, spec.sample, spec.seed)
    run_id = spec.run_id
    register_run(store, run_id, spec.dataset_id, spec.arms, spec.budget, spec.k, spec.provider, len(questions),
                 {"limit": spec.limit, "sample": spec.sample, "seed": spec.seed, "dense": default_spec().name},
                 data_sha=spec.data_sha)
    done = done_pairs(store, run_id)
    by_scope: dict[str, list[Question]] = defaultdict(list)
    for q in questions:
        by_scope[q.scope_id].append(q)
    if processes > 1 and llm is None and on_question is None:  # -- worker processes (procpool) --
        total, finished = len(questions) * len(spec.arms), len(done)
        todo_scopes = [(s, [(q, a) for q in by_scope[s] for a in spec.arms if (q.question_id, a) not in done])
                       for s in sorted(by_scope)]
        for scope_id, rows, traces in scopes_in_processes(
                store, spec.dataset_id, [(s, t) for s, t in todo_scopes if t], processes, run_id,
                budget or spec.budget or None, config, spec.k, spec.budget):
            write_batch(store, run_id, rows, traces)
            finished += len(rows)
            if progress:
                progress(finished, total, scope_id)
        by_scope = defaultdict(list)  # done: the executor below has nothing left
    params = RunParams(run_id, spec.dataset_id, budget or spec.budget or None, spec.budget, spec.k, config)
    tracker = StatusTracker(len(questions) * len(spec.arms), [llm], price, start_done=len(done))
    cache = LLMCache(store) if remote and llm is not None else None

    todo_by_scope = {
        scope_id: [(q, a) for q in by_scope[scope_id] for a in spec.arms if (q.question_id, a) not in done]
        for scope_id in sorted(by_scope)
    }
    todo_by_scope = {k: v for k, v in todo_by_scope.items() if v}
    order = [(scope_id, item) for scope_id, todo in todo_by_scope.items() for item in todo]

    def jobs() -> Iterator[tuple[LocalScope | RemoteScope, tuple[Question, str]]]:
        """Scope by scope; a scope's views (or its payload) are made when its first job is taken (in this thread)."""
        for scope_id, todo in todo_by_scope.items():
            asked = [q.text for q, _ in todo]
            ctx: LocalScope | RemoteScope = (
                RemoteScope(params, scope_payload(store, spec.dataset_id, scope_id, asked),
                            llm_config if llm is not None else None)
                if remote else LocalScope(params, scope_views(store, spec.dataset_id, scope_id, asking=asked), llm))
            for item in todo:
                yield ctx, item

    rows: list[tuple[Any, ...]] = []
    traces: list[tuple[Any, ...]] = []
    model = {"ok": 0, "failed": 0, "error": ""}
    for n, res in enumerate(executor.map(retrieve_one, jobs())):
        scope_id, (q, arm) = order[n]
        if cache is not None and res.calls:
            cache.replay(res.calls, run_id)
        tracker.record(res.calls)
        model["ok"] += res.model_ok
        model["failed"] += res.model_failed
        model["error"] = res.model_error or model["error"]
        rows.append(res.row)
        if res.trace_json is not None:
            traces.append((run_id, q.question_id, arm, res.trace_json))
            if on_question is not None:
                on_question(q, Trace.from_dict(json.loads(res.trace_json)))
        if len(rows) == len(todo_by_scope[scope_id]):  # results come in job order: the scope is complete
            write_batch(store, run_id, rows, traces)  # one scope per batch
            tracker.done += len(rows)
            rows, traces = [], []
            if progress:
                progress(tracker.done, tracker.total, f"{scope_id} {tracker.status().line()}")
    if rows:
        write_batch(store, run_id, rows, traces)
    if model["failed"] and not model["ok"]:
        raise ModelCallsFailed(
            f"run {run_id}: all {model['failed']} model call(s) failed (last: {model['error']}); its rows are stored "
            "as failed and the run is left unfinished: check the provider settings, then run the same command "
            "again to resume")
    finish_run(store, run_id)
    return run_id


def load_trace(store: Store, run_id: str, question_id: str, arm: str) -> Trace | None:
    """A stored trace (``runs.load_trace_dict``), its arm by registered name (``arm_names``)."""
    data = load_trace_dict(store, run_id, question_id, arm)
    if data is None:
        return None
    trace = Trace.from_dict(data)
    return replace(trace, arm=canonical_arm(trace.arm))
