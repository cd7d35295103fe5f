"""What the app's shared store mode costs per request, and how long a label waits in the queue.

The app opens the store for each page run and closes it after (``Store(path, shared=True)``), so an
idle app holds no lock and ``bfr eval`` can run beside it. This measures, on a given store (default:
a fresh demo store; pass ``--db`` for a LoCoMo store):

* ``session_ms``: opening the store read-write for one request, one small read, closing (p50 / max of 20);
* ``snapshot_ms``: a request while another process holds the file: the copy is made (first request)
  and reused (later ones, within its ttl);
* ``queue_flush_ms``: writing 100 queued labels on the next writable open.

Writes ``bench/out/store_sharing.json``. The store file is copied first, so the original is never held.

    .venv/bin/python -m bench.speed.bench_store_sharing [--db STORE]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bfr_core.evaluation import labels
from bfr_core.store import Store

ROOT = Path(__file__).resolve().parents[2]

HOLD = ("import sys; from bfr_core.store import Store; s = Store(sys.argv[1]); "
        "print('ready', flush=True); sys.stdin.read(); s.close()")


def _ms(f) -> float:
    t = time.perf_counter()
    f()
    return (time.perf_counter() - t) * 1000


def _stats(xs: list[float]) -> dict:
    return {"p50": round(statistics.median(xs), 1), "max": round(max(xs), 1), "n": len(xs)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--db", default="", help="store to copy (default: a fresh demo store)")
    ap.add_argument("--out", default=str(ROOT / "bench" / "out" / "store_sharing.json"))
    args = ap.parse_args(argv)
    tmp = Path(tempfile.mkdtemp(prefix="bfr-sharing-"))
    db = tmp / "s.duckdb"
    if args.db:
        shutil.copyfile(args.db, db)
    else:
        from bfr_core.ingest.demo import ensure_demo_store

        ensure_demo_store(db, embed=False).close()
    size_mb = round(db.stat().st_size / 2**20, 1)
    shared = Store(db, shared=True)

    def request() -> None:
        with shared.held():
            shared.datasets()

    request()  # first open: schema checks
    sessions = [_ms(request) for _ in range(20)]
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(db)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True, cwd=ROOT)
    assert holder.stdout.readline().strip() == "ready"

    def held_request() -> None:
        with shared.held(wait_s=0.0):
            assert shared.snapshot_of
            shared.datasets()

    try:
        first = _ms(held_request)
        reused = [_ms(held_request) for _ in range(10)]
        for i in range(100):
            labels.queue_label(db, f"item-{i}", "bench", "sufficient")
    finally:
        holder.stdin.close()
        holder.wait(timeout=60)
    with shared.held():
        labels.ensure_schema(shared)
        shared.cursor().execute("INSERT INTO label_items (item_id, dataset_id, question_id, evidence) "
                                "SELECT 'item-' || i, 'd', 'q', ['t'] FROM range(100) t(i)")
    with shared.held():
        flush = _ms(lambda: labels.flush_pending(shared))
        stored = shared.cursor().execute("SELECT count(*) FROM labels WHERE annotator = 'bench'").fetchone()[0]
    shared.close()
    out = {"store": "demo" if not args.db else Path(args.db).name, "store_mb": size_mb,
           "session_ms": _stats(sessions), "snapshot_ms": {"first_copy": round(first, 1), "reused": _stats(reused)},
           "queue_flush_ms": {"labels": 100, "ms": round(flush, 1), "stored": stored},
           "note": "2 shared cores, other jobs running: pessimistic"}
    shutil.rmtree(tmp, ignore_errors=True)
    Path(args.out).write_text(json.dumps(out, indent=2) + "\n")
    print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
