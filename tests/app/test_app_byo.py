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


def test_imported_system_on_failures_and_trace(app_db, tmp_path: Path) -> None:
    store = Store(app_db)
    try:
        if not any(r[0] == RUN_ID for r in store.cursor().execute("SELECT run_id FROM runs").fetchall()):
            add_fake_run(store)
        qids = [q.question_id for q in store.questions("demo", scoreable_only=True)]
        first = store.scope_turns("demo", store.question("demo", qids[0]).scope_id)[0].turn_id
        run_file = tmp_path / "other.jsonl"
        run_file.write_text("\n".join(json.dumps({"question_id": q, "evidence": [first]}) for q in qids))
        import_run(store, run_file, dataset_id="demo", name="other-sys", run_id=RUN_ID)
    finally:
        store.close()
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
    at.button(key="trace_all").click().run()
    assert not at.exception, [e.value for e in at.exception]
    body = texts(at)
    assert "Stored trace from eval run" in body and "imported evidence set" in body
