"""Labels queued while another process flushes: how many are lost (target 0).

The app queues labels in a side file while ``bfr eval`` holds the store (``labels.queue_label``);
the holder writes them with ``labels.flush_pending``. Each run here starts ``--writers`` processes
that each queue ``--labels`` distinct labels as fast as they can, while one more process holds the
store and flushes in a loop until every writer has finished, then once more. A label is lost when it
is neither in the store nor still waiting; written twice when it is in the store more than once.

Writes ``bench/out/label_race.json`` (lost and duplicated labels per run, seconds, machine load).
``bench/out/label_race_before.json`` is this script (``--runs 3``) run against the code before the
fix (commit a44047a: ``git archive a44047a bfr_core`` beside a copy of this file).

    .venv/bin/python bench/bench_label_race.py [--runs 10] [--writers 8] [--labels 500]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bfr_core.evaluation import labels  # noqa: E402
from bfr_core.store import Store  # noqa: E402


def _writer(db: str, w: int, n: int, go: mp.Event) -> None:
    go.wait()
    for j in range(n):
        labels.queue_label(db, f"item{j % 7}", f"w{w}", labels.LABELS[j % 3], f"{w}-{j}")


def _flusher(db: str, done: mp.Event, go: mp.Event, flushes: mp.Value) -> None:
    store = Store(db)
    labels.ensure_schema(store)
    go.set()
    while not done.is_set():
        labels.flush_pending(store)
        flushes.value += 1
    labels.flush_pending(store)
    store.close()


def race(folder: Path, writers: int, each: int) -> dict:
    """One race in ``folder``; the counts of lost and duplicated labels."""
    db = str(folder / "race.duckdb")
    ctx = mp.get_context("spawn")
    go, done, flushes = ctx.Event(), ctx.Event(), ctx.Value("i", 0)
    started = time.perf_counter()
    flusher = ctx.Process(target=_flusher, args=(db, done, go, flushes))
    flusher.start()
    procs = [ctx.Process(target=_writer, args=(db, w, each, go)) for w in range(writers)]
    for p in procs:
        p.start()
    for p in procs:
        p.join()
    done.set()
    flusher.join()
    if flusher.exitcode or any(p.exitcode for p in procs):
        raise RuntimeError(f"a race process failed: flusher {flusher.exitcode}, "
                           f"writers {[p.exitcode for p in procs]}")
    store = Store(db, read_only=True)
    stored = [r[0] for r in store.cursor().execute("SELECT note FROM labels").fetchall()]
    store.close()
    waiting = [r["note"] for r in labels.pending(db)]
    expected = {f"{w}-{j}" for w in range(writers) for j in range(each)}
    seen = stored + waiting
    return {"expected": len(expected), "stored": len(stored), "waiting": len(waiting),
            "lost": len(expected - set(seen)), "duplicated": len(seen) - len(set(seen)),
            "flushes": flushes.value, "seconds": round(time.perf_counter() - started, 2)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--writers", type=int, default=8)
    ap.add_argument("--labels", type=int, default=500, help="labels queued by each writer")
    ap.add_argument("--out", default=str(ROOT / "bench" / "out" / "label_race.json"))
    args = ap.parse_args(argv)
    load_before = os.getloadavg()
    runs = []
    for i in range(args.runs):
        with tempfile.TemporaryDirectory(prefix="bfr-label-race-") as tmp:
            runs.append(race(Path(tmp), args.writers, args.labels))
        print(f"run {i + 1}: {runs[-1]}", flush=True)
    out = {"writers": args.writers, "labels_each": args.labels, "runs": runs,
           "lost_per_run": [r["lost"] for r in runs], "duplicated_per_run": [r["duplicated"] for r in runs],
           "lost_total": sum(r["lost"] for r in runs), "loadavg_before": load_before,
           "loadavg_after": os.getloadavg()}
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
    print(f"lost per run {out['lost_per_run']}, duplicated {out['duplicated_per_run']} -> {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
