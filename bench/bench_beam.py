"""BEAM: every arm and four reference rankings at 10 and 40 turns; Turn Hit and recall_all per ability
and per tier; the scoreable-question count per ability; warm p50 per question and arm.

The store (``--db``, default ``bench/out/cache/byo_beam.duckdb``) is ingested first when it lacks the
dataset (``bfr ingest beam PATH``: MiniLM and NER, slow on a shared 2-core machine); ``--path`` picks
the folder (default: the whole copy, ``../shared/data/beam``; a tier folder such as ``beam/100K``
runs that tier only). Only scoreable questions (gold message ids in ``source_chat_ids``) are run;
the counts per ability of all and of scoreable questions are reported. ``--limit`` keeps the first N
conversations. Writes ``bench/out/beam.json`` (``--out``) with the machine's load.

    .venv/bin/python bench/bench_beam.py --path ../shared/data/beam/100K --name beam-100k
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from byo_common import all_arms, machine, run_rows, summary  # noqa: E402

from bfr_core.ingest import ingest  # noqa: E402
from bfr_core.ingest.sources import data_dir  # noqa: E402
from bfr_core.store import Store  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--path", default=str(data_dir() / "beam"))
    ap.add_argument("--name", default="beam")
    ap.add_argument("--db", default=str(ROOT / "bench" / "out" / "cache" / "byo_beam.duckdb"))
    ap.add_argument("--arms", default=",".join(all_arms()))
    ap.add_argument("--ks", default="10,40")
    ap.add_argument("--limit", type=int, default=None, help="first N conversations only")
    ap.add_argument("--cached-ner-only", action="store_true",
                    help="entity view: cached NER spans only, parse nothing (see byo_common)")
    ap.add_argument("--no-entities", action="store_true", help="ingest without the NER pass")
    ap.add_argument("--out", default=str(ROOT / "bench" / "out" / "beam.json"))
    args = ap.parse_args()
    store = Store(args.db)
    took = None
    if store.dataset(args.name) is None:
        t0 = time.perf_counter()
        ingest(store, "beam", args.path, name=args.name, entities=not args.no_entities)
        took = round(time.perf_counter() - t0, 1)
    every = store.questions(args.name)
    scopes = [s.scope_id for s in store.scopes(args.name)]
    keep = set(scopes[: args.limit] if args.limit else scopes)
    qs = [q for q in every if q.scoreable and q.scope_id in keep]
    load_before = machine()
    t0 = time.perf_counter()
    rows = run_rows(store, args.name, qs, args.arms.split(","), [int(k) for k in args.ks.split(",")],
                    lambda q: {"ability": q.qtype, "tier": q.scope_id.split("/")[0]}, log=lambda m: print(m, flush=True),
                    cached_ner_only=args.cached_ner_only)
    out = {
        "command": "bench/bench_beam.py " + " ".join(sys.argv[1:]), "dataset": args.name, "source": args.path,
        "conversations": len(keep), "cached_ner_only": args.cached_ner_only, "questions_run": len(qs), "ingest_s": took, "eval_s": round(time.perf_counter() - t0, 1),
        "questions_by_ability": dict(sorted(Counter(q.qtype for q in every if q.scope_id in keep).items())),
        "scoreable_by_ability": dict(sorted(Counter(q.qtype for q in qs).items())),
        "machine_before": load_before, "machine_after": machine(),
        "systems": summary(rows, ["ability", "tier"]),
    }
    store.close()
    Path(args.out).write_text(json.dumps(out, indent=1), encoding="utf-8")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
