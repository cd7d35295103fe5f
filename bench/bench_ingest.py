"""Ingest speed: LoCoMo and LongMemEval dev50, cold and warm, written to ``bench/out/ingest.json``.

* cold: a new DuckDB file each repeat (parse + write + embeddings computed from scratch);
* warm: ``replace=True`` into the same file, whose embeddings are already cached;
* parse: the pure loader alone (no store), to separate parsing from writing.

Runs with or without ``bfr_core.embed`` (written separately): the JSON says which. Usage::

    .venv/bin/python bench/bench_ingest.py [--repeats 3] [--no-embed] [--out bench/out/ingest.json]
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bfr_core.ingest import embed_available, ingest, load  # noqa: E402
from bfr_core.store import Store  # noqa: E402

DATA = ROOT.parent / "shared" / "data"
FILES = {"locomo": DATA / "locomo10.json", "longmemeval": DATA / "longmemeval_s_dev50.json.gz"}


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
    return {
        "kind": kind, "file": path.name, "bytes": path.stat().st_size,
        "scopes": report.scopes, "sessions": report.sessions, "turns": report.turns,
        "questions": report.questions, "scoreable": report.scoreable,
        "parse": summary(parse), "cold": summary(cold), "warm": summary(warm),
        "cold_turns_per_s": round(report.turns / min(cold)),
        "embed_note": report.notes[-1],
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--no-embed", dest="embed", action="store_false")
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "out" / "ingest.json")
    args = ap.parse_args(argv)
    have_embed = embed_available()
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
        "benchmark": "ingest", "embed_module_present": have_embed, "embed_requested": args.embed,
        "embeddings": "computed/cached by bfr_core.embed" if have_embed and args.embed else "skipped",
        "python": platform.python_version(), "machine": platform.machine(), "repeats": args.repeats,
        "results": results,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
