"""Every page on every store state: no exception, and each empty state names the next step with
the exact command for this store.

States: an empty store; a fresh clone's demo store (datasets, no run); the demo store with a run
but no Suff judgments; a store another process holds (read-only snapshot); a store written by
the previous release (no ``llm_ms`` column, no label or embedding tables); a mistyped path.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import add_fake_run, app_test, fake_run, texts

from bfr_core import pipeline
from bfr_core.store import Store

PAGES = ("home", "data", "trace", "demo", "failures", "annotate")


@pytest.fixture(scope="module")
def demo_no_runs(tmp_path_factory) -> Path:
    from bfr_core.ingest.demo import ensure_demo_store

    path = tmp_path_factory.mktemp("states") / "demo.duckdb"
    s = ensure_demo_store(path, embed=False)
    s.con.execute("CHECKPOINT")
    s.close()
    return path


@pytest.fixture()
def open_as(tmp_path, monkeypatch):
    """Point the app at a store file (a private copy) with the pipeline stand-in; yields a setter."""
    import streamlit as st

    monkeypatch.setattr(pipeline, "run", fake_run)

    def use(src: Path | None, name: str = "store.duckdb") -> Path:
        path = tmp_path / name
        if src is not None:
            shutil.copy(src, path)
        monkeypatch.setenv("BFR_STORE", str(path))
        return path

    yield use
    st.cache_data.clear()
    st.cache_resource.clear()


def every_page(at) -> dict[str, str]:
    """Each page's rendered text; fails on any exception."""
    seen = {}
    for page in PAGES:
        at.switch_page(f"pages/{page}.py").run()
        assert not at.exception, (page, [e.value for e in at.exception])
        seen[page] = texts(at) + "\n" + "\n".join(c.value for c in at.code)
    return seen


def test_empty_store(open_as, monkeypatch):
    monkeypatch.delenv("BFR_DATA", raising=False)  # the command names the copy beside the project
    path = open_as(None)
    Store(path).close()
    seen = every_page(app_test().run())
    cmd = f"bfr ingest locomo ../shared/data/locomo10.json --db {path}"
    for page in ("home", "data", "trace", "failures", "annotate"):
        assert cmd in seen[page], page
    assert "bfr ingest longmemeval" in seen["demo"] and str(path) in seen["demo"]
    assert "0.0 MB" not in seen["home"]  # the WAL is counted
    assert "--dataset" not in seen["home"]  # no eval of a demo dataset the store does not hold


def test_demo_store_without_runs(open_as, demo_no_runs):
    path = open_as(demo_no_runs)
    seen = every_page(app_test().run())
    cmd = f"bfr eval --db {path} --dataset demo --arms mem0,bfr-text,bfr-mv --sample 50"
    assert cmd in seen["failures"]
    assert cmd + " --suff" in seen["annotate"]
    assert cmd in seen["demo"]  # the gallery's empty state
    assert "executemany" not in seen["annotate"]


def test_run_without_suff(open_as, demo_no_runs):
    path = open_as(demo_no_runs)
    s = Store(path)
    add_fake_run(s)
    s.cursor().execute("UPDATE results SET suff = NULL, suff_detail = NULL")
    s.close()
    at = app_test().run()
    every_page(at)
    at.switch_page("pages/annotate.py").run()
    at.text_input(key="annot_name").input("alice").run()
    assert not at.exception
    assert "run your `bfr eval` again with `--suff`" in texts(at)
    at.switch_page("pages/failures.py").run()
    assert at.selectbox(key="fail_run").value == "demo-fake0001"
    assert at.selectbox(key="fail_hns").disabled  # "Gold Hit 1 but Suff 0" needs a --suff run


def test_store_held_by_another_process(open_as, template_db):
    path = open_as(template_db)
    holder = subprocess.Popen([sys.executable, "-c", "import duckdb, sys, time; c = duckdb.connect(sys.argv[1]); "
                               "print('held', flush=True); time.sleep(120)", str(path)],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        from ui import resources as R

        with R.open_store(str(path)).session() as s:  # the app's public way in: a read-only view, no crash
            assert s.read_only and s.snapshot_of
        at = app_test().run()
        seen = every_page(at)
        assert "read-only" in seen["data"]
        at.switch_page("pages/annotate.py").run()
        at.text_input(key="annot_name").input("alice").run()
        assert not at.exception, [e.value for e in at.exception]
    finally:
        holder.kill()
        holder.wait()


def test_store_of_the_previous_release(open_as, template_db):
    """Tables as the release before this one wrote them: no llm_ms column, no label tables, no embeddings."""
    path = open_as(template_db)
    s = Store(path)
    s.cursor().execute("DROP VIEW IF EXISTS current_labels")
    for t in ("labels", "label_sources", "label_items", "embeddings"):
        s.cursor().execute(f"DROP TABLE IF EXISTS {t}")
    s.cursor().execute("ALTER TABLE results DROP COLUMN IF EXISTS llm_ms")
    s.con.execute("CHECKPOINT")
    s.close()
    every_page(app_test().run())


def test_mistyped_store_path_is_an_error_not_a_new_file(open_as, template_db, tmp_path):
    open_as(template_db)
    at = app_test().run()
    wrong = tmp_path / "no-such-folder" / "typo.duckdb"
    at.sidebar.text_input(key="app_store").input(str(wrong)).run()
    assert not at.exception
    assert at.error and "No store at" in at.error[0].value
    time.sleep(0.1)
    assert not wrong.exists() and not wrong.parent.exists()
    at.sidebar.checkbox(key=f"app_create:{wrong}").check().run()
    assert not at.exception, [e.value for e in at.exception]
    assert wrong.exists()


def test_create_a_new_store_does_not_stay_ticked(open_as, template_db, tmp_path):
    """Once the ticked path's store exists the box is gone; a later typo meets an unticked box and an
    error, not a silently created empty store (issue 29)."""
    open_as(template_db)
    at = app_test().run()
    first, typo = tmp_path / "new.duckdb", tmp_path / "nwe.duckdb"
    at.sidebar.text_input(key="app_store").input(str(first)).run()
    at.sidebar.checkbox(key=f"app_create:{first}").check().run()
    assert not at.exception and first.exists()
    at.run()
    assert not at.sidebar.checkbox  # the store is there: nothing left to tick
    at.sidebar.text_input(key="app_store").input(str(typo)).run()
    assert not at.exception
    assert at.sidebar.checkbox(key=f"app_create:{typo}").value is False
    assert at.error and "No store at" in at.error[0].value
    time.sleep(0.1)
    assert not typo.exists()


def _hold(path: Path, code: str = "") -> subprocess.Popen:
    """Another process holding ``path`` as a terminal ``bfr ingest`` does (``code`` runs first)."""
    holder = subprocess.Popen([sys.executable, "-c", "import sys, time; from bfr_core.store import Store; "
                               f"s = Store(sys.argv[1]); {code or 'pass'}; print('held', flush=True); time.sleep(120)",
                               str(path)], stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline().strip() == "held"
    return holder


def test_store_being_written_by_another_process(open_as, tmp_path):
    """Issue 29: a new store that a terminal `bfr ingest` is still writing gave a raw DuckDB traceback
    (`Table with name runs does not exist!`) on Home, Failures and Demo."""
    path = open_as(None, "new.duckdb")
    holder = _hold(path)
    try:
        seen = every_page(app_test().run())
        for page in PAGES:
            assert "is being written by another process" in seen[page], (page, seen[page][:500])
    finally:
        holder.kill()
        holder.wait()


def test_store_with_data_but_no_run_held_by_another_process(open_as, demo_no_runs):
    """A store an ingest wrote (no run tables yet) while a second ingest holds it: the pages read the
    snapshot's datasets and say there is no run, with no traceback."""
    path = open_as(demo_no_runs)
    s = Store(path)
    for t in ("runs", "results", "traces"):
        s.cursor().execute(f"DROP TABLE IF EXISTS {t}")
    s.con.execute("CHECKPOINT")
    s.close()
    holder = _hold(path)
    try:
        seen = every_page(app_test().run())
        assert "being written" not in seen["home"] and "0 evaluation runs" in seen["home"]
        assert "No evaluation run in this store yet" in seen["failures"]
    finally:
        holder.kill()
        holder.wait()
