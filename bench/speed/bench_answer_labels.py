"""Annotate's answer-correctness task on the LoCoMo audit's real answers: queue size, blinding, page times.

    .venv/bin/python -m bench.speed.bench_answer_labels      # writes bench/out/answer_labels.json

A temporary store holds LoCoMo (``../shared/data/locomo10.json``, ingested without embeddings) and the
six answer files of ``locomo-audit/answers`` imported with ``bfr import-answers`` (each a system named
after its file, its gpt-4o-mini verdicts kept). Measured:

* ``queue``: answers imported, items in the answer queue (one per question and answer text), sources;
* ``blinding``: every item rendered as an annotator reads it (``answer_labels.blinded_item``), counted
  when its text names a system, a run id or a judge verdict word (target 0);
* ``order``: the queue's order equals the seeded hash order of its items (true/false);
* page times in Streamlit's AppTest (the server side a user waits for): ``first_open_s`` (the answer
  queue is built), ``warm_open_s`` (a new session), ``save_label_s`` (a click until the next answer is
  on screen, median of 5); targets as for sufficiency labels (warm open <= 5 s, save <= 0.5 s);
* the store functions the page and the judges report call, each alone (``functions_s``).

The JSON holds counts and times only (no benchmark text). Records the machine's load.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import statistics
import tempfile
import time
from pathlib import Path

from bench.lib.apptest import app_test, page_times, timed
from bfr_core.evaluation import answer_labels as AL
from bfr_core.evaluation import labels as L
from bfr_core.evaluation.answer_import import import_answers
from bfr_core.evaluation.judge_report import judge_report
from bfr_core.ingest import ingest
from bfr_core.ingest.sources import benchmark_file
from bfr_core.store import Store

ROOT = Path(__file__).resolve().parents[2]

AUDIT = benchmark_file("locomo").parent / "locomo-audit" / "answers"
TASK = "Is this answer correct?"


def build(path: Path) -> tuple[dict[str, str], int]:
    """LoCoMo plus the six imported answer files; (system -> run id, answers imported)."""
    s = Store(path)
    ingest(s, "locomo", benchmark_file("locomo"), embed=False, entities=False)
    runs: dict[str, str] = {}
    for p in sorted(AUDIT.glob("*.json")):
        rep = import_answers(s, p, dataset_id="locomo", name=p.stem, judge_name="gpt-4o-mini")
        runs[p.stem] = rep.run_id
    answers = s.cursor().execute("SELECT count(*) FROM results WHERE answer IS NOT NULL").fetchone()[0]
    s.cursor().execute("CHECKPOINT")
    s.close()
    return runs, int(answers)


def open_page(db: Path):
    """A new session on Annotate's answer task with the annotator's name given: seconds until shown."""
    at = app_test(db)
    at.session_state["annot_name"] = "bench"
    at.session_state["annot_task"] = TASK
    t0 = time.perf_counter()
    at.run()
    at.switch_page("pages/annotate.py").run()
    took = round(time.perf_counter() - t0, 3)
    assert not at.exception, [e.value for e in at.exception]
    assert any(m.value.startswith("**Answer to judge**") for m in at.markdown), "no answer item shown"
    return took, at


def leaks(store: Store, runs: dict[str, str]) -> dict[str, int]:
    """Items whose annotator text names a system, a run id or a verdict word."""
    words = [*runs, *runs.values(), "CORRECT", "WRONG", "gpt-4o-mini (imported)"]
    pattern = re.compile("|".join(re.escape(w) for w in words))
    items = L.items(store, L.ANSWER)
    bad = sum(bool(pattern.search(AL.blinded_item(store, i).as_text())) for i in items)
    return {"items_checked": len(items), "items_naming_system_run_or_verdict": bad}


def main() -> int:
    out = ROOT / "bench" / "out" / "answer_labels.json"
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="bfr-answer-labels-") as tmp:
        db = Path(tmp) / "locomo.duckdb"
        build_s, (runs, answers) = timed(lambda: build(db))
        first_open_s, at = open_page(db)
        import streamlit as st

        warm, saves, at = page_times(open_page, db, "ans_undecided")
        st.cache_data.clear()
        st.cache_resource.clear()
        s = Store(db)
        items = L.items(s, L.ANSWER)
        seeded = sorted(items, key=lambda i: hashlib.md5((L.ANSWER_ORDER_SEED + i).encode()).hexdigest())
        sources = s.cursor().execute("SELECT count(*) FROM answer_sources").fetchone()[0]
        blind = leaks(s, runs)
        item = items[0]
        functions = {name: timed(fn)[0] for name, fn in {
            "sync_queue": lambda: AL.sync_queue(s), "queue": lambda: L.queue(s, "bench", L.ANSWER),
            "item_questions": lambda: L.item_questions(s, L.ANSWER),
            "current_labels": lambda: L.current_labels(s, L.ANSWER),
            "blinded_item": lambda: AL.blinded_item(s, item), "judge_verdicts": lambda: AL.judge_verdicts(s, item),
            "save_label": lambda: L.save_label(s, item, "bench-fn", "correct", task=L.ANSWER),
            "human_verdicts": lambda: AL.human_verdicts(s, list(runs.values())),
            "judge_report_all_runs": lambda: judge_report(s, list(runs.values())),
            "export_rows": lambda: L.export_rows(s, tasks=(L.ANSWER,))}.items()}
        labelled = L.progress(s, "bench", L.ANSWER)[0]
        s.close()
    result = {
        "store": {"dataset": "locomo", "systems": sorted(runs), "answers": answers, "build_s": build_s},
        "queue": {"items": len(items), "sources": sources, "answers_per_item": round(answers / len(items), 3)},
        "blinding": blind, "order_is_seeded_hash": items == seeded,
        "first_open_s": first_open_s, "warm_open_s": warm, "median_warm_open_s": statistics.median(warm),
        "save_label_s": saves, "median_save_label_s": statistics.median(saves), "labels_saved_by_page": labelled,
        "functions_s": functions, "targets": {"warm_open_s": 5.0, "save_label_s": 0.5, "blinding_leaks": 0},
        "loadavg_before": load_before, "loadavg_after": os.getloadavg(),
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    print(json.dumps({k: v for k, v in result.items() if k != "functions_s"}, indent=1))
    print(f"-> {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
