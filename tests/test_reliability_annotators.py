"""Concurrent annotators, and a store another process holds.

* 8 writer threads save 1,000 labels at once through :func:`bfr_core.evaluation.labels.save_label` (what the
  Annotate page calls), on one store and process (a cursor per call): every label is stored exactly
  once, label ids are unique, each annotator's history per item is exactly the order it saved,
  the current label is its last, and the export holds every version.
* A store file locked by another process: :class:`Store` raises a :class:`StoreError` that names the
  file and the lock holder (no traceback); the app shows a read-only snapshot instead of crashing. When the other process only reads (read-only), this process can still open a read-only
  view and read the labels.

While another process holds the write lock, DuckDB refuses even read-only opens, so the app opens a
read-only snapshot copy (as of the holder's last checkpoint), says so in a warning, and queues labels
saved meanwhile (tested in tests/app/test_app_eval_side_by_side.py).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from bfr_core import runs
from bfr_core.duck import StoreError
from bfr_core.evaluation import labels
from bfr_core.store import Store

ROOT = Path(__file__).resolve().parents[1]
THREADS, TOTAL = 8, 1000
STATS: dict[str, int] = {}


def demo_with_items(path: Path) -> Store:
    """The demo store plus a finished run whose results give a few dozen distinct label items."""
    from bfr_core.ingest.demo import ensure_demo_store

    store = ensure_demo_store(path, embed=False)
    runs.ensure_schema(store)
    qs = store.questions("demo", scoreable_only=True)
    arms = ("a1", "a2", "a3", "a4", "a5")
    cur = store.cursor()
    cur.execute("INSERT INTO runs (run_id, dataset_id, arms, budget, k, provider, n_questions, options, finished) "
                "VALUES ('rel-run', 'demo', ?, '', 10, 'offline rules', ?, '{}', current_timestamp)",
                [list(arms), len(qs)])
    rows = []
    for q in qs:
        turns = [t.turn_id for t in store.scope_turns("demo", q.scope_id)]
        for j, arm in enumerate(arms):
            ev = turns[j * 3: j * 3 + 2 + j]
            row = {c: None for c in runs.RESULT_COLUMNS}
            row.update(run_id="rel-run", question_id=q.question_id, arm=arm, budget="", qtype=q.qtype,
                       evidence=ev, set_size=len(ev), calls=1, gold_n=len(q.gold), status="ok")
            rows.append(tuple(row[c] for c in runs.RESULT_COLUMNS))
    runs.write_batch(store, "rel-run", rows, [])
    labels.sync_queue(store)
    return store


def test_eight_annotators_save_1000_labels_at_once(tmp_path):
    store = demo_with_items(tmp_path / "labels.duckdb")
    items = labels.items(store)
    assert len(items) >= 20
    per = TOTAL // THREADS
    plan = {f"ann{i}": [(items[(i * 7 + k) % len(items)], labels.LABELS[(i + k) % 3], f"ann{i}#{k} ' ; -- \"x\"")
                        for k in range(per)] for i in range(THREADS)}
    start = threading.Barrier(THREADS)
    errors: list[BaseException] = []
    ids: dict[str, list[int]] = {}

    def work(annotator: str) -> None:
        try:
            start.wait()
            ids[annotator] = [labels.save_label(store, item, annotator, lab, note) for item, lab, note in plan[annotator]]
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(a,)) for a in plan]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[:3]
    all_ids = [i for v in ids.values() for i in v]
    assert len(all_ids) == TOTAL and len(set(all_ids)) == TOTAL
    stored = store.cursor().execute("SELECT label_id, annotator, item_id, label, note FROM labels").fetchall()
    assert len(stored) == TOTAL
    assert sorted(r[0] for r in stored) == sorted(all_ids)
    expected_rows = sorted((a, it, lab, note) for a, rows in plan.items() for it, lab, note in rows)
    assert sorted(r[1:] for r in stored) == expected_rows  # each label exactly once, none altered
    for annotator, rows in plan.items():
        for item in {it for it, _, _ in rows}:
            mine = [(lab, note) for it, lab, note in rows if it == item]
            hist = labels.history(store, item, annotator)
            assert [(h["label"], h["note"]) for h in hist] == mine  # history in save order
            cur = labels.current_label(store, item, annotator)
            assert cur is not None and (cur["label"], cur["note"]) == mine[-1] and cur["versions"] == len(mine)
        done, total = labels.progress(store, annotator)
        assert done == len({it for it, _, _ in rows}) and total == len(items)
    exported = labels.export_rows(store)
    assert len(exported) == TOTAL and sum(r["is_current"] for r in exported) == len(
        {(a, it) for a, rows in plan.items() for it, _, _ in rows})
    lines = labels.to_jsonl(exported).splitlines()
    assert len(lines) == TOTAL and {json.loads(x)["label_id"] for x in lines} == set(all_ids)
    STATS.update(threads=THREADS, labels_saved=TOTAL, labels_stored=len(stored), labels_lost=TOTAL - len(stored))
    store.close()


# -- a store another process holds ----------------------------------------------------------------
HOLD = "import duckdb, sys; c = duckdb.connect(sys.argv[1], read_only=sys.argv[2] == 'ro'); " \
       "print('ready', flush=True); sys.stdin.read()"


class Holder:
    """A subprocess holding a DuckDB connection to ``path`` until closed."""

    def __init__(self, path: Path, mode: str) -> None:
        self.proc = subprocess.Popen([sys.executable, "-c", HOLD, str(path), mode], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True)
        assert self.proc.stdout is not None and self.proc.stdout.readline().strip() == "ready"

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=30)


@pytest.fixture
def labelled_db(tmp_path) -> Path:
    store = demo_with_items(tmp_path / "held.duckdb")
    labels.save_label(store, labels.items(store)[0], "ann", "sufficient", "first")
    store.con.execute("CHECKPOINT")
    store.close()
    return tmp_path / "held.duckdb"


def test_store_locked_by_writer_gives_clear_error(labelled_db):
    holder = Holder(labelled_db, "rw")
    try:
        for read_only in (False, True):
            with pytest.raises(StoreError) as err:
                Store(labelled_db, read_only=read_only)
            msg = str(err.value)
            assert str(labelled_db) in msg and "lock" in msg.lower() and "Traceback" not in msg
    finally:
        holder.close()
    # once the other process lets go, the store opens and nothing was lost
    store = Store(labelled_db)
    assert [h["note"] for h in labels.history(store, labels.items(store)[0], "ann")] == ["first"]
    store.close()


def test_store_held_read_only_elsewhere_gives_read_only_view(labelled_db):
    holder = Holder(labelled_db, "ro")
    try:
        with pytest.raises(StoreError):
            Store(labelled_db)  # a writer must wait for the readers
        view = Store(labelled_db, read_only=True)
        assert view.read_only and [d["dataset_id"] for d in view.datasets()] == ["demo"]
        assert labels.history(view, labels.items(view)[0], "ann")[0]["note"] == "first"
    finally:
        holder.close()


def test_app_shows_read_only_snapshot_for_locked_store(labelled_db, monkeypatch):
    import streamlit
    from streamlit.runtime import pages_manager as pm
    from streamlit.testing.v1 import AppTest

    original = pm.PagesManager.__init__

    def init(self, *args, **kwargs):  # run app.py as the st.navigation frame (see tests/app/conftest.py)
        original(self, *args, **kwargs)
        pm.PagesManager.uses_pages_directory = False

    monkeypatch.setattr(pm.PagesManager, "__init__", init)
    monkeypatch.setenv("BFR_STORE", str(labelled_db))
    holder = Holder(labelled_db, "rw")
    try:
        at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=30).run()
        assert not at.exception
        # no crash, no error: a read-only snapshot of the held store, said plainly
        assert not at.error, [e.value for e in at.error]
        warnings = [w.value for w in at.warning]
        assert any(str(labelled_db) in w and "read-only snapshot" in w for w in warnings), warnings
        at.switch_page("pages/annotate.py").run()
        assert not at.exception
    finally:
        holder.close()
        streamlit.cache_resource.clear()
        streamlit.cache_data.clear()


@pytest.fixture(scope="module", autouse=True)
def _stats():
    yield
    if out := os.environ.get("BFR_RELIABILITY_STATS"):
        Path(out).write_text(json.dumps({"annotators": STATS}), encoding="utf-8")
