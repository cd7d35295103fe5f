"""Arms x questions -> per-question results and traces in the store; resumable; summarised as JSON.

A run is identified by what determines its output (dataset, arms, budget, k, provider, limit or
seeded sample), so
re-running the same command resumes it: finished (question, arm) pairs are skipped, a killed run
loses at most the batch in flight, and rows are never duplicated (primary keys, one transaction
per batch). Answer-level scores (answer, F1, judge, Suff) are optional columns filled when a
provider is set (see ``bfr_core.evaluation.answers``).

Scoring follows DESIGN.md section 4: LoCoMo questions with usable gold ids (categories 1-4) are
scored; LongMemEval Turn Hit averages over all questions (unannotated count as misses) and
``recall_all`` over the questions with gold turns.
"""

from __future__ import annotations

import hashlib
import json
import statistics
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from bfr_core.config import Budget, Config
from bfr_core.errors import BfrError
from bfr_core.evaluation.metrics import score_question
from bfr_core.evaluation.sampling import stratified_sample
from bfr_core.llm.base import LLMCallFailed
from bfr_core.llm.cache import spent_ms
from bfr_core.progress import Progress
from bfr_core.records import Question, Trace
from bfr_core.retrieval.embed import default_spec
from bfr_core.roles.answer_judge import UNDECIDED
from bfr_core.store import Store, insert_columns, rows_to_columns

RUNS_DDL = """
CREATE TABLE IF NOT EXISTS runs (
    run_id VARCHAR PRIMARY KEY, dataset_id VARCHAR, arms VARCHAR[], budget VARCHAR, k INTEGER,
    provider VARCHAR, n_questions INTEGER, options JSON, created TIMESTAMP DEFAULT current_timestamp,
    finished TIMESTAMP);
CREATE TABLE IF NOT EXISTS results (
    run_id VARCHAR, question_id VARCHAR, arm VARCHAR, budget VARCHAR, qtype VARCHAR,
    evidence VARCHAR[], set_size INTEGER, calls INTEGER, gold_n INTEGER,
    gold_hit DOUBLE, turn_hit DOUBLE, er DOUBLE, cer DOUBLE, recall_any DOUBLE, recall_all DOUBLE,
    ndcg_any DOUBLE, elapsed_ms DOUBLE, status VARCHAR, error VARCHAR,
    answer VARCHAR, f1 DOUBLE, judge VARCHAR, suff VARCHAR, suff_detail JSON, llm_ms DOUBLE,
    PRIMARY KEY (run_id, question_id, arm));
ALTER TABLE results ADD COLUMN IF NOT EXISTS llm_ms DOUBLE;
ALTER TABLE results ADD COLUMN IF NOT EXISTS judge_reason VARCHAR;
ALTER TABLE results ADD COLUMN IF NOT EXISTS lme_judge VARCHAR;
CREATE TABLE IF NOT EXISTS traces (
    run_id VARCHAR, question_id VARCHAR, arm VARCHAR, trace JSON,
    PRIMARY KEY (run_id, question_id, arm));
"""

RESULT_COLUMNS = (
    "run_id", "question_id", "arm", "budget", "qtype", "evidence", "set_size", "calls", "gold_n",
    "gold_hit", "turn_hit", "er", "cer", "recall_any", "recall_all", "ndcg_any", "elapsed_ms",
    "status", "error", "llm_ms",
)
TRACE_COLUMNS = ("run_id", "question_id", "arm", "trace")
OPTIONAL_KEYS = ("f1", "judge", "judge_undecided", "lme_judge", "lme_undecided", "suff", "llm_s_p50")  # present only when a provider filled them
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

    @property
    def run_id(self) -> str:
        parts: list[Any] = [self.dataset_id, sorted(self.arms), self.budget, self.k, self.provider, self.limit]
        if self.sample:  # appended only when set, so the ids of earlier runs stay what they were
            parts += [self.sample, self.seed]
        key = json.dumps(parts)
        return f"{self.dataset_id}-{hashlib.sha1(key.encode()).hexdigest()[:10]}"


def ensure_schema(store: Store) -> None:
    store.ensure(RUNS_DDL)


def select_questions(store: Store, dataset_id: str, limit: int | None = None, sample: int | None = None,
                     seed: int = 0) -> list[Question]:
    """The questions a run scores: LoCoMo-style scoreable flags, then a seeded sample stratified by
    type (``sample``) or the first ``limit``."""
    qs = store.questions(dataset_id, scoreable_only=True)
    if not qs:
        raise BfrError(f"dataset '{dataset_id}' has no scoreable questions in {store.path}; ingest it first")
    if sample:
        qs = stratified_sample(qs, sample, seed)
    return qs[:limit] if limit else qs


def result_row(run_id: str, q: Question, trace: Trace, llm_ms: float | None = None) -> tuple[Any, ...]:
    # The @k metrics are taken over the whole evidence set (k = its size): arms are compared as sets.
    s = score_question(trace.evidence, q.gold)
    return (
        run_id, q.question_id, trace.arm, trace.budget, q.qtype, list(trace.evidence),
        len(trace.evidence), trace.calls, len(q.gold), s.gold_hit, s.turn_hit, s.er, s.cer,
        s.recall_any, s.recall_all, s.ndcg_any, trace.elapsed_ms, "ok", None, llm_ms,
    )


def failed_row(run_id: str, q: Question, arm: str, budget: str, error: str) -> tuple[Any, ...]:
    """A question whose arm raised: scored as an empty evidence set (it stays in the denominator)."""
    s = score_question((), q.gold)
    return (run_id, q.question_id, arm, budget, q.qtype, [], 0, 0, len(q.gold), s.gold_hit, s.turn_hit,
            s.er, s.cer, s.recall_any, s.recall_all, s.ndcg_any, 0.0, "failed", error, None)


def done_pairs(store: Store, run_id: str) -> set[tuple[str, str]]:
    rows = store.cursor().execute(
        "SELECT question_id, arm FROM results WHERE run_id = ? AND status = 'ok'", [run_id]
    ).fetchall()
    return {(r[0], r[1]) for r in rows}


def write_batch(store: Store, run_id: str, rows: list[tuple[Any, ...]], traces: list[tuple[Any, ...]]) -> None:
    """One transaction: this batch's rows replace failed rows of an earlier attempt at the same
    (question, arm) pairs; finished pairs are never rewritten. Bulk inserts, not one per row."""
    batch = {(r[1], r[2]) for r in rows}
    with store.transaction() as tx:
        earlier = tx.execute("SELECT question_id, arm FROM results WHERE run_id = ? AND status = 'failed'",
                             [run_id]).fetchall()
        for question_id, arm in (p for p in earlier if p in batch):
            tx.execute("DELETE FROM results WHERE run_id = ? AND question_id = ? AND arm = ?",
                       [run_id, question_id, arm])
        insert_columns(tx, "results", rows_to_columns(RESULT_COLUMNS, rows), or_ignore=True)
        insert_columns(tx, "traces", rows_to_columns(TRACE_COLUMNS, traces), or_ignore=True)


def evaluate(
    store: Store, spec: RunSpec, *, llm: Any = None, config: Config | None = None,
    progress: Progress | None = None, budget: Budget | None = None,
    on_question: Callable[[Question, Trace], None] | None = None, processes: int = 1,
) -> str:
    """Run every arm on every selected question; returns the run id. Safe to call again.
    ``processes`` > 1 on a run without an LLM: scopes run in worker processes (``procpool``), the
    same rows in the same order; with an LLM or ``on_question`` the loop below runs."""
    from bfr_core.pipeline import run_query
    from bfr_core.retrieval.scope import scope_views

    ensure_schema(store)
    questions = select_questions(store, spec.dataset_id, spec.limit, spec.sample, spec.seed)
    run_id = spec.run_id
    cur = store.cursor()
    cur.execute(
        "INSERT OR IGNORE INTO runs (run_id, dataset_id, arms, budget, k, provider, n_questions, options) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        [run_id, spec.dataset_id, list(spec.arms), spec.budget, spec.k, spec.provider, len(questions),
         json.dumps({"limit": spec.limit, "sample": spec.sample, "seed": spec.seed, "dense": default_spec().name})],
    )
    done = done_pairs(store, run_id)
    by_scope: dict[str, list[Question]] = defaultdict(list)
    for q in questions:
        by_scope[q.scope_id].append(q)
    total = len(questions) * len(spec.arms)
    finished = len(done)
    if processes > 1 and llm is None and on_question is None:  # -- worker processes (procpool) --
        from bfr_core.evaluation.procpool import scopes_in_processes

        todo_by_scope = [(s, [(q, a) for q in by_scope[s] for a in spec.arms if (q.question_id, a) not in done])
                         for s in sorted(by_scope)]
        for scope_id, rows, traces in scopes_in_processes(
                store, spec.dataset_id, [(s, t) for s, t in todo_by_scope if t], processes, run_id,
                budget or spec.budget or None, config, spec.k, spec.budget):
            write_batch(store, run_id, rows, traces)
            finished += len(rows)
            if progress:
                progress(finished, total, scope_id)
        by_scope = {}  # done: the loop below has nothing left
    for scope_id in sorted(by_scope):
        todo = [(q, a) for q in by_scope[scope_id] for a in spec.arms if (q.question_id, a) not in done]
        if not todo:
            continue
        views = scope_views(store, spec.dataset_id, scope_id)
        prime = getattr(getattr(views, "dense", None), "prime", None)
        if prime is not None:  # cached question vectors, else batched encoding instead of one call per question
            prime(list(dict.fromkeys(q.text for q, _ in todo)), store)
        rows, traces = [], []
        for q, arm in todo:
            llm_start = spent_ms(llm)
            try:
                trace = run_query(views, q.query(), arm, dataset_id=spec.dataset_id,
                                  budget=budget or spec.budget or None, llm=llm, config=config, k=spec.k)
            except LLMCallFailed as exc:  # a model that failed for good on this question: record, go on
                rows.append(failed_row(run_id, q, arm, spec.budget, f"llm: {exc.reason}"))
                continue
            except BfrError:
                raise
            except Exception as exc:  # one question's failure must not end the run
                rows.append(failed_row(run_id, q, arm, spec.budget, f"{type(exc).__name__}: {exc}"))
                continue
            rows.append(result_row(run_id, q, trace, spent_ms(llm) - llm_start if llm is not None else None))
            traces.append((run_id, q.question_id, arm, json.dumps(trace.to_dict())))
            if on_question is not None:
                on_question(q, trace)
        write_batch(store, run_id, rows, traces)
        finished += len(todo)
        if progress:
            progress(finished, total, scope_id)
    cur.execute("UPDATE runs SET finished = ? WHERE run_id = ?", [time.strftime("%Y-%m-%d %H:%M:%S"), run_id])
    return run_id


def _mean(values: Sequence[float | None]) -> float | None:
    vals = [v for v in values if v is not None]
    return round(100.0 * sum(vals) / len(vals), 2) if vals else None


def _arm_summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "n": len(rows),
        "gold_hit": _mean([r["gold_hit"] for r in rows]),
        "turn_hit": _mean([r["turn_hit"] for r in rows]),
        "er": _mean([r["er"] for r in rows]),
        "cer": _mean([r["cer"] for r in rows]),
        "recall_all": _mean([r["recall_all"] if r["gold_n"] else None for r in rows]),
        "mean_set_size": round(sum(r["set_size"] for r in rows) / len(rows), 2) if rows else None,
        "mean_calls": round(sum(r["calls"] for r in rows) / len(rows), 2) if rows else None,
        "f1": _mean([r["f1"] for r in rows]),
        # J over decided rows: the offline judge's UNDECIDED is left out and counted apart
        "judge": _mean([None if r["judge"] in (None, UNDECIDED) else float(r["judge"] == "CORRECT")
                        for r in rows]),
        "judge_undecided": (sum(r["judge"] == UNDECIDED for r in rows)
                            if any(r["judge"] is not None for r in rows) else None),
        # LongMemEval's official judge: % "yes" of the decided rows (the offline rules' "undecided" excluded)
        "lme_judge": _mean([None if r.get("lme_judge") in (None, "undecided") else float(r["lme_judge"] == "yes")
                            for r in rows]),
        "lme_undecided": sum(r.get("lme_judge") == "undecided" for r in rows) or None,
        "suff": _mean([None if r["suff"] in (None, "uncertain") else float(r["suff"] == "sufficient")
                       for r in rows]),
        "failed": sum(r["status"] != "ok" for r in rows),
        "llm_s_p50": _median_s([r.get("llm_ms") for r in rows]),
    }


def _median_s(ms: Sequence[float | None]) -> float | None:
    """Median of the known values, milliseconds in, seconds out (LLM wall time per question)."""
    vals = [v for v in ms if v is not None]
    return round(statistics.median(vals) / 1000, 2) if vals else None


def load_results(store: Store, run_id: str) -> list[dict[str, Any]]:
    cur = store.cursor()
    cur.execute("SELECT * FROM results WHERE run_id = ? ORDER BY question_id, arm", [run_id])
    names = [d[0] for d in cur.description]
    return [dict(zip(names, r, strict=True)) for r in cur.fetchall()]


def summarize(store: Store, run_id: str, benchmark: str | None = None) -> dict[str, Any]:
    """The DESIGN.md section 4 JSON contract (percentages 0-100)."""
    ensure_schema(store)
    run = store.cursor().execute(
        "SELECT dataset_id, arms, n_questions, budget, k, provider FROM runs WHERE run_id = ?", [run_id]
    ).fetchone()
    if run is None:
        raise BfrError(f"no run '{run_id}' in {store.path}")
    rows = load_results(store, run_id)
    arms: dict[str, Any] = {}
    for arm in run[1]:
        arm_rows = [r for r in rows if r["arm"] == arm]
        summary = _arm_summary(arm_rows)
        by_type: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for r in arm_rows:
            by_type[r["qtype"]].append(r)
        summary["by_type"] = {t: _arm_summary(v) for t, v in sorted(by_type.items())}
        arms[arm] = {k: v for k, v in summary.items() if not (k in OPTIONAL_KEYS and v is None)}
        for t in summary["by_type"].values():
            for key in OPTIONAL_KEYS:
                if t.get(key) is None:
                    t.pop(key, None)
    return {
        "benchmark": benchmark or run[0], "dataset_id": run[0], "run_id": run_id,
        "n_questions": run[2], "budget": run[3] or "default", "k": run[4], "provider": run[5], "arms": arms,
    }


def list_runs(store: Store) -> list[dict[str, Any]]:
    ensure_schema(store)
    cur = store.cursor()
    cur.execute("SELECT * FROM runs ORDER BY created DESC")
    names = [d[0] for d in cur.description]
    return [dict(zip(names, r, strict=True)) for r in cur.fetchall()]


def load_trace(store: Store, run_id: str, question_id: str, arm: str) -> Trace | None:
    row = store.cursor().execute(
        "SELECT trace FROM traces WHERE run_id = ? AND question_id = ? AND arm = ?", [run_id, question_id, arm]
    ).fetchone()
    return Trace.from_dict(json.loads(row[0])) if row else None
