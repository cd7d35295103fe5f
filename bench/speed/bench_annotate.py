"""Annotate on a full LoCoMo run (all arms): time to open the page and to save one label.

    .venv/bin/python -m bench.speed.bench_annotate            # writes bench/out/annotate.json

A temporary store holds LoCoMo (``../shared/data/locomo10.json``, ingested without embeddings) and
one finished run of six arms over every scoreable question, each result an evidence set of 10
turns of the question's own conversation (seeded; the run's numbers do not matter here, only the
9,000-odd distinct snapshots the queue is built from, as in the issue's full run). Timed:

* ``first_open_s``: the Annotate page's first run after the run finished (the queue is built);
* ``warm_open_s``: the page opened again in a new session (a browser tab; the queue is there);
* ``save_label_s``: one click on a label button, until the next item is on screen (median of 5);
* the store functions the page calls, each alone (``functions_s``).
Targets (issue 29): open <= 5 s warm, save <= 0.5 s. Pages run in Streamlit's AppTest (the server
side a user waits for, without the browser's drawing). Records the machine's load.
"""

from __future__ import annotations

import json
import os
import random
import statistics
import tempfile
import time
from pathlib import Path

from bench.lib.apptest import app_test, page_times, timed
from bfr_core.duck import insert_columns
from bfr_core.evaluation import agreement as AG
from bfr_core.evaluation import labels as L
from bfr_core.ingest import ingest
from bfr_core.ingest.sources import benchmark_file
from bfr_core.runs import ensure_schema
from bfr_core.store import Store

ROOT = Path(__file__).resolve().parents[2]

ARMS = ("mem0", "amem", "fca-ms", "bfr-text", "bfr-mv", "bfr")
RUN_ID = "locomo-annotate-bench"
SET_SIZE = 10


def build(path: Path) -> int:
    """LoCoMo plus one finished synthetic run; returns the number of results."""
    s = Store(path)
    ingest(s, "locomo", benchmark_file("locomo"), embed=False, entities=False)
    ensure_schema(s)
    rng = random.Random(2026)
    qs = s.questions("locomo", scoreable_only=True)
    scope_ids = {sc: [t.turn_id for t in s.scope_turns("locomo", sc)] for sc in {q.scope_id for q in qs}}
    cols: dict[str, list] = {k: [] for k in ("run_id", "question_id", "arm", "budget", "qtype", "evidence",
                                             "set_size", "calls", "status")}
    for q in qs:
        for arm in ARMS:
            for k, v in (("run_id", RUN_ID), ("question_id", q.question_id), ("arm", arm), ("budget", "C6"),
                         ("qtype", q.qtype), ("evidence", rng.sample(scope_ids[q.scope_id], SET_SIZE)),
                         ("set_size", SET_SIZE), ("calls", 3), ("status", "ok")):
                cols[k].append(v)
    cur = s.cursor()
    cur.execute("INSERT INTO runs (run_id, dataset_id, arms, budget, k, provider, n_questions, options, finished) "
                "VALUES (?, 'locomo', ?, 'C6', 10, 'rules', ?, '{}', current_timestamp)", [RUN_ID, list(ARMS), len(qs)])
    insert_columns(cur, "results", cols)
    cur.execute("CHECKPOINT")
    s.close()
    return len(cols["run_id"])


def open_page(db: Path) -> tuple[float, object]:
    """A new session (a browser tab) on Annotate with the annotator's name given: seconds until shown."""
    at = app_test(db)
    at.session_state["annot_name"] = "bench"
    t0 = time.perf_counter()
    at.run()
    at.switch_page("pages/annotate.py").run()
    took = round(time.perf_counter() - t0, 3)
    assert not at.exception, [e.value for e in at.exception]
    return took, at


def main() -> int:
    out = ROOT / "bench" / "out" / "annotate.json"
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="bfr-annotate-") as tmp:
        db = Path(tmp) / "locomo.duckdb"
        build_s, n_results = timed(lambda: build(db))
        first_open_s, at = open_page(db)
        items = len(L.items(Store(db, read_only=True)))
        import streamlit as st

        warm, saves, at = page_times(open_page, db, "annot_insufficient")
        st.cache_data.clear()
        st.cache_resource.clear()
        s = Store(db)
        item = L.items(s)[0]
        functions = {name: timed(fn)[0] for name, fn in {
            "sync_queue": lambda: L.sync_queue(s), "queue": lambda: L.queue(s, "bench"),
            "progress": lambda: L.progress(s, "bench"), "item_questions": lambda: L.item_questions(s),
            "blinded_item": lambda: L.blinded_item(s, item), "rater_labels": lambda: AG.rater_labels(s),
            "judge_labels": lambda: AG.judge_labels(s, item), "judged_items": lambda: L.judged_items(s),
            "export_rows": lambda: L.export_rows(s),
            "save_label": lambda: L.save_label(s, item, "bench-fn", "sufficient")}.items()}
        s.close()
    result = {
        "store": {"dataset": "locomo", "arms": list(ARMS), "results": n_results, "queue_items": items,
                  "build_s": build_s},
        "first_open_s": first_open_s, "warm_open_s": warm, "median_warm_open_s": statistics.median(warm),
        "save_label_s": saves, "median_save_label_s": statistics.median(saves), "functions_s": functions,
        "targets": {"warm_open_s": 5.0, "save_label_s": 0.5},
        "loadavg_before": [round(x, 2) for x in load_before], "loadavg_after": [round(x, 2) for x in os.getloadavg()],
        "cpus": os.cpu_count(), "command": "python -m bench.speed.bench_annotate",
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
