"""The no-LLM evaluation of every arm, timed and profiled; rows checked identical to a reference.

What it runs: ``evaluate`` (what ``bfr eval`` runs, offline rules, no answers) of the 8 arms over the 50
LongMemEval-S dev50 questions, and over a seeded stratified sample of LoCoMo questions (``--locomo``,
default 100), on a warm store (``--db``: ingested with embeddings; a missing store is ingested first
and that time is reported apart). Each run starts from an empty run (its rows are deleted first) in a
fresh process state (no views cached), so the time is what a user's first ``bfr eval`` over an ingested
store costs. ``--workers N`` (default: the machine's cores) is passed to ``evaluate``'s worker
processes when this branch has them (``evaluate(processes=...)``), else ignored and said so.

Profile: cProfile over the dev50 run (``--profile``), summarised as wall seconds in the parts that
matter: views build (``scope_views``), NER (``run_ner`` / ``cached_ner``), each arm's own time (the
``elapsed_ms`` of its rows), and the rest; plus the top functions by own time.

Rows: each run's rows (evidence, set size, calls, every measure, status; not timings) are written to
``bench/out/cache/offline_rows_<dataset>.json``; ``--reference DIR`` compares them with the rows of an
earlier run (e.g. the code before a change) and reports ``identical`` per dataset.

Extrapolation: the full LongMemEval-S split (500 questions) is stated as the dev50 time x 10.
Writes ``bench/out/offline.json``. Figures under a shared 2-core machine's load are pessimistic.

    .venv/bin/python -m bench.speed.bench_offline --profile
    .venv/bin/python -m bench.speed.bench_offline --reference /tmp/rows_before
"""

from __future__ import annotations

import argparse
import cProfile
import inspect
import json
import os
import pstats
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from bfr_core.evaluation import evaluate as ev
from bfr_core.ingest import ingest
from bfr_core.pipeline import ARMS
from bfr_core.store import Store

ROOT = Path(__file__).resolve().parents[2]

DATA = ROOT.parent / "shared" / "data"
SOURCES = {"longmemeval": DATA / "longmemeval_s_dev50.json.gz", "locomo": DATA / "locomo10.json"}
ROW_KEYS = ("question_id", "arm", "budget", "qtype", "evidence", "set_size", "calls", "gold_n", "gold_hit",
            "turn_hit", "er", "cer", "recall_any", "recall_all", "ndcg_any", "status", "error")
# function name (as cProfile shows it) -> the part of the time it stands for (cumulative seconds)
PARTS = {"scope_views": "views build (scope_views)", "run_ner": "NER (spaCy)",
         "write_batch": "store writes", "select_questions": "question load"}


def ensure(store: Store) -> dict[str, float]:
    took = {}
    for name, src in SOURCES.items():
        if store.dataset(name) is None:
            start = time.perf_counter()
            ingest(store, name, src)
            took[name] = round(time.perf_counter() - start, 1)
    return took


def fresh(store: Store, run_id: str) -> None:
    ev.ensure_schema(store)
    with store.transaction() as tx:
        for table in ("results", "traces", "runs"):
            tx.execute(f"DELETE FROM {table} WHERE run_id = ?", [run_id])


def rows_of(store: Store, run_id: str) -> list[dict[str, Any]]:
    return [{k: r[k] for k in ROW_KEYS} for r in ev.load_results(store, run_id)]


def run_one(store: Store, spec: ev.RunSpec, workers: int, profile: bool) -> tuple[float, Any]:
    from bfr_core.retrieval.scope import clear_cache

    clear_cache()
    fresh(store, spec.run_id)
    kwargs = {"processes": workers} if "processes" in inspect.signature(ev.evaluate).parameters else {}
    prof = cProfile.Profile() if profile else None
    start = time.perf_counter()
    if prof:
        prof.enable()
    ev.evaluate(store, spec, **kwargs)
    if prof:
        prof.disable()
    return time.perf_counter() - start, prof


def breakdown(prof: cProfile.Profile, wall: float, rows: list[dict[str, Any]], per_arm_ms: dict[str, float]
              ) -> dict[str, Any]:
    stats = pstats.Stats(prof)
    cum: dict[str, float] = defaultdict(float)
    own: list[tuple[float, str]] = []
    for (file, line, fn), (_, _, tt, ct, _) in stats.stats.items():  # type: ignore[attr-defined]
        if fn in PARTS:
            cum[PARTS[fn]] = max(cum[PARTS[fn]], ct)  # the outermost call's cumulative time
        short = f"{Path(file).parent.name}/{Path(file).name}:{line}({fn})"
        own.append((tt, short))
    own.sort(reverse=True)
    arms_s = {a: round(ms / 1000, 2) for a, ms in sorted(per_arm_ms.items())}
    return {
        "wall_s_profiled": round(wall, 1),
        "parts_s": {k: round(v, 1) for k, v in sorted(cum.items())},
        "arm_s": arms_s, "arms_total_s": round(sum(arms_s.values()), 1),
        "note": "views build and NER are cumulative times of the outermost call (NER runs inside the "
                "entity view's first search, so it is also inside the arm time of the arm that first "
                "searched it); arm_s sums each row's elapsed_ms",
        "top_own_s": [[name, round(tt, 2)] for tt, name in own[:20]],
    }


def ner_sample(n: int) -> dict[str, Any]:
    """NER at ingest (``entity.ensure_entities``) on one core and on two: seconds for the first ``n``
    distinct dev50 turn texts, and whether every text's entities are the same both ways."""
    import gzip

    from bfr_core.retrieval.views.entity import run_ner

    with gzip.open(SOURCES["longmemeval"]) as fh:
        data = json.load(fh)
    texts = list(dict.fromkeys(t["content"] for item in data for s in item["haystack_sessions"] for t in s))[:n]
    run_ner(texts[:8])  # load the pipeline first
    out: dict[str, Any] = {"texts": len(texts)}
    got = {}
    for procs in (1, 2):
        start = time.perf_counter()
        got[procs] = run_ner(texts, processes=procs)
        out[f"s_{procs}_process"] = round(time.perf_counter() - start, 1)
    out["identical"] = got[1] == got[2]
    out["texts_per_s_2_process"] = round(len(texts) / out["s_2_process"], 1)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--db", default=str(ROOT / "bench" / "out" / "cache" / "offline.duckdb"))
    ap.add_argument("--arms", default=",".join(ARMS))
    ap.add_argument("--locomo", type=int, default=100, help="LoCoMo sample size for the rows check (0: skip)")
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--profile", action="store_true")
    ap.add_argument("--profile-only", action="store_true", help="report the profiled pass's time (no second pass)")
    ap.add_argument("--rows-dir", default=str(ROOT / "bench" / "out" / "cache"))
    ap.add_argument("--reference", default="", help="directory with offline_rows_<dataset>.json to compare")
    ap.add_argument("--out", default=str(ROOT / "bench" / "out" / "offline.json"))
    ap.add_argument("--ner-sample", type=int, default=0, help="also time NER on N dev50 texts, 1 vs 2 processes")
    args = ap.parse_args(argv)
    Path(args.db).parent.mkdir(parents=True, exist_ok=True)
    store = Store(args.db)
    ingest_s = ensure(store)
    arms = tuple(a for a in args.arms.split(",") if a)
    specs = {"longmemeval": ev.RunSpec("longmemeval", arms)}
    if args.locomo:
        specs["locomo"] = ev.RunSpec("locomo", arms, sample=args.locomo, seed=0)
    has_workers = "processes" in inspect.signature(ev.evaluate).parameters
    result: dict[str, Any] = {
        "benchmark": "offline", "arms": list(arms), "db": Path(args.db).name, "ingest_s_if_cold": ingest_s,
        "workers": args.workers if has_workers else 1, "cpu_count": os.cpu_count(),
        "loadavg_start": [round(x, 2) for x in os.getloadavg()], "runs": {},
    }
    for name, spec in specs.items():
        wall, prof = run_one(store, spec, args.workers, args.profile and name == "longmemeval")
        rows = rows_of(store, spec.run_id)
        per_arm: dict[str, float] = defaultdict(float)
        for r in ev.load_results(store, spec.run_id):
            per_arm[r["arm"]] += r["elapsed_ms"] or 0.0
        n_q = len({r["question_id"] for r in rows})
        entry: dict[str, Any] = {"questions": n_q, "rows": len(rows), "failed": sum(r["status"] != "ok" for r in rows),
                                 "wall_s": round(wall, 1), "s_per_question_arm": round(wall / max(1, len(rows)), 3)}
        if prof is not None:
            entry["profile"] = breakdown(prof, wall, rows, per_arm)
        if prof is not None and not args.profile_only:
            # the profiled run is slower: time a second, unprofiled pass for the headline figure
            wall, _ = run_one(store, spec, args.workers, False)
            entry["wall_s"] = round(wall, 1)
            entry["s_per_question_arm"] = round(wall / max(1, len(rows)), 3)
        else:
            entry["arm_s"] = {a: round(ms / 1000, 2) for a, ms in sorted(per_arm.items())}
        path = Path(args.rows_dir) / f"offline_rows_{name}.json"
        path.write_text(json.dumps(rows, default=str, sort_keys=True) + "\n", encoding="utf-8")
        if args.reference:
            ref = Path(args.reference) / f"offline_rows_{name}.json"
            entry["identical_to_reference"] = ref.exists() and json.loads(ref.read_text()) == json.loads(path.read_text())
        result["runs"][name] = entry
    if args.ner_sample:
        result["ner_at_ingest_sample"] = ner_sample(args.ner_sample)
    lme = result["runs"]["longmemeval"]
    result["target_dev50_s"] = 60
    result["dev50_met"] = lme["wall_s"] <= 60
    result["full_s_extrapolated_s"] = round(lme["wall_s"] * 10, 1)
    result["full_s_note"] = "extrapolation: the dev50 wall time x 10 (500 LongMemEval-S questions), not measured"
    result["loadavg_end"] = [round(x, 2) for x in os.getloadavg()]
    Path(args.out).write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
