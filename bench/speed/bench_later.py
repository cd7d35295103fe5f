"""Browse before the slow part ends (issue 26): a dataset written without vectors, then used; writes ``bench/out/later.json``.

Per input (LoCoMo, the LongMemEval dev50 sample), in a fresh process (imports and model loading
included, as a user pays them) on a NEW store file (vectors are cached in the store by text hash,
so a new file is a cold cache; the static model's one-off distillation is cached per machine
under ``$BFR_CACHE_DIR`` and is not part of any figure):

* ``write_s``: ``ingest(embed=False)`` (``bfr ingest --no-embed``): the dataset is usable from here;
* ``readiness_s``: ``retrieval.readiness.readiness`` of the whole dataset, before and after;
* ``scopes``: 3 scopes (seeded sample of the sorted scope ids): the first ``scope_views`` build
  of each, cold (its texts encoded and cached: MiniLM's load falls in the first), then warm (the
  in-process LRU cleared, vectors read back from the store); ``per_text_s`` = (cold - warm) / texts
  encoded over the 2nd and 3rd scopes (model loaded), ``load_s`` = what the first cold build took
  beyond that;
* ``finish_s``: the same ``bfr ingest`` again (the resume path: ``embed.finish_embeddings`` encodes
  only what is still missing, as an ingest encodes), and the readiness after it.

The machine is shared: the load average before and after each input and the commit are recorded.

    PYTHONPATH=. nice -n 10 .venv/bin/python -m bench.speed.bench_later [--only locomo,longmemeval] [--seed 0]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.lib.git_commit import commit

ROOT = Path(__file__).resolve().parents[2]

N_SCOPES = 3


def _load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def _ready(store: Any, dataset: str, scope: str | None = None) -> dict[str, Any]:
    from dataclasses import asdict

    from bfr_core.retrieval.readiness import readiness

    t = time.perf_counter()
    r = readiness(store, dataset, scope)
    return {**asdict(r), "missing": r.missing, "seconds": round(time.perf_counter() - t, 3)}


def child(kind: str, db: str, seed: int) -> dict[str, Any]:
    """One input, measured in this (fresh) process."""
    from bfr_core.ingest import ingest
    from bfr_core.ingest.sources import benchmark_file
    from bfr_core.retrieval.scope import clear_cache, scope_views
    from bfr_core.store import Store

    path = benchmark_file(kind)
    load0 = _load()
    store = Store(db)
    t = time.perf_counter()
    report = ingest(store, kind, path, embed=False)
    write_s = time.perf_counter() - t
    before = _ready(store, kind)
    ids = sorted(s.scope_id for s in store.scopes(kind))
    picked = random.Random(seed).sample(ids, min(N_SCOPES, len(ids)))
    scopes = []
    for sid in picked:
        missing = _ready(store, kind, sid)["missing"]
        clear_cache()
        t = time.perf_counter()
        scope_views(store, kind, sid)
        cold = time.perf_counter() - t
        clear_cache()
        t = time.perf_counter()
        scope_views(store, kind, sid)
        warm = time.perf_counter() - t
        scopes.append({"scope": sid, "texts_encoded": missing, "cold_s": round(cold, 2), "warm_s": round(warm, 3),
                       "missing_after": _ready(store, kind, sid)["missing"]})
    rest = scopes[1:]
    per_text = (sum(s["cold_s"] - s["warm_s"] for s in rest) / max(1, sum(s["texts_encoded"] for s in rest))
                if rest else None)
    middle = _ready(store, kind)
    t = time.perf_counter()
    resumed = ingest(store, kind, path)  # the same file again: finishes the cache stages
    finish_s = time.perf_counter() - t
    after = _ready(store, kind)
    store.close()
    first = scopes[0]
    return {
        "input": kind, "file": path.name, "turns": report.turns, "scopes_in_dataset": report.scopes,
        "write_s": round(write_s, 2), "readiness_before": before, "scopes": scopes,
        "per_text_s": round(per_text, 5) if per_text is not None else None,
        "load_s": (round(first["cold_s"] - first["warm_s"] - per_text * first["texts_encoded"], 2)
                   if per_text is not None else None),
        "readiness_after_scopes": middle, "finish_s": round(finish_s, 2),
        "finish_notes": [n for n in resumed.notes if n.startswith("embeddings")],
        "readiness_after_finish": after,
        "loadavg_start": load0, "loadavg_end": _load(),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", default="locomo,longmemeval")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "out" / "later.json")
    ap.add_argument("--child", nargs=2, metavar=("KIND", "DB"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        print(json.dumps(child(args.child[0], args.child[1], args.seed)))
        return 0
    measured = commit()
    start = _load()
    rows = []
    with tempfile.TemporaryDirectory(prefix="bfr-bench-later-") as tmp:
        for kind in filter(None, args.only.split(",")):
            db = str(Path(tmp) / f"{kind}.duckdb")  # a new file: a cold vector cache
            out = subprocess.run([sys.executable, "-m", "bench.speed.bench_later", "--child", kind, db, "--seed", str(args.seed)],
                                 capture_output=True, text=True, check=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
            rows.append(json.loads(out.stdout.strip().splitlines()[-1]))
            r = rows[-1]
            print(f"{kind}: written in {r['write_s']} s; first scope builds {[s['cold_s'] for s in r['scopes']]} s "
                  f"cold, {[s['warm_s'] for s in r['scopes']]} s warm; {r['per_text_s']} s/text; "
                  f"the rest in {r['finish_s']} s", file=sys.stderr)
    doc = {"benchmark": "later", "commit": measured, "cpus": os.cpu_count(), "seed": args.seed,
           "n_scopes": N_SCOPES, "loadavg_start": start, "loadavg_end": _load(), "results": rows,
           "per_text_s_max": max((r["per_text_s"] for r in rows if r["per_text_s"] is not None), default=None)}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
