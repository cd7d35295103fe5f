"""Where a warm ``bfr`` question's time goes on a BEAM 1M conversation: warm p50 per question and a
cProfile of the warm questions (top functions by cumulative and by own time).

Reads a store ``bench_beam.py --tier 1M`` ingested (``--db``, default
``bench/out/cache/byo_beam_1m.duckdb``; a snapshot copy, so a running bench may hold it) and one of
its conversations (``--dataset``, default the first). Views are built and the question vectors
primed first; the first ``--warmup`` questions are run and not timed; the others are timed once and
profiled once (``--cached-ner-only`` as in bench_beam). Writes ``--out`` (default
``bench/out/beam_warm_profile.json``) with the machine's load and each question's evidence, so two
runs (before / after a change) can be compared for identical evidence.

    .venv/bin/python -m bench.speed.bench_beam_warm --label after
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import pstats
import statistics
import sys
import time
from pathlib import Path

from bench.lib.byo_common import cached_only, machine
from bfr_core.pipeline import run_query
from bfr_core.retrieval.scope import scope_views
from bfr_core.store import Store

ROOT = Path(__file__).resolve().parents[2]


def _top(prof: cProfile.Profile, key: str, n: int) -> list[dict[str, object]]:
    st = pstats.Stats(prof, stream=io.StringIO())
    st.sort_stats(key)
    out = []
    for func in st.fcn_list[:n]:  # type: ignore[attr-defined]
        cc, nc, tt, ct, _ = st.stats[func]  # type: ignore[attr-defined]
        out.append({"function": f"{Path(func[0]).name}:{func[1]}({func[2]})", "calls": nc,
                    "own_s": round(tt, 3), "cumulative_s": round(ct, 3)})
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--db", default=str(ROOT / "bench" / "out" / "cache" / "byo_beam_1m.duckdb"))
    ap.add_argument("--dataset", default=None)
    ap.add_argument("--arm", default="bfr")
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--cached-ner-only", action="store_true")
    ap.add_argument("--label", default="run")
    ap.add_argument("--out", default=str(ROOT / "bench" / "out" / "beam_warm_profile.json"))
    args = ap.parse_args()
    store = Store.snapshot(args.db)
    dataset = args.dataset or sorted(d["dataset_id"] for d in store.datasets())[0]
    qs = [q for q in store.questions(dataset) if q.scoreable]
    scope = qs[0].scope_id
    qs = [q for q in qs if q.scope_id == scope]
    load = machine()
    t0 = time.perf_counter()
    views = scope_views(store, dataset, scope)
    views.dense.prime([q.text for q in qs], store)
    if args.cached_ner_only:
        views.entity._ner = cached_only(store)
    build_s = time.perf_counter() - t0
    for q in qs[: args.warmup]:
        run_query(views, q.query(), args.arm, dataset_id=dataset, k=args.k)
    timed = qs[args.warmup:]
    ms, evidence = [], {}
    for q in timed:
        t0 = time.perf_counter()
        tr = run_query(views, q.query(), args.arm, dataset_id=dataset, k=args.k)
        ms.append((time.perf_counter() - t0) * 1000)
        evidence[q.question_id] = list(tr.evidence)
    prof = cProfile.Profile()
    prof.enable()
    for q in timed:
        run_query(views, q.query(), args.arm, dataset_id=dataset, k=args.k)
    prof.disable()
    profiled_s = pstats.Stats(prof).total_tt  # type: ignore[attr-defined]
    row = {"label": args.label, "command": "bench/speed/bench_beam_warm.py " + " ".join(sys.argv[1:]),
           "dataset": dataset, "scope": scope, "turns": len(views.turns), "arm": args.arm, "k": args.k,
           "questions_timed": len(timed), "views_s": round(build_s, 2),
           "warm_ms_p50": round(statistics.median(ms), 1), "warm_ms": [round(x, 1) for x in ms],
           "profiled_s": round(profiled_s, 3), "machine_before": load, "machine_after": machine(),
           "top_cumulative": _top(prof, "cumulative", 25), "top_own": _top(prof, "tottime", 15),
           "evidence": evidence}
    out = Path(args.out)
    runs = json.loads(out.read_text(encoding="utf-8")).get("runs", []) if out.exists() else []
    runs = [r for r in runs if r["label"] != args.label] + [row]
    out.write_text(json.dumps({"runs": runs}, indent=1), encoding="utf-8")
    print(f"{args.label}: warm p50 {row['warm_ms_p50']} ms over {len(timed)} questions ({len(views.turns)} turns); "
          f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
