"""The real app in headless Chromium with ``bfr eval`` started while it is open (issue 18).

The server runs on a temporary demo store with a finished run (the fixtures and helpers of
``scripts/browser_check.py``, as ``test_browser.py`` uses them). With an Annotate item on screen and
the app idle, a real ``bfr eval`` subprocess starts on the same store: it must get the lock and
finish; meanwhile a label saved in Annotate is queued and Failures renders from a snapshot, with no
exception; after the eval the label is in the store once and Home shows the store itself again.
Run alone with ``pytest -m browser``.
"""

import importlib.util
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not Path("/usr/bin/chromium").exists(), reason="needs /usr/bin/chromium"),
    pytest.mark.skipif(importlib.util.find_spec("playwright") is None, reason="needs playwright"),
]


def _held(db: Path) -> bool:
    from bfr_core.duck import StoreLocked, connect

    try:
        connect(str(db), wait_s=0).close()
    except StoreLocked:
        return True
    return False


def test_eval_started_while_the_app_is_open(bc, tmp_path):
    if not bc.pipeline_available():
        pytest.skip("bfr eval needs the real arms")
    db = tmp_path / "store.duckdb"
    assert bc.build_store(db)["run"]
    log = tmp_path / "streamlit.log"
    with bc.serve(db, log=log) as (url, _), bc.browser() as page:
        page.goto(url + "/annotate")  # an annotator at work: the item is on screen, the app idle
        page.get_by_label("Annotator name").wait_for(timeout=60_000)
        page.get_by_label("Annotator name").fill("browser-eval")
        page.get_by_label("Annotator name").press("Enter")
        bc.wait_idle(page)
        page.get_by_role("button", name="Insufficient").wait_for(timeout=60_000)
        assert not _held(db)  # the app is open and idle: it holds no lock
        cmd = [sys.executable, "-m", "bfr_core.cli", "eval", "--db", str(db), "--dataset", "demo",
               "--arms", "mem0,fca-ms", "--answer", "--judge", "--suff", "--quiet", "--json",
               str(tmp_path / "out.json")]
        proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                env={**os.environ, "PYTHONPATH": str(ROOT), "BFR_LOCK_WAIT_S": "30"})
        deadline = time.monotonic() + 120
        while proc.poll() is None and not _held(db) and time.monotonic() < deadline:
            time.sleep(0.1)
        held = proc.poll() is None
        page.get_by_role("button", name="Insufficient").click()  # saved while the eval holds the store
        page.get_by_text("Saved", exact=False).first.wait_for(timeout=60_000)
        bc.wait_idle(page)
        assert bc.exceptions(page) == [], log.read_text()[-3000:]
        saved = page.locator('[data-testid="stMain"]').inner_text()
        running = proc.poll() is None
        if held and running:
            assert "queued" in saved, saved[:2000]
        page.goto(url + "/failures")
        page.get_by_text("Failures", exact=False).first.wait_for(timeout=60_000)
        bc.wait_idle(page)
        assert bc.exceptions(page) == [], log.read_text()[-3000:]
        body = page.locator('[data-testid="stMain"]').inner_text()
        if held and proc.poll() is None:
            assert "read-only snapshot" in body, body[:2000]
        print(f"eval held the store: {held}; running after the save: {running}; queued: {'queued' in saved}")
        _, err = proc.communicate(timeout=600)
        assert proc.returncode == 0, err[-3000:]
        page.goto(url + "/")
        page.get_by_text("Open store", exact=False).first.wait_for(timeout=60_000)
        bc.wait_idle(page)
        assert bc.exceptions(page) == []
        assert "read-only snapshot" not in page.locator('[data-testid="stMain"]').inner_text()
    from bfr_core.store import Store

    s = Store(db, read_only=True)
    got = s.cursor().execute("SELECT label FROM labels WHERE annotator = 'browser-eval'").fetchall()
    s.close()
    assert got == [("insufficient",)]  # saved during the eval, written once


def test_evaluate_page_closes_the_loop(bc, tmp_path):
    """From the Evaluate page alone: answers, answer judge and Suff@Set ticked, Run, the start-up phase
    said in words, then the run id and the per-arm figures, and links on to Failures and Trace
    (offline rules: no model, nothing leaves the machine)."""
    if not bc.pipeline_available():
        pytest.skip("bfr eval needs the real arms")
    from bfr_core.ingest.demo import ensure_demo_store

    db = tmp_path / "store.duckdb"
    ensure_demo_store(db, embed=False).close()
    log, shots = tmp_path / "streamlit.log", tmp_path / "shots"
    with bc.serve(db, log=log) as (url, _), bc.browser() as page:
        asked = bc.record_requests(page)
        page.goto(url + "/evaluate")
        page.get_by_text("The same run from a shell", exact=False).first.wait_for(timeout=120_000)
        bc.wait_idle(page)
        for box in ("Answers", "Answer judge", "Suff@Set"):
            page.get_by_text(box, exact=True).first.click()
            bc.wait_idle(page)
        shown = page.locator('[data-testid="stCode"]').first.inner_text()
        assert "--judge --suff" in shown, shown
        page.get_by_role("button", name="Run").click()
        page.get_by_text("Running", exact=False).first.wait_for(timeout=60_000)
        assert "Starting: a new Python process" in bc.main_text(page) or "Retrieving" in bc.main_text(page)
        page.get_by_text("Finished: run", exact=False).first.wait_for(timeout=900_000)
        bc.wait_idle(page)
        bc.shot(page, shots, "evaluate_finished")
        body = bc.main_text(page)
        assert bc.exceptions(page) == [], log.read_text()[-3000:]
        for arm in ("mem0", "bfr-text", "bfr-mv"):
            assert arm in body
        for column in ("Gold Hit", "set size", "F1", "J", "Suff"):
            assert column in body, body[-3000:]
        assert "Open Failures" in body and "Trace a question of it" in body
        assert "█" not in body  # the figures, not the raw progress bar
    assert bc.foreign(asked) == [], bc.foreign(asked)
    from bfr_core.runs import list_runs
    from bfr_core.store import Store

    s = Store(db, read_only=True)
    runs = list_runs(s)
    s.close()
    assert len(runs) == 1 and runs[0]["finished"] and runs[0]["run_id"] in body
