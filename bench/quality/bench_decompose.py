"""The offline decomposer against the local model's: requirements, gold coverage, lattices, Gold Hit.

What it measures (issue 29, "The lattice is empty offline"):

* ``offline``: over every scoreable LoCoMo and dev50 question, how many requirements the offline
  rules give: Stage I's (``method.requirements.decompose_rules``: the formal context's attributes,
  what the app's lattice shows) and the rules backend's decompose role (``llm.rules.decompose``).
* ``sample``: on a seeded stratified sample (``--n`` per benchmark, ``--seed``), the same question's
  offline requirements beside the local model's (``--local``: Qwen2.5-Coder-1.5B through
  ``--provider local``'s code, each call kept in the store's LLM cache, so a rerun costs no model
  call): count match, ">= 2 offline where the model gives >= 2" (the target), each gold turn covered
  by some requirement (Stage I's incidence: lexical test or MiniLM cosine), and the lattice size
  (concepts of the pool x requirements context, as fca-ms builds it).
* ``demo``: each demo question's offline requirements and lattice; with ``--local`` the model's, and
  the wall time of one fca-ms and one bfr-mv trace with the local model (decompose, select and, for
  bfr-mv, the tool calls; the cache entries of earlier calls are removed first so every call is
  made). ``--record`` writes the demo's decompose replies to ``data/demo_llm_cache.json``.
* ``shutter``: LongMemEval b3c15d39 (the shutter-release question): requirements and lattice offline.
* ``gold_hit`` (``--gold``): fca-ms / bfr-mv Gold Hit with offline rules, ``bfr eval`` run on this
  tree and on ``--before-src`` (a checkout of the code before the change), on the sample or the
  full benchmarks.

    .venv/bin/python -m bench.quality.bench_decompose --db STORE [--local] [--record] [--gold sample|full]
        [--before-src DIR]

Questions are read from the benchmark files (``../shared/data``); lattices, gold coverage and Gold Hit
need a store holding the benchmark with embeddings (``--db`` for locomo, ``--lme-db`` for dev50; a
benchmark neither holds is reported without them, see ``lattices_on``). The demo is added to ``--db``.
Writes ``bench/out/decompose.json``, with the machine's load (shared, 2 cores: times are pessimistic).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from bfr_core.config import Config, LLMConfig
from bfr_core.evaluation.evaluate import RunSpec
from bfr_core.evaluation.sampling import stratified_sample
from bfr_core.ingest import demo, load
from bfr_core.ingest.sources import benchmark_file
from bfr_core.llm import rules
from bfr_core.method.requirements import Requirement, decompose_rules, decompose_with_source
from bfr_core.method.stage1 import incidence, lattice_steps
from bfr_core.pipeline import run_query
from bfr_core.records import Question
from bfr_core.retrieval.scope import scope_views
from bfr_core.roles import decomposer
from bfr_core.store import Store

ROOT = Path(__file__).resolve().parents[2]

DATASETS = ("locomo", "longmemeval")
SHUTTER = "b3c15d39"
GOLD_ARMS = ("fca-ms", "bfr-mv", "bfr")  # the paper's Stage I arms, and ours (its cover reads the same requirements)
TRACE_ARMS = ("fca-ms", "bfr-mv")  # timed with the local model on the demo
# Stage I's offline requirements that no question form gives: the question's names (up to two) and its
# date constraint. The model's decomposition has no such addition, so the counts are compared with
# and without them (``offline`` / ``offline_content``).
NOT_FORMS = ("entity", "constraint")
COUNTS = ("offline", "offline_content", "rules_role")


def pct(part: int, whole: int) -> float | None:
    return round(100.0 * part / whole, 1) if whole else None


def lattice(views: Any, q: Question, reqs: list[Requirement], config: Config) -> dict[str, Any]:
    """Stage I's formal context over the dense pool for ``reqs``: concepts, and the gold turns each
    requirement set covers (any requirement, any pool position or not)."""
    rc = config.retrieval
    pool = views.dense.search(q.text, rc.pool, ())
    pool_ids = [h.turn_id for h in pool]
    pool_idx = [views.position[t] for t in pool_ids]
    vecs = views.encode([r.text for r in reqs])
    _, _, steps = lattice_steps(views, reqs, pool_ids, pool_idx, vecs, rc.prefilter)
    gold_idx = [views.position[g] for g in q.gold if g in views.position]
    rows = incidence(views, reqs, gold_idx, vecs)
    return {"concepts": len(steps[1].data["concepts"]), "gold": len(gold_idx),
            "gold_covered": sum(1 for r in rows if r)}


def scoreable(ds: str) -> list[Question]:
    """The benchmark's scoreable questions, read from its file (what ``bfr eval`` scores)."""
    return [q for q in load(ds, benchmark_file(ds), dataset_id=ds).questions if q.scoreable]


def offline_counts() -> dict[str, Any]:
    out = {}
    for ds in DATASETS:
        qs = scoreable(ds)
        stage1 = Counter(len(decompose_rules(q.text)) for q in qs)
        role = Counter(len(rules.decompose(q.text)) for q in qs)
        out[ds] = {"questions": len(qs),
                   "stage1_counts": dict(sorted(stage1.items())),
                   "stage1_two_or_more_pct": pct(sum(v for k, v in stage1.items() if k >= 2), len(qs)),
                   "rules_role_counts": dict(sorted(role.items())),
                   "rules_role_one_fragment": role.get(1, 0)}
    return out


def local_llm(store: Store) -> Any:
    from bfr_core.llm.factory import make_llm

    return make_llm(LLMConfig(provider="local"), store)


def _cached(llm: Any, question: str) -> bool:
    """Whether the model's decompose reply to ``question`` is in its LLM cache already."""
    req = decomposer.request(question)
    return llm.cache.get(llm.provider, llm.model, req.temperature, req.sha256()) is not None


def sample(stores: dict[str, Store], n: int, seed: int, llm: Any, config: Config,
           datasets: tuple[str, ...] = DATASETS, cached_only: bool = False) -> dict[str, Any]:
    """The seeded sample (``select_questions``' stratified draw over the file's scoreable questions);
    lattices and gold coverage where ``stores`` holds the benchmark."""
    out: dict[str, Any] = {}
    for ds in datasets:
        rows = []
        store = stores.get(ds)
        held = {q.question_id for q in store.questions(ds)} if store is not None else set()
        # the model works through the sample in a seeded random order, so a run stopped early (a busy
        # machine) has decomposed a random part of it; ``--cached-only`` then reports that part
        order = stratified_sample(scoreable(ds), n, seed)
        random.Random(seed).shuffle(order)
        for q in order:
            views = scope_views(store, ds, q.scope_id) if q.question_id in held else None
            off = decompose_rules(q.text)
            row: dict[str, Any] = {"question_id": q.question_id, "qtype": q.qtype, "offline": len(off),
                                   "offline_kinds": [r.kind for r in off],
                                   "offline_content": sum(r.kind not in NOT_FORMS for r in off),
                                   "rules_role": len(rules.decompose(q.text))}
            if views is not None:
                row.update({f"offline_{k}": v for k, v in lattice(views, q, off, config).items()})
            if llm is not None and not (cached_only and not _cached(llm, q.text)):
                start = time.perf_counter()
                loc, source = decompose_with_source(q.query(), llm)
                row.update({"local": len(loc), "local_source": source, "local_s": round(time.perf_counter() - start, 2),
                            "local_texts": [r.text for r in loc]})
                if views is not None:
                    row.update({f"local_{k}": v for k, v in lattice(views, q, loc, config).items()})
            rows.append(row)
            print(f"{ds} {q.question_id}: offline {row['offline']} local {row.get('local')}", file=sys.stderr)
        rows.sort(key=lambda r: r["question_id"])
        out[ds] = {"questions": len(rows), "summary": summarize(rows), "rows": rows}
    return out


def summarize(rows: list[dict[str, Any]]) -> dict[str, Any]:
    s: dict[str, Any] = {"offline_two_or_more_pct": pct(sum(r["offline"] >= 2 for r in rows), len(rows))}
    if rows and all("offline_concepts" in r for r in rows):
        s.update({
            "offline_concepts_median": statistics.median(r["offline_concepts"] for r in rows),
            "offline_concepts_3_or_more_pct": pct(sum(r["offline_concepts"] >= 3 for r in rows), len(rows)),
            "offline_gold_turns_covered_pct": pct(sum(r["offline_gold_covered"] for r in rows),
                                                  sum(r["offline_gold"] for r in rows))})
    local = [r for r in rows if "local" in r]
    if local:
        multi = [r for r in local if r["local"] >= 2]
        s.update({"local_decomposed": len(local), "local_two_or_more": len(multi),
                  "local_mean": round(statistics.mean(r["local"] for r in local), 2),
                  "local_fell_back_to_rules": sum("offline rules" in r["local_source"] for r in local)})
        for c in COUNTS:  # Stage I's requirements, the same without names and dates, the rules role's
            s[c] = {"two_or_more_where_local_two_or_more_pct": pct(sum(r[c] >= 2 for r in multi), len(multi)),
                    "count_match_pct": pct(sum(r[c] == r["local"] for r in local), len(local)),
                    "mean": round(statistics.mean(r[c] for r in local), 2),
                    "counts": dict(sorted(Counter(r[c] for r in local).items()))}
        s["local_counts"] = dict(sorted(Counter(r["local"] for r in local).items()))
        s["target_offline_two_or_more_where_local_two_or_more_pct"] = s["offline"][
            "two_or_more_where_local_two_or_more_pct"]
        if all("local_concepts" in r for r in local):  # both decompositions over the same questions
            s.update({"offline_concepts_median_on_these": statistics.median(r["offline_concepts"] for r in local),
                      "offline_gold_turns_covered_pct_on_these": pct(sum(r["offline_gold_covered"] for r in local),
                                                                     sum(r["offline_gold"] for r in local)),
                      "local_concepts_median": statistics.median(r["local_concepts"] for r in local),
                      "local_concepts_3_or_more_pct": pct(sum(r["local_concepts"] >= 3 for r in local), len(local)),
                      "local_gold_turns_covered_pct": pct(sum(r["local_gold_covered"] for r in local),
                                                          sum(r["local_gold"] for r in local))})
    return s


def demo_part(store: Store, llm: Any, config: Config, cache: Store, timed: int) -> dict[str, Any]:
    rows = []
    for n, q in enumerate(store.questions(demo.DATASET_ID)):
        views = scope_views(store, demo.DATASET_ID, q.scope_id)
        trace = run_query(views, q.query(), "fca-ms", dataset_id=demo.DATASET_ID, config=config)
        steps = {s.kind: s for s in trace.steps}
        row: dict[str, Any] = {"question_id": q.question_id, "gold": len(q.gold),
                               "offline": [r["text"] for r in steps["requirements"].data["requirements"]],
                               "offline_concepts": len(steps["lattice"].data["concepts"])}
        if llm is not None:
            loc, source = decompose_with_source(q.query(), llm)
            row.update({"local": [r.text for r in loc], "local_source": source})
            row["local_concepts"] = lattice(views, q, loc, config)["concepts"]
        if llm is not None and n < timed:
            for arm in TRACE_ARMS:  # every call made afresh: the time is what a first trace costs
                _forget(cache, q.text, llm)
                start = time.perf_counter()
                t = run_query(views, q.query(), arm, dataset_id=demo.DATASET_ID, llm=llm, config=config)
                row[f"local_trace_s_{arm}"] = round(time.perf_counter() - start, 1)
                row[f"local_trace_calls_{arm}"] = t.calls
        rows.append(row)
        print(f"demo {q.question_id}: {row}", file=sys.stderr)
    two = [r for r in rows if r["gold"] == 2]
    out: dict[str, Any] = {"rows": rows, "two_gold_questions": len(two),
                           "two_gold_with_2plus_reqs_and_3plus_concepts": sum(
                               len(r["offline"]) >= 2 and r["offline_concepts"] >= 3 for r in two)}
    if llm is not None:  # the same with the model's (recorded) requirements
        out["two_gold_with_2plus_local_reqs_and_3plus_concepts"] = sum(
            len(r["local"]) >= 2 and r["local_concepts"] >= 3 for r in two)
        for arm in TRACE_ARMS:
            times = [r[f"local_trace_s_{arm}"] for r in rows if f"local_trace_s_{arm}" in r]
            if times:
                out[f"local_trace_s_{arm}"] = {"p50": statistics.median(times), "max": max(times), "n": len(times)}
    return out


def _forget(store: Store, question: str, llm: Any) -> None:
    """Remove this question's cached local replies except its recorded decomposition, so a timed
    trace makes every call (the select / tool prompts hold the question text)."""
    keep = decomposer.request(question).sha256()
    store.cursor().execute("DELETE FROM llm_cache WHERE provider = ? AND model = ? AND prompt_sha256 <> ? "
                           "AND prompt_sha256 IN (SELECT prompt_sha256 FROM llm_calls WHERE role <> 'decompose')",
                           [llm.provider, llm.model, keep])


def record(store: Store, cache: Store, path: Path) -> int:
    """The demo questions' decompose replies from the cache into ``path`` (``ingest.demo.load_recorded``)."""
    cols = ", ".join(demo.RECORDED_COLUMNS)
    entries = []
    for q in store.questions(demo.DATASET_ID):
        row = cache.cursor().execute(
            f"SELECT {cols} FROM llm_cache WHERE provider = 'local' AND prompt_sha256 = ?",
            [decomposer.request(q.text).sha256()]).fetchone()
        if row:
            entry = dict(zip(demo.RECORDED_COLUMNS, row, strict=True))
            entry["created"] = entry["created"].isoformat(timespec="seconds")
            entries.append({"question_id": q.question_id, "role": "decompose", **entry})
    path.write_text(json.dumps({"what": "the local model's decompose replies to the demo questions, as LLM "
                                        "cache rows (bench/quality/bench_decompose.py --record)",
                                "entries": entries}, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return len(entries)


def shutter(store: Store | None, config: Config) -> dict[str, Any]:
    q = next(q for q in scoreable("longmemeval") if q.question_id == SHUTTER)
    reqs = decompose_rules(q.text)
    out = {"question_id": SHUTTER, "requirements": [r.text for r in reqs]}
    if store is not None:
        out.update(lattice(scope_views(store, "longmemeval", q.scope_id), q, reqs, config))
    return out


def gold_hit(dbs: dict[str, str], src: Path, label: str, n: int | None, seed: int) -> dict[str, Any]:
    """``bfr eval`` (offline rules) of :data:`GOLD_ARMS` from the code at ``src`` (each run's rows are
    deleted first, so the run is made, not resumed)."""
    out = {}
    for ds, db in dbs.items():
        spec = RunSpec(ds, GOLD_ARMS, sample=n, seed=seed if n else 0)
        Store(db).delete_runs(spec.run_id)
        with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as f:
            path = f.name
        cmd = [sys.executable, "-m", "bfr_core.cli", "eval", "--db", db, "--benchmark", ds,
               "--arms", ",".join(GOLD_ARMS), "--json", path, "--quiet"]
        if n:
            cmd += ["--sample", str(n), "--seed", str(seed)]
        start = time.perf_counter()
        subprocess.run(cmd, cwd=src, env={**os.environ, "PYTHONPATH": str(src)}, check=True)
        got = json.loads(Path(path).read_text())
        out[ds] = {"n_questions": got["n_questions"], "wall_s": round(time.perf_counter() - start, 1),
                   **{arm: got["arms"][arm]["gold_hit"] for arm in GOLD_ARMS}}
        print(f"gold {label} {ds}: {out[ds]}", file=sys.stderr)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--db", required=True, help="a store for the demo, and locomo's lattices when it holds locomo")
    ap.add_argument("--lme-db", help="the store with longmemeval (dev50) for its lattices (default: --db)")
    ap.add_argument("--n", type=int, default=50)
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--local", action="store_true", help="also decompose with the local model")
    ap.add_argument("--timed", type=int, default=7, help="demo questions whose local traces are timed")
    ap.add_argument("--record", action="store_true", help="write data/demo_llm_cache.json (needs --local)")
    ap.add_argument("--cache-db", help="the store whose LLM cache the local model uses (default: --db)")
    ap.add_argument("--gold", choices=("none", "sample", "full"), default="none")
    ap.add_argument("--before-src", help="a checkout of the code before the change (for --gold)")
    ap.add_argument("--counts-only", action="store_true", help="print the offline counts as JSON and stop")
    ap.add_argument("--datasets", default=",".join(DATASETS), help="the sample's benchmarks (default: both)")
    ap.add_argument("--cached-only", action="store_true", help="the model's decompositions only where its "
                                                              "cache holds them (a sample part of a stopped run)")
    ap.add_argument("--skip-demo", action="store_true", help="no demo part (e.g. a second process filling the "
                                                            "local model's cache for one benchmark)")
    ap.add_argument("--out", default=str(ROOT / "bench" / "out" / "decompose.json"))
    args = ap.parse_args()
    if args.counts_only:
        print(json.dumps(offline_counts()))
        return
    out: dict[str, Any] = {"benchmark": "decompose", "n": args.n, "seed": args.seed,
                           "loadavg_start": list(os.getloadavg()), "rules_version": rules.RULES_VERSION}
    config = Config()
    store = demo.ensure_demo_store(args.db)
    dbs = {"locomo": args.db, "longmemeval": args.lme_db or args.db}
    opened = {db: store if db == args.db else Store(db) for db in set(dbs.values())}
    stores = {ds: opened[db] for ds, db in dbs.items() if opened[db].dataset(ds) is not None}
    # Gold Hit where the store holds the whole benchmark (a store of the shutter question alone serves
    # its lattice only)
    dbs = {ds: db for ds, db in dbs.items() if ds in stores and len(stores[ds].questions(ds)) >= args.n}
    cache = Store(args.cache_db) if args.cache_db else store
    llm = local_llm(cache) if args.local else None
    out["local_model"] = f"{llm.provider}:{llm.model}" if llm is not None else None
    out["lattices_on"] = sorted(stores)
    out["offline"] = offline_counts()
    if args.before_src:  # the same counts from the code before the change
        got = subprocess.run([sys.executable, "-P", "-m", "bench.quality.bench_decompose", "--db", args.db,
                              "--counts-only"], check=True, text=True, capture_output=True, cwd=ROOT,
                             env={**os.environ, "PYTHONPATH": os.pathsep.join((args.before_src, str(ROOT))),
                                                      "BFR_DATA": str(benchmark_file("locomo").parent)})
        out["offline_before"] = json.loads(got.stdout)
    out["shutter"] = shutter(stores.get("longmemeval"), config)
    if not args.skip_demo:
        out["demo"] = demo_part(store, llm, config, cache, args.timed)
    if args.record and llm is not None:
        out["recorded_entries"] = record(store, cache, demo.RECORDED_PATH)
    out["sample"] = sample(stores, args.n, args.seed, llm, config, tuple(args.datasets.split(",")),
                           args.cached_only)
    if args.gold != "none":
        n = args.n if args.gold == "sample" else None
        for s in {id(x): x for x in (*opened.values(), cache)}.values():
            s.close()  # one writing process per store file: the evals run in their own
        out["gold_hit"] = {"after": gold_hit(dbs, ROOT, "after", n, args.seed)}
        if args.before_src:
            out["gold_hit"]["before"] = gold_hit(dbs, Path(args.before_src), "before", n, args.seed)
    out["loadavg_end"] = list(os.getloadavg())
    Path(args.out).write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
