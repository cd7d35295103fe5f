"""The Demo page's facts on a store holding LongMemEval dev50: the shutter case's gold ranks per
view, Figure 1's premise per view, and the relevance-versus-sufficiency cases mined from a run.

    .venv/bin/python -m bench.quality.bench_demo_case --db STORE [--eval] [--arms mem0,amem,bfr-text,bfr-mv]
    # writes bench/out/demo_case.json
    .venv/bin/python -m bench.quality.bench_demo_case --offline
    # writes bench/out/demo_case_offline.json

``--offline`` measures the paper's point on the embedded demo dataset's camera-strap analogue, with
no model: BFR-MV under the recorded model decomposition (``roles.decomposer.Replay``) and under the
offline rules, each with its requirements, the requirements each gold turn's incidence row covers,
Stage I's minimum cover, the gold turns in E0 and in the final set, and mem0's top-k at the same two
set sizes (the Demo page's "at a common set size" table).

STORE must hold dataset ``longmemeval`` (e.g. the one bench/speed/bench_app_ingest.py keeps; its path is
in bench/out/app_ingest.json). The store is copied first, so it is never changed. ``--eval`` runs
``bfr eval``'s code path (offline rules) over every scoreable question with the given arms on the
copy and mines cases from that run (``bfr_core.evaluation.cases.load_cases``), reporting how many
there are, how many are the clear shape (top-k holds exactly one of two gold turns) and the ten
clearest. The machine is shared (2 cores): eval times are pessimistic.
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
import time
from dataclasses import asdict
from pathlib import Path

from bfr_core.evaluation import cases as CS
from bfr_core.store import Store

ROOT = Path(__file__).resolve().parents[2]

QID = "b3c15d39"
K = 10
DEFAULT_OUT = str(ROOT / "bench" / "out" / "demo_case.json")


def offline(out_path: str) -> None:
    from bfr_core import pipeline
    from bfr_core.ingest.demo import ensure_demo_store
    from bfr_core.roles.decomposer import Replay
    from ui.democase import point, stage_one_facts

    store = ensure_demo_store(Path(tempfile.mkdtemp(prefix="bfr-bench-demo-")) / "demo.duckdb", embed=False)
    q = store.question("demo", "q1")
    gold = list(q.gold)
    out: dict = {"question_id": q.question_id, "question": q.text, "gold": gold, "runs": {}}
    for name, llm in (("recorded", Replay(store)), ("rules", None)):
        t0 = time.perf_counter()
        trace = pipeline.run(store, "demo", q.question_id, "bfr-mv", llm=llm)
        facts = stage_one_facts(trace, gold)
        sizes = (len(facts.e0), len(trace.evidence))
        mem0 = {n: pipeline.run(store, "demo", q.question_id, "mem0", k=n).evidence for n in sizes}
        out["runs"][name] = {
            "source": facts.source, "requirements": [list(r) for r in facts.requirements],
            "gold_covers": {g: list(r) for g, r in facts.covers.items()}, "cover": list(facts.cover),
            "point": [{"holds": h, "sentence": s} for h, s in point(facts, gold, {})],
            "lattice_intents": [c["intent"] for s in trace.steps if s.kind == "lattice" for c in s.data["concepts"]],
            "rounds_new": [[t for t in s.data.get("retained", [])] for s in trace.steps if s.kind == "round"],
            "equal_size": [{"size": n, "mem0_gold": sum(g in mem0[n] for g in gold),
                            "bfr_mv_gold": sum(g in ev for g in gold)}
                           for n, ev in zip(sizes, (facts.e0, trace.evidence), strict=True)],
            "seconds": round(time.perf_counter() - t0, 2)}
    store.close()
    Path(out_path).write_text(json.dumps(out, indent=1) + "\n")
    print(json.dumps(out, indent=1)[:3000])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--offline", action="store_true", help="the demo dataset's analogue, no model (see above)")
    ap.add_argument("--db")
    ap.add_argument("--dataset", default="longmemeval")
    ap.add_argument("--eval", action="store_true")
    ap.add_argument("--arms", default="mem0,amem,bfr-text,bfr-mv")
    ap.add_argument("--out", default=DEFAULT_OUT)
    args = ap.parse_args()
    if args.offline:
        offline(args.out if args.out != DEFAULT_OUT else str(ROOT / "bench" / "out" / "demo_case_offline.json"))
        return
    if not args.db:
        ap.error("--db STORE is required without --offline")
    tmp = Path(tempfile.mkdtemp(prefix="bfr-bench-demo-")) / "store.duckdb"
    shutil.copy(args.db, tmp)
    store = Store(tmp)
    ranks = CS.view_ranks(store, args.dataset, QID, dense=True)
    out: dict = {"question_id": QID, "k": K, "gold_ranks": ranks,
                 "premise": [{"view": p.view, "inside_top_k": list(p.inside), "outside_top_k": list(p.outside),
                              "holds": p.holds} for p in CS.premise(ranks, K)]}
    if args.eval:
        from bfr_core.evaluation import evaluate

        spec = evaluate.RunSpec(args.dataset, tuple(args.arms.split(",")))
        t0 = time.perf_counter()
        run_id = evaluate.evaluate(store, spec)
        found = CS.load_cases(store, run_id, args.dataset)
        n_q = len(store.questions(args.dataset, scoreable_only=True))
        out["run"] = {"run_id": run_id, "arms": list(spec.arms), "questions": n_q,
                      "eval_s": round(time.perf_counter() - t0, 1), "cases": len(found),
                      "questions_with_a_case": len({c.question_id for c in found}),
                      "clear_pairs": sum(c.clear_pair for c in found),
                      "clearest": [asdict(c) for c in found[:10]],
                      "shutter_case_mined": any(c.question_id == QID for c in found)}
    store.close()
    Path(args.out).write_text(json.dumps(out, indent=1) + "\n")
    print(json.dumps(out, indent=1)[:3000])


if __name__ == "__main__":
    main()
