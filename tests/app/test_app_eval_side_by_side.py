"""``bfr eval`` and the app on one store at the same time (issue 18).

The app holds the store only while a page runs (``Store.held``), so a ``bfr eval`` started while
the app is open gets the write lock; while the eval holds it, every page reads a snapshot and a label
saved in Annotate is queued in the side file, then written by ``bfr eval`` at its end or by the app's
first request after the lock frees. Nothing is lost and nothing is written twice.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from conftest import app_test

from bfr_core.duck import StoreLocked, connect
from bfr_core.evaluation import labels as L
from bfr_core.store import Store

ROOT = Path(__file__).resolve().parents[2]
HOLD = ("import sys; from bfr_core.store import Store; s = Store(sys.argv[1]); "
        "print('ready', flush=True); sys.stdin.read(); s.close()")


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT), "BFR_LOCK_WAIT_S": "30"}


def start_eval(db: Path, out: Path) -> subprocess.Popen:
    """The real command, as a user types it in a second terminal."""
    cmd = [sys.executable, "-m", "bfr_core.cli", "eval", "--db", str(db), "--dataset", "demo",
           "--arms", "mem0,fca-ms", "--answer", "--judge", "--suff", "--quiet", "--json", str(out)]
    return subprocess.Popen(cmd, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def held_by_other(db: Path) -> bool:
    try:
        connect(str(db), wait_s=0).close()
    except StoreLocked:
        return True
    return False


def wait_until_held(db: Path, proc: subprocess.Popen, timeout: float = 120) -> bool:
    """True once ``proc`` holds the store; False if it ended first."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and proc.poll() is None:
        if held_by_other(db):
            return True
        time.sleep(0.2)
    return False


def _annotate(at, name: str):
    at.switch_page("pages/annotate.py").run()
    at.text_input(key="annot_name").input(name).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _labels(db: Path, annotator: str) -> list[tuple[str, str]]:
    s = Store(db, read_only=True)
    try:
        return [(r[0], r[1]) for r in s.cursor().execute(
            "SELECT item_id, label FROM labels WHERE annotator = ? ORDER BY label_id", [annotator]).fetchall()]
    finally:
        s.close()


def test_bfr_eval_runs_while_the_app_is_open_and_pages_render_during_it(app_db, tmp_path):
    at = app_test().run()  # the app is open on this store ...
    assert not at.exception and not held_by_other(app_db)  # ... and, idle, holds no lock
    proc = start_eval(app_db, tmp_path / "out.json")
    held = wait_until_held(app_db, proc)
    for page in ("pages/home.py", "pages/failures.py", "pages/annotate.py", "pages/data.py"):
        at.switch_page(page).run()  # browsing while the eval runs: a snapshot, no traceback
        assert not at.exception, (page, [e.value for e in at.exception])
        assert not at.error, (page, [e.value for e in at.error])
    warned = [w.value for w in at.warning]
    still_running = proc.poll() is None
    _, err = proc.communicate(timeout=600)
    assert proc.returncode == 0, err[-2000:]
    summary = json.loads((tmp_path / "out.json").read_text())
    assert set(summary["arms"]) == {"mem0", "fca-ms"} and summary["arms"]["mem0"]["n"] > 0
    if held and still_running:  # the eval held the store through the last page: it said so
        assert any("read-only snapshot" in w for w in warned), warned
    print(f"eval held the store: {held}; still running after browsing: {still_running}")
    at.switch_page("pages/home.py").run()  # after the eval: the store itself again, no warning
    assert not at.exception and not any("read-only snapshot" in w.value for w in at.warning)


def test_a_label_saved_while_another_process_holds_the_store_is_queued_then_written(app_db):
    at = _annotate(app_test().run(), "alice")
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(app_db)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True, env=_env())
    assert holder.stdout.readline().strip() == "ready"
    try:
        at.run()  # the next request finds the store held: a snapshot, labels queued
        assert any("read-only snapshot" in w.value and "queued" in w.value for w in at.warning)
        assert not at.button(key="annot_sufficient").disabled
        at.button(key="annot_sufficient").click().run()
        assert not at.exception, [e.value for e in at.exception]
        assert any("Saved **sufficient** (queued" in s.value for s in at.success)
        queued = L.pending(app_db)
        assert [(r["annotator"], r["label"]) for r in queued] == [("alice", "sufficient")]
    finally:
        holder.stdin.close()
        assert holder.wait(timeout=60) == 0
    at.run()  # the first request after the lock frees writes the queue, once
    assert not at.exception
    assert _labels(app_db, "alice") == [(queued[0]["item_id"], "sufficient")]
    assert not L.pending_path(app_db).exists()
    at.run()
    assert _labels(app_db, "alice") == [(queued[0]["item_id"], "sufficient")]


def test_a_label_saved_during_a_bfr_eval_survives(app_db, tmp_path):
    at = _annotate(app_test().run(), "bob")
    proc = start_eval(app_db, tmp_path / "out.json")
    held = wait_until_held(app_db, proc)
    at.run()
    at.button(key="annot_insufficient").click().run()
    assert not at.exception, [e.value for e in at.exception]
    still_running = proc.poll() is None
    queued = any("(queued" in s.value for s in at.success)
    if held and still_running:  # the eval held the store throughout the click: the label was queued
        assert queued, [s.value for s in at.success]
    print(f"eval held the store: {held}; still running after the click: {still_running}; queued: {queued}")
    _, err = proc.communicate(timeout=600)
    assert proc.returncode == 0, err[-2000:]
    at.run()
    got = _labels(app_db, "bob")
    assert [label for _, label in got] == ["insufficient"], got  # written once, by bfr eval or the app
    assert not L.pending_path(app_db).exists()
