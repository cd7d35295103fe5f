"""Ingest speed: LoCoMo and LongMemEval dev50, cold and warm, written to ``bench/out/ingest.json``.

* cold: a new DuckDB file each repeat (parse + write + embeddings computed from scratch);
* warm: ``replace=True`` into the same file, whose embeddings are already cached;
* parse: the pure loader alone (no store), to separate parsing from writing;
* LoCoMo only: ``bfr eval --arms mem0,amem`` over all scoreable questions on the warm store, in a
  new process (start-up and model loading included).

Runs with or without ``bfr_core.retrieval.embed`` (written separately): the JSON says which. Usage::

    .venv/bin/python bench/bench_ingest.py [--repeats 3] [--no-embed] [--out bench/out/ingest.json]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bfr_core.ingest import ingest, load  # noqa: E402
from bfr_core.ingest.sources import benchmark_file, data_dir  # noqa: E402
from bfr_core.store import Store  # noqa: E402

DATA = data_dir()
FILES = {kind: benchmark_file(kind) for kind in ("locomo", "longmemeval")}


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    start = time.perf_counter()
    value = fn()
    return time.perf_counter() - start, value


def summary(seconds: list[float]) -> dict[str, float]:
    return {"min_s": round(min(seconds), 3), "median_s": round(statistics.median(seconds), 3),
            "runs": len(seconds)}


def bench_one(kind: str, path: Path, repeats: int, embed: bool, workdir: Path) -> dict[str, Any]:
    parse = [timed(lambda: load(kind, path))[0] for _ in range(repeats)]
    cold, warm = [], []
    report = None
    for i in range(repeats):
        store = Store(workdir / f"{kind}-{i}.duckdb")
        seconds, report = timed(lambda s=store: ingest(s, kind, path, embed=embed))
        cold.append(seconds)
        for _ in range(1 if i else repeats):  # warm runs reuse the first store's cached embeddings
            warm.append(timed(lambda s=store: ingest(s, kind, path, replace=True, embed=embed))[0])
        store.close()
    assert report is not None
    extra: dict[str, Any] = {}
    if kind == "locomo":  # issue 2: `bfr eval --arms mem0,amem` over LoCoMo on a warm store, new process
        bfr = Path(sys.executable).with_name("bfr")
        seconds, done = timed(lambda: subprocess.run(
            [str(bfr), "eval", "--db", str(workdir / f"{kind}-0.duckdb"), "--benchmark", "locomo",
             "--arms", "mem0,amem", "--quiet", "--json", str(workdir / "eval.json")],
            capture_output=True, text=True))
        extra["eval_mem0_amem_warm_s"] = round(seconds, 2) if done.returncode == 0 else f"failed: {done.stderr[-300:]}"
    return extra | {
        "kind": kind, "file": path.name, "bytes": path.stat().st_size,
        "scopes": report.scopes, "sessions": report.sessions, "turns": report.turns,
        "questions": report.questions, "scoreable": report.scoreable,
        "parse": summary(parse), "cold": summary(cold), "warm": summary(warm),
        "cold_turns_per_s": round(report.turns / min(cold)),
        "embed_note": report.notes[-1],
    }


def _dense_name() -> str:
    try:
        from bfr_core.retrieval.encoders import default_spec
    except ImportError:
        return "none"
    return default_spec().name


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--no-embed", dest="embed", action="store_false")
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "out" / "ingest.json")
    args = ap.parse_args(argv)
    results = []
    with tempfile.TemporaryDirectory(prefix="bfr-bench-ingest-") as tmp:
        for kind, path in FILES.items():
            if not path.is_file():
                print(f"skip {kind}: {path} not found", file=sys.stderr)
                continue
            row = bench_one(kind, path, args.repeats, args.embed, Path(tmp))
            results.append(row)
            print(f"{kind:12s} parse {row['parse']['min_s']:.2f}s  cold {row['cold']['min_s']:.2f}s  "
                  f"warm {row['warm']['min_s']:.2f}s  ({row['turns']:,} turns)", file=sys.stderr)
    out = {
        "benchmark": "ingest", "embed_requested": args.embed,
        "embeddings": "computed/cached by bfr_core.retrieval.embed" if args.embed else "skipped",
        "python": platform.python_version(), "machine": platform.machine(), "repeats": args.repeats,
        "dense": _dense_name(), "loadavg_end": [round(x, 2) for x in os.getloadavg()],
        "results": results,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
