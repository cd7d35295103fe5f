"""The store never hangs, labels are never lost, and nothing is left behind.

* No hang: every public ``Store`` method and every ``labels`` function that takes a store (or its
  path) is called first on a fresh ``Store(path, shared=True)``, outside and inside ``held()``, and
  must return or raise within 5 s (a thread, so a hang fails the test instead of the run; the
  stuck stack is printed). The list of entry points is read from the code, so a new one without a
  call here fails. ``Store(p, shared=True)`` then ``labels.sync_queue`` deadlocked before.
* Labels: a small version of ``bench/checks/bench_label_race.py`` (writers queueing while a process
  flushes) loses none; a flush that fails, or is killed, leaves its claim for the next flush, which
  writes every label once.
* Left behind: a failed ``bfr ingest`` into a new path leaves no store file and no folder it made;
  snapshot copies go with ``close()``, with the process's exit, and (the app's start) when their
  process died; a copy that fails leaves no folder.
"""

from __future__ import annotations

import faulthandler
import inspect
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from test_reliability_annotators import demo_with_items

from bfr_core import store as store_module
from bfr_core.errors import BfrError
from bfr_core.evaluation import labels
from bfr_core.records import Bundle, IngestReport, Question, Scope, Session, Turn
from bfr_core.store import Store

ROOT = Path(__file__).resolve().parents[1]
TIMEOUT_S = 5.0


@pytest.fixture(scope="module")
def template(tmp_path_factory) -> Path:
    """The demo store with a finished run and its label items."""
    path = tmp_path_factory.mktemp("tpl") / "tpl.duckdb"
    demo_with_items(path).close()
    return path


def _bundle() -> Bundle:
    turns = (Turn("t1", "s1", 0, "user", "I bought a red tripod."),)
    return Bundle("tiny", "jsonl", "tiny.jsonl", "0" * 64, (Session("s1", None),), turns,
                  (Scope("tiny", "c1", ("s1",)),),
                  (Question("tiny", "q1", "c1", "What did I buy?", "a tripod", "single", ("t1",)),),
                  IngestReport("tiny", "jsonl", "tiny.jsonl", 1, 1, 1, 1, 1))


def _store_calls(path: Path, item: str, tmp: Path) -> dict[str, Callable[[Store], Any]]:
    d = "demo"
    return {
        "snapshot": lambda s: Store.snapshot(path).close(),
        "read_only": lambda s: s.read_only,
        "con": lambda s: s.con.execute("SELECT 1").fetchall(),
        "held": lambda s: s.held().__enter__(),
        "holds_lock": lambda s: s.holds_lock(),
        "cursor": lambda s: s.cursor().execute("SELECT count(*) FROM turns").fetchall(),
        "ensure": lambda s: s.ensure("CREATE TABLE IF NOT EXISTS probe_t (a INTEGER)"),
        "transaction": lambda s: s.transaction().__enter__().execute("SELECT 1").fetchall(),
        "close": lambda s: s.close(),
        "write_bundle": lambda s: s.write_bundle(_bundle()),
        "delete_dataset": lambda s: s.delete_dataset(d),
        "delete_runs": lambda s: s.delete_runs(None),
        "datasets": lambda s: s.datasets(),
        "dataset": lambda s: s.dataset(d),
        "scopes": lambda s: s.scopes(d),
        "scope": lambda s: s.scope(d, s.scopes(d)[0].scope_id),
        "scope_turns": lambda s: s.scope_turns(d, s.scopes(d)[0].scope_id),
        "session_turns": lambda s: s.session_turns(d, s.sessions(d)[0].session_id),
        "turns_by_id": lambda s: s.turns_by_id(d, ["x"]),
        "sessions": lambda s: s.sessions(d),
        "questions": lambda s: s.questions(d),
        "question": lambda s: s.question(d, s.questions(d)[0].question_id),
        "counts": lambda s: s.counts(d),
        "questions_by_type": lambda s: s.questions_by_type(d),
    }


def _label_calls(path: Path, item: str, tmp: Path) -> dict[str, Callable[[Store], Any]]:
    return {
        "ensure_schema": labels.ensure_schema,
        "sync_queue": labels.sync_queue,
        "judged_items": labels.judged_items,
        "queue_stamp": labels.queue_stamp,
        "items": labels.items,
        "item_questions": labels.item_questions,
        "queue": lambda s: labels.queue(s, "ann"),
        "progress": lambda s: labels.progress(s, "ann"),
        "waiting_items": lambda s: labels.waiting_items(s, "ann"),
        "blinded_item": lambda s: labels.blinded_item(s, item),
        "save_label": lambda s: labels.save_label(s, item, "ann", "sufficient"),
        "pending_path": lambda s: labels.pending_path(s.path),
        "queue_label": lambda s: labels.queue_label(s.path, item, "ann", "uncertain"),
        "pending": lambda s: labels.pending(s.path),
        "has_pending": lambda s: labels.has_pending(s.path),
        "set_aside_path": lambda s: labels.set_aside_path(s.path),
        "set_aside": lambda s: labels.set_aside(s.path),
        "flush_pending": labels.flush_pending,
        "current_label": lambda s: labels.current_label(s, item, "ann"),
        "current_labels": lambda s: labels.current_labels(s),
        "history": lambda s: labels.history(s, item),
        "annotators": labels.annotators,
        "export_rows": labels.export_rows,
        "export": lambda s: labels.export(s, tmp / "labels.csv"),
    }


def _public_store_api() -> set[str]:
    return {n for n, _ in inspect.getmembers(Store) if not n.startswith("_") and n != "snapshot_of"}


def _label_api() -> set[str]:
    names = set()
    for name, fn in inspect.getmembers(labels, inspect.isfunction):
        params = list(inspect.signature(fn).parameters)
        if fn.__module__ == labels.__name__ and not name.startswith("_") and params[:1] in (["store"], ["store_path"]):
            names.add(name)
    return names


def _within(seconds: float, call: Callable[[], Any]) -> None:
    """Run ``call`` in a thread; fail (printing every stack) when it has not ended in ``seconds``."""
    failure: list[BaseException] = []

    def target() -> None:
        try:
            call()
        except Exception as exc:  # noqa: BLE001  (judged below, in the test's thread)
            failure.append(exc)

    worker = threading.Thread(target=target, daemon=True)
    worker.start()
    worker.join(seconds)
    if worker.is_alive():
        faulthandler.dump_traceback(all_threads=True)
        pytest.fail(f"no answer within {seconds} s (stacks above)")
    assert not failure or isinstance(failure[0], BfrError), failure  # a clear refusal is an answer too


def test_every_entry_point_is_driven():
    assert set(_store_calls(Path("x"), "", Path("x"))) == _public_store_api()
    assert set(_label_calls(Path("x"), "", Path("x"))) == _label_api()


@pytest.mark.parametrize("in_window", [False, True], ids=["outside held()", "inside held()"])
@pytest.mark.parametrize(("api", "name"), [("store", n) for n in sorted(_public_store_api())]
                         + [("labels", n) for n in sorted(_label_api())])
def test_no_entry_point_hangs_on_a_fresh_shared_store(template, tmp_path, api, name, in_window):
    path = tmp_path / "s.duckdb"
    shutil.copyfile(template, path)
    ro = Store(template, read_only=True)
    item = ro.cursor().execute("SELECT min(item_id) FROM label_items").fetchone()[0]
    ro.close()
    calls = (_store_calls if api == "store" else _label_calls)(path, item, tmp_path)
    s = Store(path, shared=True)

    def first_call() -> None:
        if in_window:
            with s.held():
                calls[name](s)
        else:
            calls[name](s)

    _within(TIMEOUT_S, first_call)
    _within(TIMEOUT_S, s.close)


def test_the_reported_deadlock(tmp_path):
    s = Store(tmp_path / "new.duckdb", shared=True)
    _within(TIMEOUT_S, lambda: labels.sync_queue(s))
    assert labels.sync_queue(s) == 0
    s.close()


def test_the_app_on_a_fresh_store_home_then_annotate(template, tmp_path, monkeypatch):
    import streamlit as st
    from streamlit.testing.v1 import AppTest

    path = tmp_path / "s.duckdb"
    shutil.copyfile(template, path)
    monkeypatch.setenv("BFR_STORE", str(path))
    monkeypatch.delenv("BFR_TEAM", raising=False)
    try:
        at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60).run()  # raises when a run hangs
        at.switch_page("pages/annotate.py").run()
        at.text_input(key="annot_name").input("ann").run()
        assert not at.exception, [e.value for e in at.exception]
        assert at.button(key="annot_sufficient")
    finally:
        st.cache_data.clear()
        st.cache_resource.clear()


# -- labels ---------------------------------------------------------------------------------------
def test_queueing_while_another_process_flushes_loses_no_label(tmp_path):
    out = tmp_path / "race.json"
    done = subprocess.run([sys.executable, "-m", "bench.checks.bench_label_race", "--runs", "1",
                           "--writers", "3", "--labels", "150", "--out", str(out)],
                          capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    run = json.loads(out.read_text(encoding="utf-8"))["runs"][0]
    assert (run["lost"], run["duplicated"], run["stored"]) == (0, 0, 450)


def test_a_failed_flush_leaves_its_claim_for_the_next(tmp_path, monkeypatch):
    db = tmp_path / "s.duckdb"
    s = Store(db)
    labels.ensure_schema(s)
    for n in range(3):
        labels.queue_label(db, "i1", "ann", "sufficient", f"n{n}")

    def broken(*_a, **_k):
        raise RuntimeError("disk full")

    with monkeypatch.context() as m:
        m.setattr(s, "transaction", broken)
        with pytest.raises(RuntimeError):
            labels.flush_pending(s)
    assert [r["note"] for r in labels.pending(db)] == ["n0", "n1", "n2"]  # claimed, still waiting
    assert labels.has_pending(db) and not labels.pending_path(db).exists()
    labels.queue_label(db, "i1", "ann", "sufficient", "n3")
    assert labels.flush_pending(s) == 4
    assert [r[0] for r in s.cursor().execute("SELECT note FROM labels ORDER BY label_id").fetchall()] == \
        ["n0", "n1", "n2", "n3"]
    assert labels.pending(db) == [] and not list(tmp_path.glob("*pending-labels*"))
    s.close()


def test_a_flush_killed_after_its_commit_writes_nothing_twice(tmp_path):
    db = tmp_path / "s.duckdb"
    labels.queue_label(db, "i1", "ann", "sufficient", "once")
    code = ("import os, sys; sys.path.insert(0, sys.argv[2]); from bfr_core.store import Store; "
            "from bfr_core.evaluation import labels; s = Store(sys.argv[1]); labels.ensure_schema(s); "
            "os.unlink = lambda *a, **k: os._exit(9); from pathlib import Path; Path.unlink = lambda *a, **k: os._exit(9); "
            "labels.flush_pending(s)")
    done = subprocess.run([sys.executable, "-c", code, str(db), str(ROOT)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 9, done.stderr  # died between its commit and removing the claim
    assert [r["note"] for r in labels.pending(db)] == ["once"]
    s = Store(db)
    assert labels.flush_pending(s) == 0
    assert s.cursor().execute("SELECT count(*) FROM labels").fetchone()[0] == 1 and labels.pending(db) == []
    s.close()


# -- nothing left behind --------------------------------------------------------------------------
def test_a_failed_ingest_into_a_new_path_leaves_nothing(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"not": "a session"}\n', encoding="utf-8")
    db = tmp_path / "new" / "deeper" / "s.duckdb"
    done = subprocess.run([sys.executable, "-m", "bfr_core.cli", "ingest", "jsonl", str(bad), "--db", str(db),
                           "--no-embed", "--quiet"], capture_output=True, text=True, timeout=300,
                          cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.jsonl"]


def test_a_failed_ingest_into_an_existing_store_keeps_it(tmp_path):
    db = tmp_path / "keep" / "s.duckdb"
    Store(db).close()
    with pytest.raises(RuntimeError), store_module.removed_if_failed(db):
        raise RuntimeError("ingest failed")
    assert db.exists()


def _snapshots(tmp: Path) -> list[str]:
    return sorted(p.name for p in tmp.glob(f"{store_module.SNAPSHOT_PREFIX}*"))


@pytest.fixture()
def private_tmp(tmp_path, monkeypatch) -> Path:
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp))
    return tmp


def test_snapshots_go_with_close(template, private_tmp):
    view = Store.snapshot(template)
    assert len(_snapshots(private_tmp)) == 1
    view.close()
    assert _snapshots(private_tmp) == []


def test_snapshots_go_with_the_process_exit(template, tmp_path):
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    code = ("import sys; sys.path.insert(0, sys.argv[2]); from bfr_core.store import Store; "
            "v = Store.snapshot(sys.argv[1]); import os; print(len(os.listdir(sys.argv[3])))")
    done = subprocess.run([sys.executable, "-c", code, str(template), str(ROOT), str(tmp)], capture_output=True,
                          text=True, timeout=120, env={**os.environ, "TMPDIR": str(tmp)})
    assert done.returncode == 0 and done.stdout.strip() == "1", done.stderr  # made, never closed
    assert _snapshots(tmp) == []


def test_stale_snapshots_go_at_start(private_tmp):
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                          text=True, check=True).stdout.strip()
    for name in (f"bfr-snapshot-{dead}-abc", f"bfr-snapshot-{os.getpid()}-def", "bfr-snapshot-old",
                 "bfr-snapshot-new"):
        (private_tmp / name).mkdir()
        (private_tmp / name / "s.duckdb").write_bytes(b"x" * 10)
    os.utime(private_tmp / "bfr-snapshot-old", (0, 0))
    removed = store_module.remove_stale_snapshots()
    assert sorted(p.name for p in removed) == sorted(["bfr-snapshot-old", f"bfr-snapshot-{dead}-abc"])
    assert _snapshots(private_tmp) == sorted([f"bfr-snapshot-{os.getpid()}-def", "bfr-snapshot-new"])


def test_a_failed_copy_leaves_no_folder(template, private_tmp, monkeypatch):
    def full(*_a, **_k):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(shutil, "copyfile", full)
    with pytest.raises(OSError):
        Store.snapshot(template)
    assert _snapshots(private_tmp) == []


def test_the_unknown_scope_error_is_short(tmp_path):
    from bfr_core.errors import InputError
    from bfr_core.ingest.generic_jsonl import load_jsonl

    rows = [{"type": "session", "session_id": f"s{i}", "scope": f"c{i}",
             "turns": [{"speaker": "a", "text": "hi"}]} for i in range(5000)]
    rows.append({"type": "question", "question_id": "q1", "scope": "nope", "question": "?", "answer": "x",
                 "gold": []})
    path = tmp_path / "many.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    with pytest.raises(InputError) as err:
        load_jsonl(path)
    message = str(err.value)
    assert "'nope'" in message and "5,000 scopes: 'c0', 'c1', 'c10', 'c100', 'c1000' and 4,995 more" in message
    assert len(message) < 300


# -- ingest shapes that broke every later eval ----------------------------------------------------
def _lme_session(sid: str, n: int, gold: int | None = None) -> list[dict]:
    return [{"role": ("user", "assistant")[i % 2], "content": f"{sid} turn {i}: my red tripod and the camera strap",
             **({"has_answer": True} if i == gold else {})} for i in range(n)]


def _lme_question(qid: str, sids: list[str], sessions: list[list[dict]]) -> dict:
    return {"question_id": qid, "question_type": "single-session-user", "question": "What color is my tripod?",
            "answer": "red", "question_date": "2023/05/30 (Tue) 10:00", "haystack_session_ids": sids,
            "haystack_sessions": sessions, "answer_session_ids": sids[:1],
            "haystack_dates": [f"2023/05/2{i} (Sat) 10:00" for i in range(len(sids))]}


SOUND = _lme_question("q_ok", ["a", "b"], [_lme_session("a", 4, 1), _lme_session("b", 4)])
SHAPES = {  # what the probe fed to ingest; stored as it was, every eval stopped or arms failed
    "empty haystack": _lme_question("q_empty", [], []),
    "session listed twice": _lme_question("q_rep", ["c", "a", "c"], [_lme_session("c", 4, 2), _lme_session("a", 4, 1),
                                                                      _lme_session("c", 4, 2)]),
    "scope without turns": _lme_question("q_none", ["e1", "e2"], [[], []]),
}


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_after_ingesting_each_probe_shape_no_eval_stops(tmp_path, shape, capsys):
    from bfr_core.cli import main
    from bfr_core.pipeline import arm_names

    path = tmp_path / "probe.json"
    path.write_text(json.dumps([SOUND, SHAPES[shape]]), encoding="utf-8")
    db, out = tmp_path / "s.duckdb", tmp_path / "run.json"
    assert main(["ingest", "longmemeval", str(path), "--db", str(db), "--no-embed", "--quiet"]) == 0
    assert "repeated sessions" in capsys.readouterr().out or shape != "session listed twice"
    assert main(["eval", "--db", str(db), "--dataset", "longmemeval", "--arms", ",".join(arm_names()), "--quiet",
                 "--json", str(out)]) == 0, capsys.readouterr().err
    summary = json.loads(out.read_text(encoding="utf-8"))
    assert {arm: s["failed"] for arm, s in summary["arms"].items()} == dict.fromkeys(arm_names(), 0)
