"""Planted API keys, echoed back in every form servers use, never reach the store, the CLI or a page.

The loopback wire server answers 401s that quote the request's key whole, masked as OpenAI does
(``sk-proj-****...Wq7Z``), as a prefix, a suffix, URL-encoded, reversed, base64 and in a Basic
header, and successful replies in which the "model" writes the key (every form again). Checked:
the store file's bytes (and a WAL beside it), every table cast to text, ``bfr eval`` and
``bfr trace`` output (text and JSON), and the Trace page rendered by AppTest, both running a model
live and showing the stored run. A fragment is any of: the first or last 10 characters, 10 from
the middle, the last 4, the reversed key's first 10, the start of the URL-encoded and base64 forms.

Not covered: keys split by whitespace, encoded twice, or in the project's own data (prompts).
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from llm_wire_server import FORMS, WireServer, key_forms

from bfr_core.llm.secrets import Redactor, configured_keys, scrub
from bfr_core.store import Store

ROOT = Path(__file__).resolve().parents[1]
OKEY = "sk-proj-Q9vW2xT7rL4mK8nB3cF6hJ1dS5gA0zYuE7iO2pWq7Z"
AKEY = "sk-ant-api03-Vb8Nc2Xm5Lk9Jh3Gf7Dd1Ss4Aa6Qq0Ww-Ky4P"
ENV = {"OPENAI_API_KEY": OKEY, "ANTHROPIC_API_KEY": AKEY}
STATS: dict[str, int] = {"probes": 0, "key_fragments": 0, "tracebacks": 0}


def fragments(key: str) -> set[str]:
    mid = len(key) // 2
    return {key[:10], key[-10:], key[mid - 5 : mid + 5], key[-4:], key[::-1][:10],
            "".join(f"%{b:02X}" for b in key.encode())[:15], base64.b64encode(key.encode()).decode()[:12],
            base64.b64encode(f"user:{key}".encode()).decode()[:12]}


FRAGMENTS = sorted(fragments(OKEY) | fragments(AKEY))


def found(text: str | bytes) -> list[str]:
    """The planted fragments in ``text`` (counted into the stats)."""
    hay = text.decode("latin-1") if isinstance(text, bytes) else text
    hits = [f for f in FRAGMENTS if f in hay]
    STATS["probes"] += 1
    STATS["key_fragments"] += len(hits)
    return hits


def leaky_reply(body: dict) -> str:
    """A usable reply for every role, whose prose carries the key the request was sent with."""
    forms = " ".join(key_forms(OKEY).values()) + " " + " ".join(key_forms(AKEY).values())
    return json.dumps({"answer": f"the key is {forms}", "label": "CORRECT", "reason": forms,
                       "requirements": [{"id": "r1", "text": f"when {forms}"}], "earlier": "1 May 2023",
                       "later": "8 May 2023"})


def echo_faults() -> list[str]:
    return [f"echo-{f}" for f in FORMS] + ["echo"]


def table_text(path: Path) -> str:
    store = Store(path, read_only=True)
    cur = store.cursor()
    parts = []
    for (name,) in cur.execute("SELECT table_name FROM duckdb_tables() ORDER BY 1").fetchall():
        cols = [r[0] for r in cur.execute("SELECT column_name FROM duckdb_columns() WHERE table_name = ? "
                                          "ORDER BY column_index", [name]).fetchall()]
        body = ", ".join(f'CAST("{c}" AS VARCHAR)' for c in cols)
        parts += ["\t".join(v or "" for v in row) for row in cur.execute(f'SELECT {body} FROM "{name}"').fetchall()]
    store.close()
    return "\n".join(parts)


def query(path: Path, sql: str, params: list | None = None) -> list[tuple]:
    store = Store(path, read_only=True)
    try:
        return store.cursor().execute(sql, params or []).fetchall()
    finally:
        store.close()


def cli(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, **ENV, "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-m", "bfr_core.cli", *args], cwd=ROOT, env=env, capture_output=True,
                         text=True, timeout=600)
    STATS["tracebacks"] += "Traceback" in out.stderr
    return out


# -- the redactor itself ------------------------------------------------------------------------
@pytest.mark.parametrize("form", FORMS)
def test_every_echoed_form_is_scrubbed(form):
    for key in (OKEY, AKEY):
        text = f"401: Incorrect API key provided: {key_forms(key)[form]}. See the docs."
        out = scrub(text, [key])
        assert not found(out), (form, out)
        assert out.startswith("401: Incorrect API key provided: ") and out.endswith("*** See the docs.")


def test_key_shaped_tokens_go_without_configuration_and_prose_stays():
    assert scrub("use sk-proj-abcdefgh12 or sk-ant-api03-zz-yy now") == "use *** or *** now"
    prose = '{"answer": "On 12/12/2024 the task-progress and risk-profile notes, 42 remembered."}'
    assert scrub(prose, [OKEY, AKEY]) == prose


def test_redactor_hides_its_keys():
    r = Redactor([OKEY])
    assert not found(repr(r))
    with pytest.raises(TypeError):
        import pickle

        pickle.dumps(r)


def test_configured_keys_come_from_env_and_secrets_toml(tmp_path):
    secrets = tmp_path / "secrets.toml"
    secrets.write_text('[auth]\nclient_secret = "oidc-secret-0123456789"\nredirect_uri = "http://x"\n'
                       '[openai]\napi_key = "sk-from-toml-abcdefgh"\n', encoding="utf-8")
    keys = configured_keys(env={"GROQ_API_KEY": "gsk_0123456789abcdef", "HOME": "/root"}, secrets_path=secrets)
    assert sorted(keys) == ["gsk_0123456789abcdef", "oidc-secret-0123456789", "sk-from-toml-abcdefgh"]


# -- end to end: store, CLI, pages -------------------------------------------------------------
@pytest.fixture(scope="module")
def server():
    srv = WireServer(reply=leaky_reply).start()
    yield srv
    srv.stop()


@pytest.fixture(scope="module")
def evaluated(tmp_path_factory, server):
    """A demo store evaluated through both providers, with each echo form among the replies."""
    from bfr_core.ingest.demo import ensure_demo_store
    from bfr_core.retrieval.views.entity import ensure_entities

    d = tmp_path_factory.mktemp("secrets")
    db = d / "store.duckdb"
    store = ensure_demo_store(db)  # vectors and names stored: the CLI runs below need no model of their own
    ensure_entities(store, "demo", processes=1)
    store.close()
    runs, outputs = [], []
    for provider, url in (("openai", server.openai_url), ("anthropic", server.anthropic_url)):
        server.fail_next(*echo_faults())
        out = cli("eval", "--db", str(db), "--dataset", "demo", "--arms", "bfr-mv,mem0", "--provider", provider,
                  "--model", "wire", "--base-url", url, "--answer", "--judge", "--quiet", "--max-retries", "0")
        assert out.returncode == 0, out.stderr[-2000:]
        runs.append(json.loads(out.stdout)["run_id"])
        outputs.append(out.stdout + out.stderr)
    return db, runs, outputs


def test_no_fragment_in_store_or_cli_output(evaluated, server):
    db, runs, outputs = evaluated
    sent = json.dumps([s.headers for s in server.seen])
    assert OKEY in sent and AKEY in sent, "both keys were really sent"
    errors = query(db, "SELECT count(*) FROM llm_calls WHERE error LIKE '%Incorrect API key provided: ***%'")[0][0]
    assert errors >= len(FORMS), "the echo faults were recorded, scrubbed"
    for text in outputs:
        assert not found(text)
    assert not found(table_text(db))
    for path in (db, db.with_name(db.name + ".wal")):
        if path.exists():
            assert not found(path.read_bytes()), path
    questions = [r[0] for r in query(db, "SELECT DISTINCT question_id FROM results WHERE run_id = ? AND arm = 'bfr-mv' "
                                     "AND status = 'ok' ORDER BY 1", [runs[0]])]  # (a row whose calls all failed has none)
    assert questions
    for qid in questions[:3]:
        for extra in ((), ("--json",)):
            out = cli("trace", qid, "--db", str(db), "--dataset", "demo", "--run", runs[0], "--arm", "bfr-mv", *extra)
            assert out.returncode == 0, out.stderr[-1500:]
            assert not found(out.stdout + out.stderr)


def _texts(at) -> str:
    parts = []
    for kind in ("markdown", "caption", "title", "header", "subheader", "success", "info", "warning", "error",
                 "text", "metric", "code", "json", "exception", "expander", "toast"):
        for el in at.get(kind):
            parts += [str(getattr(el, "value", "")), str(getattr(el, "label", "")), str(getattr(el, "body", ""))]
    parts += [str(el.value) for el in (*at.title, *at.header, *at.subheader)]
    for el in at.get("dataframe"):
        parts.append(el.value.to_csv() if hasattr(el.value, "to_csv") else str(el.value))
    return "\n".join(parts)


@pytest.fixture
def app(evaluated, server, monkeypatch, tmp_path):
    import shutil

    import streamlit
    from apptest_frame import app_as_frame
    from streamlit.testing.v1 import AppTest

    app_as_frame(monkeypatch)
    copy = tmp_path / "app.duckdb"
    shutil.copy(evaluated[0], copy)
    config = tmp_path / "bfr.toml"
    config.write_text(f'[llm]\nprovider = "openai"\nmodel = "wire"\nbase_url = "{server.openai_url}"\n'
                      "max_retries = 0\ntimeout_s = 10\n", encoding="utf-8")
    monkeypatch.setenv("BFR_STORE", str(copy))
    monkeypatch.setenv("BFR_CONFIG", str(config))
    for name, value in ENV.items():
        monkeypatch.setenv(name, value)
    yield lambda: AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    streamlit.cache_resource.clear()
    streamlit.cache_data.clear()


def test_trace_page_shows_no_fragment(app, evaluated, server):
    at = app().run()
    at.switch_page("pages/trace.py").run()
    at.selectbox(key="trace_provider").select("openai:wire").run()
    for faults in (echo_faults(), []):  # every call fails with an echo form; then every reply quotes the key
        server.fail_next(*faults)
        at.button(key="trace_all").click().run()
        assert not at.exception, [e.value for e in at.exception]
        body = _texts(at)
        shown = body.replace("\\", "")  # Markdown sources: step titles are escaped (ui.markup.text)
        assert "requirement(s)" in shown and "provider call failed" in shown if faults else "Final evidence set" in shown
        assert not found(body) and not found(shown)  # escaping must not hide a fragment from the search
        at.selectbox(key="trace_arm").select("mem0" if at.selectbox(key="trace_arm").value == "bfr-mv"
                                             else "bfr-mv").run()
    run_id = evaluated[1][0]
    qid = query(evaluated[0], "SELECT question_id FROM results WHERE run_id = ? AND arm = 'bfr-mv' ORDER BY 1 "
                "LIMIT 1", [run_id])[0][0]
    at.query_params.update(dataset="demo", question=qid, arm="bfr-mv", run=run_id)
    at.switch_page("pages/trace.py").run()
    at.button(key="trace_all").click().run()
    assert not at.exception and not found(_texts(at))


@pytest.fixture(scope="module", autouse=True)
def _stats():
    yield
    if out := os.environ.get("BFR_RELIABILITY_STATS"):
        Path(out).write_text(json.dumps({"secrets": STATS}), encoding="utf-8")
