"""App speed: start to first rendered page, and Failures-page filtering at LoCoMo scale.

    .venv/bin/python -m bench.speed.bench_app            # writes bench/out/app.json
    .venv/bin/python -m bench.speed.bench_app --fresh-clone [--src DIR]   # section 4 only

1. Start: spawn ``streamlit run app.py`` against a copy of the demo store and time until headless
   Chromium shows the Home page's last section ("Pages"). Median of 3 starts; the store exists
   already. A fresh clone first builds it (``ensure_demo_store``, with embeddings when
   bfr_core.retrieval.embed is there), timed separately as ``first_start_build_demo_store_s``.
2. Failures: a synthetic store with 1,536 questions x 8 arms of results. Times the pivot query
   (cache miss), each filter on the pivoted frame, and whole Failures-page reruns in AppTest after
   a filter change (the number a user feels, minus the browser's drawing).
3. Store opening (``--store-opening`` runs only this, into the existing JSON): a fresh clone's demo
   store built as the app builds it and Home's first run on it, against the build with vectors.
4. Fresh clone (``--fresh-clone [--src DIR]``, only this, into the existing JSON under ``fresh_clone``):
   ``git clone`` of this repository (or ``--src``) into ``/tmp/fresh-app``, then the README's first
   command, ``bash scripts/app.sh`` (its set-up of ``.venv`` from pip's cache and local wheels, then
   ``streamlit run``), until headless Chromium shows Home's "Pages" section on the default demo
   store, which the first visit builds ("Opening the store..."). Timed: clone, set-up (until the
   script's process becomes streamlit), server start (until healthy), store opening to a usable Home
   (first visit to "Pages"). The app is stopped and ``/tmp/fresh-app`` removed afterwards.
Targets: start <= 5 s, filtering <= 0.5 s, store opening to a usable Home <= 10 s.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from bench.lib import git_commit  # the code this bench measured
from bfr_core.store import Store
from scripts import browser_check as bc

ROOT = Path(__file__).resolve().parents[2]

ARMS = ("mem0", "amem", "com", "mragent-flat", "fca-ms", "bfr-text", "bfr-mv", "bfr")
N_QUESTIONS = 1536
TYPES = ("multi-hop", "temporal", "open-domain", "single-hop")


def time_start(db: Path, runs: int = 3) -> dict:
    out = []
    with bc.browser() as page:
        for _ in range(runs):
            with bc.serve(db) as (url, t0):
                healthy = time.perf_counter() - t0
                page.goto(url + "/")
                page.get_by_text("Pages", exact=True).first.wait_for(timeout=60_000)
                out.append({"healthy_s": round(healthy, 3), "first_page_s": round(time.perf_counter() - t0, 3)})
    return {"runs": out, "median_first_page_s": statistics.median(r["first_page_s"] for r in out)}


def time_first_start(tmp: Path) -> float:
    """A fresh store file: the app builds the demo dataset itself before the first page."""
    db = tmp / "fresh" / "demo.duckdb"
    from bfr_core.ingest.demo import ensure_demo_store

    t0 = time.perf_counter()
    ensure_demo_store(db).close()  # as the app does: with embeddings when bfr_core.retrieval.embed is there
    return round(time.perf_counter() - t0, 3)


def time_store_opening(tmp: Path) -> dict:
    """A fresh clone's first visit: the demo store built as the app builds it (``ui.resources.build_demo``:
    no vectors, no names) and Home rendered on it in AppTest; then the build with vectors and names
    (the app's way before issue 29) for comparison. Each on a new file."""
    from bfr_core.ingest.demo import ensure_demo_store
    from ui import resources as R

    fresh = tmp / "opening" / "demo.duckdb"
    fresh.parent.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    R.build_demo(fresh)
    build_s = time.perf_counter() - t0
    os.environ["BFR_STORE"] = str(fresh)
    from streamlit.testing.v1 import AppTest

    t1 = time.perf_counter()
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=600).run()
    home_s = time.perf_counter() - t1
    assert not at.exception and any("demo" in str(d.value) for d in at.dataframe), "Home did not show the demo store"
    old = tmp / "opening_old" / "demo.duckdb"
    t2 = time.perf_counter()
    ensure_demo_store(old, embed=True).close()
    old_s = time.perf_counter() - t2
    return {"build_demo_s": round(build_s, 3), "home_first_run_s": round(home_s, 3),
            "store_opening_to_usable_home_s": round(build_s + home_s, 3), "target_s": 10.0,
            "ok": build_s + home_s <= 10.0, "before_build_with_vectors_and_names_s": round(old_s, 3),
            "loadavg": [round(x, 2) for x in os.getloadavg()]}


FRESH = Path("/tmp/fresh-app")


def _is_streamlit(pid: int) -> bool:
    """Whether ``pid`` runs streamlit now (scripts/app.sh ``exec``s it after its set-up)."""
    try:
        return b"streamlit" in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False


def time_fresh_clone(src: Path, log: Path) -> dict:
    """The README's first command on a fresh clone of ``src``, to a usable Home page (section 4)."""
    shutil.rmtree(FRESH, ignore_errors=True)
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("BFR_", "STREAMLIT_", "VIRTUAL_ENV")) and k != "PYTHONPATH"}
    t0 = time.perf_counter()
    subprocess.run(["git", "clone", "-q", str(src), str(FRESH)], check=True, env=env)
    clone_s = time.perf_counter() - t0
    commit = git_commit.commit(FRESH)
    port = bc.free_port()
    url = f"http://127.0.0.1:{port}"
    with log.open("w") as out:
        t1 = time.perf_counter()
        proc = subprocess.Popen(["bash", "scripts/app.sh", "--server.headless", "true", "--server.port", str(port),
                                 "--browser.gatherUsageStats", "false"], cwd=FRESH, env=env, stdout=out,
                                stderr=subprocess.STDOUT, start_new_session=True)
        try:
            setup_s = healthy_s = None
            while healthy_s is None:
                if proc.poll() is not None:
                    raise RuntimeError(f"scripts/app.sh exited with {proc.returncode} (log: {log})")
                if setup_s is None and _is_streamlit(proc.pid):
                    setup_s = time.perf_counter() - t1
                try:
                    with urllib.request.urlopen(url + "/_stcore/health", timeout=1) as r:
                        if r.read().strip() == b"ok":
                            healthy_s = time.perf_counter() - t1
                except OSError:
                    time.sleep(0.2)
            with bc.browser() as page:
                t2 = time.perf_counter()
                page.goto(url + "/")
                page.get_by_text("Pages", exact=True).first.wait_for(timeout=600_000)
                home_s = time.perf_counter() - t2
                shown = bc.main_text(page)
                errors = bc.exceptions(page)
        finally:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(15)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
    shutil.rmtree(FRESH, ignore_errors=True)
    total = clone_s + healthy_s + home_s
    return {"src_commit": commit, "command": "bash scripts/app.sh", "clone_s": round(clone_s, 1),
            "setup_s": round(setup_s or healthy_s, 1), "server_start_s": round(healthy_s - (setup_s or healthy_s), 1),
            "store_opening_to_usable_home_s": round(home_s, 1), "clone_to_usable_home_s": round(total, 1),
            "home_shows_demo": "demo" in shown, "page_exceptions": errors, "target_store_opening_s": 10.0,
            "ok": home_s <= 10.0 and not errors, "loadavg_end": [round(x, 2) for x in os.getloadavg()]}


def synthetic_store(path: Path) -> str:
    """1,536 questions x 8 arms of finished results (random but plausible metrics)."""
    rng = random.Random(7)
    s = Store(path)
    from bfr_core import runs

    runs.ensure_schema(s)
    cur = s.cursor()
    cur.execute("INSERT INTO datasets VALUES ('locomo', 'locomo', 'synthetic', 'x', current_timestamp, '{}')")
    qs = [(f"q{i:05d}", TYPES[i % 4]) for i in range(N_QUESTIONS)]
    cur.executemany("INSERT INTO questions (dataset_id, question_id, scope_id, text, answer, qtype, scoreable, position) "
                    "VALUES ('locomo', ?, 'conv', ?, 'a', ?, true, ?)",
                    [[q, f"What did person {i} say about topic {i % 97}?", t, i] for i, (q, t) in enumerate(qs)])
    run_id = "locomo-synthetic"
    cur.execute("INSERT INTO runs (run_id, dataset_id, arms, budget, k, provider, n_questions, finished) "
                "VALUES (?, 'locomo', ?, '', 10, 'offline rules', ?, current_timestamp)", [run_id, list(ARMS), N_QUESTIONS])
    rows = []
    for q, t in qs:
        for a in ARMS:
            gh = float(rng.random() < 0.7)
            er = gh * rng.choice((0.5, 1.0))
            rows.append([run_id, q, a, "C6", t, [f"t{rng.randrange(500)}" for _ in range(10)], 10, 3, 2, gh, gh, er,
                         float(er == 1.0), gh, float(er == 1.0), gh, 5.0, "ok", None, "x", rng.random(),
                         rng.choice(("CORRECT", "WRONG")), rng.choice(("sufficient", "insufficient", "uncertain"))])
    cols = ("run_id, question_id, arm, budget, qtype, evidence, set_size, calls, gold_n, gold_hit, turn_hit, er, cer, "
            "recall_any, recall_all, ndcg_any, elapsed_ms, status, error, answer, f1, judge, suff")
    cur.executemany(f"INSERT INTO results ({cols}) VALUES ({', '.join('?' * 23)})", rows)
    cur.execute("CHECKPOINT")
    s.close()
    return run_id


def best(fn, n: int = 5) -> float:
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return round(min(times), 4)


def time_failures(db: Path, run_id: str) -> dict:
    from ui import tables as T

    store = Store(db)
    t0 = time.perf_counter()
    df = T.pivot_results(store, run_id)
    pivot_s = round(time.perf_counter() - t0, 4)
    filters = {
        "qtype": {"qtypes": ["temporal"]},
        "arm_a_hit_arm_b_missed": {"hit_arm": "bfr-mv", "miss_arm": "mem0"},
        "gold_hit_but_not_suff": {"hit_not_suff": "bfr-mv"},
        "any_column_text": {"column": "question", "op": "contains", "value": "topic 42"},
        "any_column_number": {"column": "bfr ER", "op": "≥", "value": "0.5"},
    }
    times = {name: best(lambda kw=kw: T.filter_frame(df, **kw)) for name, kw in filters.items()}
    summary_s = best(lambda: T.type_summary(store, run_id), 3)
    store.close()

    # whole page reruns in AppTest: select the run, then change filters
    os.environ["BFR_STORE"] = str(db)
    from streamlit.runtime import pages_manager as pm
    from streamlit.testing.v1 import AppTest

    original = pm.PagesManager.__init__

    def init(self, *a, **k):  # keep st.navigation mode on every run (see tests/app/conftest.py)
        original(self, *a, **k)
        pm.PagesManager.uses_pages_directory = False

    pm.PagesManager.__init__ = init
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60).run()
    at.switch_page("pages/failures.py").run()
    t0 = time.perf_counter()
    at.run()
    first_page = round(time.perf_counter() - t0, 3)
    reruns = {}
    for name, act in (("qtype", lambda: at.multiselect(key="fail_qtypes").select("temporal")),
                      ("arm_a_hit_arm_b_missed", lambda: (at.selectbox(key="fail_hit").select("bfr-mv"),
                                                          at.selectbox(key="fail_miss").select("mem0"))),
                      ("any_column_text", lambda: (at.selectbox(key="fail_col").select("question"),
                                                   at.text_input(key="fail_val").input("topic 4")))):
        act()
        t0 = time.perf_counter()
        at.run()
        reruns[name] = round(time.perf_counter() - t0, 3)
        assert not at.exception, [e.value for e in at.exception]
    rows_left = len(next(d.value for d in at.dataframe if "question_id" in d.value.columns))
    return {"questions": len(df), "columns": len(df.columns), "pivot_query_s": pivot_s, "filter_s": times,
            "type_summary_s": summary_s, "page_rerun_cached_s": first_page, "page_rerun_after_filter_s": reruns,
            "rows_after_filters": rows_left}


def main() -> int:
    out = ROOT / "bench" / "out" / "app.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    if "--fresh-clone" in sys.argv[1:]:  # only section 4, into the existing JSON
        argv = sys.argv[1:]
        src = Path(argv[argv.index("--src") + 1]) if "--src" in argv else ROOT
        load = [round(x, 2) for x in os.getloadavg()]
        fresh = {"loadavg_start": load, **time_fresh_clone(src, ROOT / "bench" / "out" / "cache" / "fresh_clone.log")}
        result = json.loads(out.read_text(encoding="utf-8")) if out.exists() else {}
        result["fresh_clone"] = fresh
        out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
        print(json.dumps(fresh, indent=2))
        return 0
    if "--store-opening" in sys.argv[1:]:  # only section 3, into the existing JSON
        with tempfile.TemporaryDirectory(prefix="bfr-bench-app-") as tmp:
            opening = time_store_opening(Path(tmp))
        result = json.loads(out.read_text(encoding="utf-8")) if out.exists() else {}
        result["store_opening"] = opening
        out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
        print(json.dumps(opening, indent=2))
        return 0
    with tempfile.TemporaryDirectory(prefix="bfr-bench-app-") as tmp:
        tmp = Path(tmp)
        demo = tmp / "demo.duckdb"
        bc.build_store(demo, fake=not bc.pipeline_available())
        start = time_start(demo)
        first = time_first_start(tmp)
        big = tmp / "big.duckdb"
        run_id = synthetic_store(big)
        shutil.copy(big, tmp / "big_copy.duckdb")
        failures = time_failures(big, run_id)
        opening = time_store_opening(tmp)
    worst_filter = max([*failures["filter_s"].values(), *failures["page_rerun_after_filter_s"].values()])
    result = {
        "machine": {"cpus": os.cpu_count(), "python": sys.version.split()[0]},
        "start": {**start, "first_start_build_demo_store_s": first, "target_s": 5.0,
                  "ok": start["median_first_page_s"] <= 5.0},
        "failures": {**failures, "worst_filter_or_rerun_s": worst_filter, "target_s": 0.5, "ok": worst_filter <= 0.5},
        "store_opening": opening,
    }
    out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
