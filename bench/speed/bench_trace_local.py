"""One full Trace (Run all) of the demo's camera-strap question with the local model, timed in the app.

The demo's analogue of LongMemEval's shutter-release question (``q1``: "How many days did it take for
my new camera strap to arrive after I ordered it?") on the Trace page, driven by AppTest as a visitor
would: provider ``local`` (named in a temporary ``BFR_CONFIG``, as the README's "Using a model" says),
the page's default arm (``--arm``, default bfr-mv), **Run all**: the arm's pipeline with its model
calls (the decomposition, Stage I's selection) and then the answer (for q1 the time-span step) and
the judge, all through the local model; ``llm_calls_by_role`` lists the calls. Timed: the click's
page run, and apart, one load of the model (paid once per app process, inside each run's time).

Two states of the store's LLM cache, each in a process of its own (so each pays the model load, as a
first trace after starting the app does):

* ``shipped``: the demo store as the app builds it (``ui.resources.build_demo``), whose cache holds the
  recorded decompositions (``data/demo_llm_cache.json``): the decompose call is served from it.
* ``cold``: the same store with its LLM cache emptied: every call is made.

    .venv/bin/python -m bench.speed.bench_trace_local [--arm bfr-mv] [--question q1]

Writes ``bench/out/trace_local.json`` with the machine's load (shared, 2 cores: times are pessimistic).
Needs the local model (``scripts/install_local_llm.sh``).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
STATES = ("shipped", "cold")


def _navigation_mode() -> None:
    """Keep app.py as the st.navigation frame on every AppTest run (see tests/app/conftest.py)."""
    from streamlit.runtime import pages_manager as pm

    original = pm.PagesManager.__init__

    def init(self, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003 - streamlit's own signature
        original(self, *args, **kwargs)
        pm.PagesManager.uses_pages_directory = False

    pm.PagesManager.__init__ = init


def child(state: str, db: Path, question: str, arm: str) -> dict[str, Any]:
    """Build the store, run the Trace page once (Run all) and report the time; in this process."""
    from bfr_core.store import Store
    from ui import resources as R

    R.build_demo(db)
    s = Store(db)
    if state == "cold":
        s.cursor().execute("DELETE FROM llm_cache")
    cached_before = s.cursor().execute("SELECT count(*) FROM llm_cache").fetchone()[0]
    s.close()
    os.environ["BFR_STORE"] = str(db)
    _navigation_mode()
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=1800).run()
    at.switch_page("pages/trace.py").run()
    at.selectbox(key="trace_dataset").select("demo").run()
    at.selectbox(key="trace_question").select(question).run()
    at.selectbox(key="trace_arm").select(arm).run()
    providers = at.selectbox(key="trace_provider").options
    local = next(p for p in providers if p.startswith("local"))
    at.selectbox(key="trace_provider").select(local).run()
    assert not at.exception, [e.value for e in at.exception]
    t0 = time.perf_counter()
    at.button(key="trace_all").click().run()
    run_all_s = time.perf_counter() - t0
    assert not at.exception, [e.value for e in at.exception]
    trace = at.session_state["trace_trace"]
    heads = [h.value for h in at.subheader]
    body = " ".join(str(m.value) for m in at.markdown)
    at.session_state["trace_trace"] = None  # nothing of the page holds the store past here
    s = Store(db, read_only=True)
    calls = s.cursor().execute("SELECT role, count(*), sum(CASE WHEN cached THEN 1 ELSE 0 END) "
                                "FROM llm_calls GROUP BY role ORDER BY role").fetchall()
    s.close()
    return {"state": state, "question": question, "arm": arm, "provider": local,
            "cache_rows_before": cached_before, "run_all_s": round(run_all_s, 1),
            "steps": len(trace.steps), "trace_calls": trace.calls, "trace_provider": trace.provider,
            "trace_elapsed_s": round(trace.elapsed_ms / 1000, 1),
            "final_set_shown": any(h.startswith("Final evidence set") for h in heads),
            "answered": "**Answer** (" in body,
            "llm_calls_by_role": {r: {"calls": n, "cached": int(c or 0)} for r, n, c in calls},
            "loadavg_after": [round(x, 2) for x in os.getloadavg()]}


def model_load_s() -> float:
    """One load of the local model (what the first call of an app process pays), in this process."""
    from bfr_core.llm.local_provider import LocalLLM

    llm = LocalLLM()
    t0 = time.perf_counter()
    llm._load()  # noqa: SLF001 - the provider's own lazy load, timed alone
    return round(time.perf_counter() - t0, 1)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--arm", default="bfr-mv", help="the Trace page's default arm")
    ap.add_argument("--question", default="q1")
    ap.add_argument("--child", choices=STATES, help=argparse.SUPPRESS)
    ap.add_argument("--db", help=argparse.SUPPRESS)
    ap.add_argument("--out", default=str(ROOT / "bench" / "out" / "trace_local.json"))
    args = ap.parse_args()
    if args.child:
        print(json.dumps(child(args.child, Path(args.db), args.question, args.arm)))
        return 0
    out: dict[str, Any] = {"benchmark": "trace_local", "what": __doc__.splitlines()[0],
                           "loadavg_start": [round(x, 2) for x in os.getloadavg()], "runs": {}}
    with tempfile.TemporaryDirectory(prefix="bfr-trace-local-") as tmp:
        cfg = Path(tmp) / "bfr.toml"
        cfg.write_text('[llm]\nprovider = "local"\nmodel = ""\n', encoding="utf-8")
        env = {**os.environ, "BFR_CONFIG": str(cfg), "PYTHONPATH": str(ROOT)}
        for state in STATES:
            got = subprocess.run([sys.executable, "-m", "bench.speed.bench_trace_local", "--child", state, "--db", str(Path(tmp) / f"{state}.duckdb"),
                                  "--arm", args.arm, "--question", args.question],
                                 env=env, cwd=ROOT, check=True, capture_output=True, text=True)
            out["runs"][state] = json.loads(got.stdout.strip().splitlines()[-1])
            print(f"{state}: {out['runs'][state]}", file=sys.stderr)
    out["model_load_s"] = model_load_s()
    out["loadavg_end"] = [round(x, 2) for x in os.getloadavg()]
    Path(args.out).write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
