"""Other systems in the app: an arm from an installed package is listed on the Trace page, and an
imported system's run shows on Failures and its stored trace on Trace."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import RUN_ID, add_fake_run, app_test, texts
from plugin_install import ARM, install_example

from bfr_core import pipeline
from bfr_core.evaluation.imported import import_run
from bfr_core.store import Store


def test_plugin_arm_is_listed_on_trace(app_db, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    site = install_example(tmp_path)
    monkeypatch.syspath_prepend(str(site))
    try:
        assert ARM in pipeline.refresh_plugins()
        at = app_test()
        at.run()
        at.switch_page("pages/trace.py").run()
        assert not at.exception, [e.value for e in at.exception]
        assert ARM in at.selectbox(key="trace_arm").options
    finally:
        monkeypatch.undo()
        pipeline.refresh_plugins()


def _import_demo_systems(app_db: Path, tmp_path: Path) -> list[str]:
    """``other-sys`` (every question: its first gold turn and the scope's first turn) and
    ``partial-sys`` (the first question only) as arms of the fake run; the question ids."""
    store = Store(app_db)
    try:
        if not any(r[0] == RUN_ID for r in store.cursor().execute("SELECT run_id FROM runs").fetchall()):
            add_fake_run(store)
        qs = store.questions("demo", scoreable_only=True)
        rows = []
        for q in qs:
            first = store.scope_turns("demo", q.scope_id)[0].turn_id
            rows.append({"question_id": q.question_id, "evidence": list(dict.fromkeys([q.gold[0], first]))})
        (tmp_path / "other.jsonl").write_text("\n".join(json.dumps(r) for r in rows))
        import_run(store, tmp_path / "other.jsonl", dataset_id="demo", name="other-sys", run_id=RUN_ID, replace=True)
        (tmp_path / "partial.jsonl").write_text(json.dumps(rows[0]))
        import_run(store, tmp_path / "partial.jsonl", dataset_id="demo", name="partial-sys", run_id=RUN_ID,
                   allow_missing=True, replace=True)
    finally:
        store.close()
    return [q.question_id for q in qs]


def test_imported_system_on_failures_and_trace(app_db, tmp_path: Path) -> None:
    qids = _import_demo_systems(app_db, tmp_path)
    at = app_test()
    at.run()
    at.switch_page("pages/failures.py").run()
    assert not at.exception, [e.value for e in at.exception]
    assert "other-sys" in texts(at) or any("other-sys" in str(df.value.columns) for df in at.dataframe)
    at = app_test()
    at.query_params.update({"dataset": "demo", "question": qids[0], "arm": "other-sys", "run": RUN_ID})
    at.run()
    at.switch_page("pages/trace.py").run()
    assert not at.exception, [e.value for e in at.exception]
    body = texts(at)
    assert "imported evidence set" in body and "is an imported system" in body
    # another question of the same imported system: its stored evidence again, never a live run
    at.selectbox(key="trace_question").select(qids[1]).run()
    assert not at.exception, [e.value for e in at.exception]
    assert "imported evidence set" in texts(at)


def test_trace_lists_imported_systems_and_shows_stored_evidence_with_gold(app_db, tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    qids = _import_demo_systems(app_db, tmp_path)

    def no_live_run(*_a, **_k):
        raise AssertionError("an imported system was run live")

    at = app_test()
    at.run()
    at.switch_page("pages/trace.py").run()
    assert not at.exception, [e.value for e in at.exception]
    arm_box = at.selectbox(key="trace_arm")
    assert {"other-sys (imported)", "partial-sys (imported)"} <= set(arm_box.options)
    monkeypatch.setattr(pipeline, "run", no_live_run)
    at.selectbox(key="trace_question").select(qids[1]).run()
    at.selectbox(key="trace_arm").select("other-sys").run()
    assert not at.exception, [e.value for e in at.exception]
    body = texts(at)
    assert "is an imported system" in body and "cannot be run live" in body and "eval run demo\\-fake0001" in body
    assert "imported evidence set" in body and "Final evidence set" in body
    assert "★ gold" in body  # its evidence holds the question's first gold turn, marked
    assert not [b for b in at.button if b.key in ("trace_next", "trace_all")], "no live rerun is offered"
    # a question its file did not hold: said so, nothing run
    at.selectbox(key="trace_arm").select("partial-sys").run()
    assert not at.exception, [e.value for e in at.exception]
    assert "No evidence is stored for this question: its file gave none" in texts(at)


def test_home_lists_imported_systems(app_db, tmp_path: Path) -> None:
    _import_demo_systems(app_db, tmp_path)
    at = app_test()
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    table = next(df.value for df in at.dataframe if "system" in df.value.columns)
    assert sorted(zip(table["system"], table["dataset"], table["run"], table["format"], strict=True)) == [
        ("other-sys", "demo", RUN_ID, "jsonl"), ("partial-sys", "demo", RUN_ID, "jsonl")]
    assert "Imported systems" in texts(at)
