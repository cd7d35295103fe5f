"""Secrets and injection.

* A planted API key (in the environment, and echoed back by the wire server in a 401 body) never
  reaches the logs (in-process at DEBUG, and the CLI's stdout / stderr), the store (every table,
  every column cast to text, and the file's raw bytes), traces, exports (labels CSV / JSONL, the
  LLM call export) or any rendered page (AppTest text of every page with the key in the env).
* SQL is parameterised: a dataset, ids, run ids, annotator names and filter values full of quotes,
  semicolons and ``--`` are stored and found as text, and every table survives.
* Conversation text with HTML and Markdown is shown as text on the Trace page (escaped source).

Not covered: secrets in a user-supplied bfr.toml that is itself rendered (no page renders it),
browser-side XSS beyond what Streamlit's Markdown renderer does with escaped source.
"""

from __future__ import annotations

import json
import logging
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from llm_wire_server import WireServer

from bfr_core.config import LLMConfig
from bfr_core.duck import StoreError
from bfr_core.evaluation import labels
from bfr_core.evaluation.answers import score_answers
from bfr_core.evaluation.evaluate import RunSpec, evaluate
from bfr_core.ingest import ingest
from bfr_core.llm import make_llm
from bfr_core.llm.cache import export_calls
from bfr_core.store import Store

ROOT = Path(__file__).resolve().parents[1]
KEY = "sk-ant-PLANTED-7f3a9c1e5b2d48f6a0c4e8b1d3f5a7c9"
OKEY = "sk-PLANTED-openai-2b4d6f8a0c1e3a5c7e9b1d3f5a7c9e0f"
PAGES = ("pages/home.py", "pages/data.py", "pages/demo.py", "pages/trace.py", "pages/failures.py",
         "pages/annotate.py")
EVIL = "x'; DROP TABLE turns; --"
DS = "evil'; DROP TABLE questions; --"
SCRIPT = "<script>alert(1)</script>"
MD = "**bold** [link](javascript:x)"
IMG = '<img src=x onerror="alert(2)">'
STATS: dict[str, int] = {}


def leaks(text: str) -> bool:
    return KEY in text or OKEY in text or "PLANTED" in text


def hostile_jsonl(path: Path) -> Path:
    recs = [
        {"type": "session", "session_id": "s'1; --", "date": "2024-01-02T10:00", "scope": "sc'; --",
         "turns": [{"turn_id": "t'1", "speaker": "Ann\"; --", "text": f"The script said {SCRIPT} loudly."},
                   {"turn_id": "t;2", "speaker": "assistant", "text": f"In bold: {MD} and {IMG}"},
                   {"turn_id": "t--3", "speaker": "Ann", "text": f"Value {EVIL} was typed."}]},
        {"type": "question", "question_id": "q'1; DELETE FROM results; --", "scope": "sc'; --",
         "question": "What did the script say in bold link?", "answer": "alert", "qtype": "single'hop",
         "gold": ["t'1", "t;2"]},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in recs), encoding="utf-8")
    return path


def all_tables_text(store: Store) -> str:
    cur = store.cursor()
    names = [r[0] for r in cur.execute("SELECT table_name FROM duckdb_tables() ORDER BY 1").fetchall()]
    parts = []
    for name in names:
        cols = [r[0] for r in cur.execute(
            "SELECT column_name FROM duckdb_columns() WHERE table_name = ? ORDER BY column_index", [name]).fetchall()]
        body = ", ".join(f'CAST("{c}" AS VARCHAR)' for c in cols)
        for row in cur.execute(f'SELECT {body} FROM "{name}"').fetchall():
            parts.append("\t".join("" if v is None else v for v in row))
    return "\n".join(parts)


def table_counts(store: Store) -> dict[str, int]:
    cur = store.cursor()
    names = [r[0] for r in cur.execute("SELECT table_name FROM duckdb_tables() ORDER BY 1").fetchall()]
    return {n: cur.execute(f'SELECT count(*) FROM "{n}"').fetchone()[0] for n in names}


@pytest.fixture(scope="module")
def server():
    srv = WireServer(reply='{"answer": "alert", "label": "CORRECT"}').start()
    yield srv
    srv.stop()


@pytest.fixture(scope="module")
def db(tmp_path_factory, server) -> Path:
    """Demo + hostile dataset, offline runs on both, answers scored through a leaky server, labels."""
    from bfr_core.ingest.demo import ensure_demo_store

    d = tmp_path_factory.mktemp("inject")
    store = ensure_demo_store(d / "store.duckdb", embed=False)
    ingest(store, "jsonl", hostile_jsonl(d / "hostile.jsonl"), name=DS, embed=False)
    runs = [evaluate(store, RunSpec(ds, ("mem0", "bfr-mv"))) for ds in ("demo", DS)]
    env = {"ANTHROPIC_API_KEY": KEY, "OPENAI_API_KEY": OKEY}
    for provider, run_id in zip(("anthropic", "openai"), runs, strict=True):
        url = server.anthropic_url if provider == "anthropic" else server.openai_url
        llm = make_llm(LLMConfig(provider=provider, model="wire", base_url=url, timeout_s=5, max_retries=1),
                       store, run_id=run_id, env=env, secrets_path="/nonexistent", sleep=lambda s: None)
        server.fail_next("echo", "500", "echo", "echo")  # 401 bodies that quote the key back
        score_answers(store, run_id, llm, answer=True, judge=True, suff=True)
    labels.sync_queue(store)
    for item in labels.items(store)[:5]:
        labels.save_label(store, item, "o'brien; DROP TABLE labels; --", "sufficient", f"note {EVIL} {SCRIPT}")
    store.con.execute("CHECKPOINT")
    store.close()
    return d / "store.duckdb"


def test_key_never_reaches_store_traces_exports_or_logs(db, server, caplog, tmp_path):
    assert any(KEY in json.dumps(s.headers) for s in server.seen), "the key was really used"
    store = Store(db)
    errors = [r[0] for r in store.cursor().execute("SELECT error FROM results WHERE error IS NOT NULL").fetchall()]
    assert errors, "the echo faults were recorded as failures"
    text = all_tables_text(store)
    assert not leaks(text)
    assert "traces" in table_counts(store) and table_counts(store)["traces"] > 0
    exports = labels.to_csv(labels.export_rows(store)) + labels.to_jsonl(labels.export_rows(store))
    exports += json.dumps(export_calls(store), default=str)
    assert "o'brien" in exports and not leaks(exports)
    store.close()
    assert KEY.encode() not in db.read_bytes() and OKEY.encode() not in db.read_bytes()
    STATS["tables_scanned"] = 1

    # in-process logs at DEBUG while a leaky call fails, and the CLI's output
    caplog.set_level(logging.DEBUG)
    from bfr_core.ingest.demo import ensure_demo_store

    s2 = ensure_demo_store(tmp_path / "logs.duckdb", embed=False)
    run_id = evaluate(s2, RunSpec("demo", ("mem0",)))
    llm = make_llm(LLMConfig(provider="anthropic", model="wire2", base_url=server.anthropic_url, timeout_s=5,
                             max_retries=1), s2, run_id=run_id, env={"ANTHROPIC_API_KEY": KEY},
                   secrets_path="/nonexistent", sleep=lambda s: None)
    server.fail_next("echo", "echo")
    score_answers(s2, run_id, llm, answer=True)
    assert not leaks(caplog.text) and not leaks(repr(llm))
    s2.close()
    env = dict(os.environ, ANTHROPIC_API_KEY=KEY, OPENAI_API_KEY=OKEY, PYTHONPATH=str(ROOT))
    server.fail_next("echo", "500", "echo")
    out = subprocess.run([sys.executable, "-m", "bfr_core.cli", "eval", "--db", str(tmp_path / "logs.duckdb"),
                          "--dataset", "demo", "--arms", "mem0,amem", "--provider", "anthropic", "--model", "wire3",
                          "--base-url", server.anthropic_url, "--answer", "--judge"],
                         cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-1500:]
    assert not leaks(out.stdout + out.stderr)


def app_texts(at) -> str:
    parts = []
    for kind in ("markdown", "caption", "title", "header", "subheader", "success", "info", "warning", "error",
                 "text", "metric", "code", "json", "exception", "expander", "toast", "latex"):
        for el in at.get(kind):
            parts += [str(getattr(el, "value", "")), str(getattr(el, "label", "")), str(getattr(el, "body", ""))]
    for kind in ("selectbox", "multiselect", "radio", "text_input", "text_area"):
        for el in at.get(kind):
            parts += [str(getattr(el, "label", "")), repr(getattr(el, "options", "")), str(getattr(el, "value", ""))]
    for el in at.get("dataframe"):
        parts.append(el.value.to_csv() if hasattr(el.value, "to_csv") else str(el.value))
    return "\n".join(parts)


@pytest.fixture
def app(db, monkeypatch, tmp_path):
    import shutil

    import streamlit
    from apptest_frame import app_as_frame
    from streamlit.testing.v1 import AppTest

    app_as_frame(monkeypatch)
    copy = tmp_path / "app.duckdb"
    shutil.copy(db, copy)
    monkeypatch.setenv("BFR_STORE", str(copy))
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    monkeypatch.setenv("OPENAI_API_KEY", OKEY)
    yield lambda: AppTest.from_file(str(ROOT / "app.py"), default_timeout=60), copy
    streamlit.cache_resource.clear()
    streamlit.cache_data.clear()


def test_key_never_rendered_on_any_page(app):
    make, _ = app
    at = make().run()
    seen = 0
    for page in PAGES:
        at.switch_page(page).run()
        assert not at.exception, (page, [e.value for e in at.exception])
        body = app_texts(at)
        assert body.strip(), page
        assert not leaks(body), page
        seen += 1
    at.switch_page("pages/trace.py").run()
    at.button(key="trace_all").click().run()
    assert not at.exception and not leaks(app_texts(at))
    STATS["pages_checked"] = seen + 1


def test_sql_values_with_quotes_are_text(db):
    store = Store(db)
    before = table_counts(store)
    assert DS in [d["dataset_id"] for d in store.datasets()]
    q = store.question(DS, "q'1; DELETE FROM results; --")
    assert q.scope_id == "sc'; --" and q.qtype == "single'hop" and set(q.gold) == {"t'1", "t;2"}
    turns = store.scope_turns(DS, "sc'; --")
    assert [t.turn_id for t in turns] == ["t'1", "t;2", "t--3"] and turns[0].speaker == 'Ann"; --'
    assert set(store.turns_by_id(DS, ["t'1", EVIL, "t--3"])) == {"t'1", "t--3"}
    assert [t.turn_id for t in store.session_turns(DS, "s'1; --")] == ["t'1", "t;2", "t--3"]
    assert store.counts(DS)["turns"] == 3 and store.questions_by_type(DS) == {"single'hop": 1}
    for bad in (EVIL, "' OR '1'='1", "q1' --", "'; DROP TABLE gold; SELECT '"):
        with pytest.raises(StoreError):
            store.question("demo", bad)
        assert store.scopes(bad) == [] and store.questions(bad) == [] and store.counts(bad)["turns"] == 0
        assert store.dataset(bad) is None
    ann = "o'brien; DROP TABLE labels; --"
    assert labels.annotators(store) == [ann]
    assert all(h["note"].startswith("note x'; DROP") for i in labels.items(store)[:5]
               for h in labels.history(store, i, ann))
    assert labels.queue(store, EVIL) == labels.items(store)
    from bfr_core.evaluation.evaluate import load_trace
    from bfr_core.evaluation.summary import summarize
    from bfr_core.runs import list_runs

    run = next(r for r in list_runs(store) if r["dataset_id"] == DS)
    summary = summarize(store, run["run_id"])
    assert summary["n_questions"] == 1
    assert load_trace(store, run["run_id"], "q'1; DELETE FROM results; --", "mem0") is not None
    assert table_counts(store) == before
    store.close()


def test_failures_filter_with_sql_metacharacters(app):
    make, path = app
    at = make().run()
    at.switch_page("pages/failures.py").run()
    evil_run = next(o for o in at.selectbox(key="fail_run").options if "evil" in o)
    at.selectbox(key="fail_run").select(evil_run).run()
    assert not at.exception, [e.value for e in at.exception]
    at.selectbox(key="fail_col").select("question").run()
    at.selectbox(key="fail_op").select("contains").run()
    for value, n in ((EVIL, 0), ("'; DROP TABLE results; --", 0), ("script say", 1), ("' OR 1=1 --", 0)):
        at.text_input(key="fail_val").input(value).run()
        assert not at.exception, (value, [e.value for e in at.exception])
        assert any(c.value.startswith(f"{n} of 1 questions") for c in at.caption), (value, [c.value for c in at.caption])
    at.selectbox(key="fail_col").select("question_id").run()
    at.selectbox(key="fail_op").select("=").run()
    at.text_input(key="fail_val").input("q'1; DELETE FROM results; --").run()
    assert any(c.value.startswith("1 of 1 questions") for c in at.caption)
    store = Store(path)  # the app holds the file in this process: same configuration
    assert store.counts(DS)["turns"] == 3 and table_counts(store)["results"] > 0
    store.close()


def test_html_and_markdown_in_turns_render_as_text(app):
    make, _ = app
    at = make().run()
    at.switch_page("pages/trace.py").run()
    at.selectbox(key="trace_dataset").select(DS).run()
    at.selectbox(key="trace_arm").select("mem0").run()
    at.button(key="trace_all").click().run()
    assert not at.exception, [e.value for e in at.exception]
    md = "\n".join(m.value for m in at.markdown) + "\n".join(c.value for c in at.caption)
    assert "alert" in md and "bold" in md and "javascript" in md  # the hostile turns are on the page
    for raw in (SCRIPT, IMG, "**bold**", "[link](javascript:x)"):
        assert raw not in md, raw
    starts = ("script said", "In bold")
    hostile = [line[line.index(m):] for line in md.splitlines() for m in starts if m in line]
    assert len(hostile) >= 2
    for part in hostile:  # every Markdown / HTML metacharacter in the hostile text is backslash-escaped
        assert not re.search(r"(?<!\\)[<>*\[\]()]", part), part
    assert "\\<script\\>" in md or "&lt;script" in md
    assert "\\*\\*bold\\*\\*" in md
    STATS["hostile_texts_rendered"] = 3


@pytest.fixture(scope="module", autouse=True)
def _stats():
    yield
    if out := os.environ.get("BFR_RELIABILITY_STATS"):
        Path(out).write_text(json.dumps({"injection": STATS}), encoding="utf-8")
