"""Fixtures for the app tests: a temporary demo store with a finished fake eval run, a pipeline
stand-in for the page tests (``app_db``), and the real arms for the integration tests (``real_db``).

The stand-in produces every step kind the real arms document (pool, requirements, context,
lattice, prefilter, selection, grounding, round, topk) from token overlap only; it never reads
gold ids. Its top-k holds the order turn of the demo's camera-strap question but not the arrival
(the arrival shares no word with the question), and its rounds reach the arrival.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

from bfr_core import pipeline
from bfr_core.records import Step, Trace
from bfr_core.store import Store
from bfr_core.text import tokenize

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app.py")
RUN_ID = "demo-fake0001"
TIMEOUT = 30


def _overlap(q: str, text: str) -> float:
    qt = set(tokenize(q))
    tt = tokenize(text)
    return sum(1 for t in tt if t in qt) / (1 + len(tt)) ** 0.5


def fake_run(store: Store, dataset_id: str, question_id: str, arm: str, *, budget=None, llm=None, config=None,
             k=None) -> Trace:
    q = store.question(dataset_id, question_id).query()  # the arm sees the query only
    turns = store.scope_turns(dataset_id, q.scope_id)
    ranked = sorted(turns, key=lambda t: -_overlap(q.text, t.text))
    scored = [{"turn_id": t.turn_id, "score": round(_overlap(q.text, t.text), 4), "rank": i}
              for i, t in enumerate(ranked)]
    label = "offline rules" if llm is None else getattr(llm, "label", "llm")
    if arm in ("mem0", "amem", "com", "mragent-flat"):
        hits = scored[: k or 10]
        step = Step("topk", "BM25 top-k", tuple(h["turn_id"] for h in hits), 1,
                    {"view": "text", "cue": q.text, "k": k or 10, "hits": hits})
        return Trace(dataset_id, question_id, arm, "", label, (step,), 1.0)
    pool = scored[:12]
    pids = [p["turn_id"] for p in pool]
    words = list(dict.fromkeys(tokenize(q.text)))[:3] or ["answer"]
    reqs = [{"id": f"r{i + 1}", "text": w, "kind": "entity" if i == 0 else "event"} for i, w in enumerate(words)]
    by_id = {t.turn_id: t for t in turns}
    inc = [[int(r["text"] in tokenize(by_id[p].text)) for r in reqs] for p in pids]
    concepts = [{"id": "c0", "extent": pids, "intent": [], "level": 0}]
    for j, r in enumerate(reqs):
        concepts.append({"id": f"c{j + 1}", "extent": [p for p, row in zip(pids, inc, strict=True) if row[j]],
                         "intent": [r["id"]], "level": 1})
    concepts.append({"id": "c9", "extent": [], "intent": [r["id"] for r in reqs], "level": len(reqs)})
    edges = [[f"c{j + 1}", "c0"] for j in range(len(reqs))] + [["c9", f"c{j + 1}"] for j in range(len(reqs))]
    kept = pids[:8]
    sel = kept[:3]
    cov = {t: [r["id"] for j, r in enumerate(reqs) if inc[pids.index(t)][j]] for t in sel}
    e0 = tuple(sel)
    steps = [
        Step("pool", "Candidate pool", (), 0, {"view": "text", "candidates": pool}),
        Step("requirements", "Requirements", (), 0, {"requirements": reqs, "source": "rules"}),
        Step("context", "Formal context", (), 0, {"objects": pids, "attributes": [r["id"] for r in reqs],
                                                   "incidence": inc}),
        Step("lattice", "Concept lattice", (), 0, {"concepts": concepts, "edges": edges, "used": ["c1"]}),
        Step("prefilter", "Prefilter", (), 0, {"kept": kept, "dropped": pids[8:]}),
        Step("selection", "Minimum covering subset", (), 0, {"selected": sel, "coverage": cov, "uncovered": [],
                                                              "fallback": False, "method": "greedy"}),
        Step("grounding", "Grounding (E0)", e0, 0, {"e0": list(e0), "scores": {t: 1.0 for t in e0}}),
    ]
    if arm == "fca-ms":
        return Trace(dataset_id, question_id, arm, "C0", label, tuple(steps), 2.0)
    evidence, calls = list(e0), 0
    order = [t.turn_id for t in ranked]
    for rnd in range(1, 4):
        actions, retained = [], []
        for view in ("text", "entity", "session"):
            cands = [t for t in order if t not in evidence and t not in retained][:3]
            calls += 1
            actions.append({"view": view, "cue": q.text if view == "text" else "Sam", "skipped": False,
                            "candidates": [{"turn_id": c, "score": 0.5} for c in cands]})
            retained += cands[:2]
        # the session view brings the turns that answer a "when did it arrive" question
        arrival = [t.turn_id for t in turns if "arrived on March 14th" in t.text and t.turn_id not in evidence + retained]
        retained += arrival
        evidence += retained
        steps.append(Step("round", f"Round {rnd}", tuple(evidence), calls, {
            "round": rnd, "actions": actions, "retained": retained,
            "counters": {"rounds": rnd, "calls": calls, "new": len(evidence) - len(e0)},
            "budget": {"rounds": 3, "calls": 9, "new": 30}}))
    return Trace(dataset_id, question_id, arm, budget or "C6", label, tuple(steps), 3.0)


def add_fake_run(store: Store, run_fn=fake_run, arms=("mem0", "bfr-mv"), run_id: str = RUN_ID) -> str:
    """A finished eval run over every demo question, with answer-level columns on some rows."""
    from bfr_core import runs
    from bfr_core.evaluation.rows import result_row

    runs.ensure_schema(store)
    qs = store.questions("demo", scoreable_only=True)
    cur = store.cursor()
    cur.execute("INSERT INTO runs (run_id, dataset_id, arms, budget, k, provider, n_questions, options, finished) "
                "VALUES (?, 'demo', ?, '', 10, 'offline rules', ?, '{}', current_timestamp)",
                [run_id, list(arms), len(qs)])
    rows, traces = [], []
    for q in qs:
        for arm in arms:
            t = run_fn(store, "demo", q.question_id, arm)
            rows.append(result_row(run_id, q, t))
            traces.append((run_id, q.question_id, arm, json.dumps(t.to_dict())))
    runs.write_batch(store, run_id, rows, traces)
    # answer-level columns: mem0 wrong and "insufficient" on q1, bfr-mv right and "sufficient"
    detail = json.dumps({"label": "insufficient", "judge_labels": ["insufficient", "sufficient"],
                         "adjudicated": True, "reasons": ["", "", ""]})
    cur.execute("UPDATE results SET answer = 'unknown', f1 = 0, judge = 'WRONG', suff = 'insufficient', "
                "suff_detail = ? WHERE run_id = ? AND arm = 'mem0'", [detail, run_id])
    cur.execute("UPDATE results SET answer = '11 days', f1 = 1, judge = 'CORRECT', suff = 'sufficient', "
                "suff_detail = ? WHERE run_id = ? AND arm = 'bfr-mv'",
                [json.dumps({"label": "sufficient", "judge_labels": ["sufficient", "sufficient"],
                             "adjudicated": False}), run_id])
    return run_id


def cache_all_vectors(store: Store, dataset_id: str = "demo") -> int:
    """Cache a (zero) vector of every default dense model for every turn text of ``dataset_id``, as a
    finished ingest leaves them, without loading a model; returns how many texts."""
    import numpy as np

    from bfr_core.retrieval.embed import store_vectors
    from bfr_core.retrieval.encoders import default_spec
    from bfr_core.retrieval.views.common import index_text
    from bfr_core.store import text_hash

    hashes = sorted({text_hash(index_text(t)) for s in store.scopes(dataset_id)
                     for t in store.scope_turns(dataset_id, s.scope_id)})
    spec = default_spec()
    for mid in [spec.base] + ([spec.short] if spec.short else []):
        store_vectors(store, mid, hashes, np.zeros((len(hashes), 4), np.float32))
    return len(hashes)


@pytest.fixture(autouse=True)
def _navigation_mode(monkeypatch):
    """Run app.py as the st.navigation frame on every AppTest run, as the server does.

    AppTest resets ``PagesManager.uses_pages_directory`` before each run, and because this app
    keeps its pages in ``pages/`` Streamlit would then replay the previous page through its legacy
    (v1) multipage wrapper, skipping app.py's sidebar. A live server sets the flag to False at
    the first ``st.navigation`` call and keeps it; this fixture does the same for every run.
    """
    from streamlit.runtime import pages_manager as pm

    original = pm.PagesManager.__init__

    def init(self, *args, **kwargs):
        original(self, *args, **kwargs)
        pm.PagesManager.uses_pages_directory = False

    monkeypatch.setattr(pm.PagesManager, "__init__", init)


@pytest.fixture(scope="session")
def template_db(tmp_path_factory) -> Path:
    """The demo store (no embeddings) plus a finished fake run, built once per session."""
    from bfr_core.ingest.demo import ensure_demo_store

    path = tmp_path_factory.mktemp("template") / "demo.duckdb"
    store = ensure_demo_store(path, embed=False)
    add_fake_run(store)
    store.con.execute("CHECKPOINT")
    store.close()
    return path


@pytest.fixture()
def app_db(template_db, tmp_path, monkeypatch) -> Path:
    """A private copy of the template store, opened by the app through BFR_STORE.

    The pipeline is the stand-in above, so these tests check the app, whatever the arms do today.
    """
    import streamlit as st

    path = tmp_path / "store.duckdb"
    shutil.copy(template_db, path)
    monkeypatch.setenv("BFR_STORE", str(path))
    monkeypatch.setattr(pipeline, "run", fake_run)
    yield path
    st.cache_data.clear()
    st.cache_resource.clear()


@pytest.fixture()
def real_db(template_db, tmp_path, monkeypatch) -> Path:
    """Like ``app_db`` but with the real arms (an ImportError of them fails the test, never skips it)."""
    import streamlit as st

    path = tmp_path / "store.duckdb"
    shutil.copy(template_db, path)
    monkeypatch.setenv("BFR_STORE", str(path))
    yield path
    st.cache_data.clear()
    st.cache_resource.clear()


def app_test():
    from streamlit.testing.v1 import AppTest

    return AppTest.from_file(APP, default_timeout=TIMEOUT)


def texts(at) -> str:
    """Every piece of text the run rendered (markdown, captions, headers, alerts, widget labels)."""
    parts = []
    for kind in ("markdown", "caption", "title", "header", "subheader", "success", "info", "warning", "error",
                 "text", "metric"):
        for el in at.get(kind):
            parts.append(str(getattr(el, "value", "")))
            parts.append(str(getattr(el, "label", "")))
    return "\n".join(parts)


def shipped_recording(question_id: str) -> str:
    """"recorded from MODEL on DATE" for the demo question's entry of data/demo_llm_cache.json."""
    from bfr_core.ingest.demo import RECORDED_PATH

    entries = json.loads(RECORDED_PATH.read_text("utf-8"))["entries"]
    e = next(e for e in entries if e["question_id"] == question_id)
    return f"recorded from {e['provider']}:{e['model']} on {e['created'][:10]}"


@pytest.fixture()
def browser_app(tmp_path):
    """Hook for browser tests of the live app (e.g. an eval started while it is open): the demo store
    with a finished run at ``db``, the app served on it, a Chromium page. Yields (url, db, page, bc),
    ``bc`` being scripts/browser_check.py (serve, check, wait_idle, shot)."""
    import sys

    if not Path("/usr/bin/chromium").exists():
        pytest.skip("needs /usr/bin/chromium")
    pytest.importorskip("playwright")
    sys.path.insert(0, str(ROOT / "scripts"))
    import browser_check as bc

    fake = not bc.pipeline_available()
    db = tmp_path / "store.duckdb"
    bc.build_store(db, fake=fake)
    with bc.serve(db, log=tmp_path / "streamlit.log", fake=fake) as (url, _), bc.browser() as page:
        yield url, db, page, bc


@pytest.fixture(scope="module")
def bc():
    """scripts/browser_check.py, which drives headless Chromium (shared by the browser tests)."""
    sys.path.insert(0, str(ROOT / "scripts"))
    import browser_check

    return browser_check
