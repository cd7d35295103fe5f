"""Labels queued while another process flushes: how many are lost (target 0).

The app queues labels in a side file while ``bfr eval`` holds the store (``labels.queue_label``);
the holder writes them with ``labels.flush_pending``. Each run here starts ``--writers`` processes
that each queue ``--labels`` distinct labels as fast as they can, alternating the two annotation tasks
(sufficiency and answer correctness share the side file), while one more process holds the store and
flushes in a loop until every writer has finished, then once more. A label is lost when it is neither
in its task's table nor still waiting; written twice when it is there more than once; misfiled when it
landed in the other task's table.

Writes ``bench/out/label_race.json`` (per run and per task: labels saved, stored, waiting, lost,
duplicated, misfiled; seconds, machine load).
``bench/out/label_race_before.json`` is this script (``--runs 3``) run against the code before the
fix (commit a44047a: ``git archive a44047a bfr_core`` beside a copy of this file).

    .venv/bin/python -m bench.checks.bench_label_race [--runs 10] [--writers 8] [--labels 500]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import tempfile
import time
from pathlib import Path

from bfr_core.evaluation import labels
from bfr_core.store import Store

ROOT = Path(__file__).resolve().parents[2]

TASK_OF = (labels.SUFFICIENCY, labels.ANSWER)  # label j of a writer belongs to TASK_OF[j % 2]


def _writer(db: str, w: int, n: int, go: mp.Event) -> None:
    go.wait()
    for j in range(n):
        task = TASK_OF[j % 2]
        labels.queue_label(db, f"item{j % 7}", f"w{w}", task.labels[j % 3], f"{w}-{j}", task)


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
    stored = {t.name: [r[0] for r in store.cursor().execute(f"SELECT note FROM {t.table}").fetchall()]
              for t in TASK_OF}
    store.close()
    waiting = labels.pending(db)
    out: dict = {"tasks": {}}
    for k, task in enumerate(TASK_OF):
        saved = {f"{w}-{j}" for w in range(writers) for j in range(each) if j % 2 == k}
        waits = [r["note"] for r in waiting if r.get("task", labels.SUFFICIENCY.name) == task.name]
        seen = stored[task.name] + waits
        other = {n for t, notes in stored.items() if t != task.name for n in notes}
        out["tasks"][task.name] = {"saved": len(saved), "stored": len(stored[task.name]), "waiting": len(waits),
                                   "lost": len(saved - set(seen)), "duplicated": len(seen) - len(set(seen)),
                                   "misfiled": len(saved & other)}
    per = out["tasks"].values()
    return {"expected": sum(t["saved"] for t in per), "stored": sum(t["stored"] for t in per),
            "waiting": sum(t["waiting"] for t in per), "lost": sum(t["lost"] for t in per),
            "duplicated": sum(t["duplicated"] for t in per), "misfiled": sum(t["misfiled"] for t in per),
            **out, "flushes": flushes.value, "seconds": round(time.perf_counter() - started, 2)}


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
           "lost_total": sum(r["lost"] for r in runs), "misfiled_total": sum(r["misfiled"] for r in runs),
           "by_task": {t.name: {f: sum(r["tasks"][t.name][f] for r in runs)
                                for f in ("saved", "stored", "waiting", "lost", "duplicated", "misfiled")}
                       for t in TASK_OF},
           "loadavg_before": load_before,
           "loadavg_after": os.getloadavg()}
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
    print(f"lost per run {out['lost_per_run']}, duplicated {out['duplicated_per_run']}, by task {out['by_task']} "
          f"-> {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
