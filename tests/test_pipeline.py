"""Arms from other packages (the ``bfr.arms`` entry-point group): the example package, installed with
pip into a temporary folder, is listed by ``bfr eval --help`` and runs in ``bfr eval``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from plugin_install import ARM, install_example

from bfr_core import pipeline
from bfr_core.ingest.demo import ensure_demo_store

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return install_example(tmp_path_factory.mktemp("plugin"))


def _bfr(site: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": f"{site}{os.pathsep}{ROOT}"}
    return subprocess.run([sys.executable, "-m", "bfr_core.cli", *args], env=env, capture_output=True, text=True,
                          timeout=600, cwd=ROOT)


def test_listed_by_eval_help_and_runs_in_eval(site: Path, tmp_path: Path) -> None:
    assert ARM in _bfr(site, "eval", "--help").stdout
    db = tmp_path / "demo.duckdb"
    ensure_demo_store(db).close()
    out = tmp_path / "o.json"
    done = _bfr(site, "eval", "--db", str(db), "--dataset", "demo", "--arms", f"mem0,{ARM}", "--k", "3", "--quiet",
                "--json", str(out))
    assert done.returncode == 0, done.stderr
    arm = json.loads(out.read_text())["arms"][ARM]
    assert arm["mean_set_size"] == 3.0 and arm["failed"] == 0


def test_refresh_finds_it_and_never_replaces_a_builtin(site: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert ARM not in pipeline.ARMS
    monkeypatch.syspath_prepend(str(site))
    try:
        assert pipeline.refresh_plugins() == [ARM]
        assert ARM in pipeline.arm_names() and pipeline.resolve(ARM).__module__ == "bfr_example_arm"
        assert set(pipeline.BUILTIN_ARMS) <= set(pipeline.ARMS) and pipeline.PLUGIN_ERRORS == {}
    finally:
        monkeypatch.undo()
        pipeline.refresh_plugins()
    assert ARM not in pipeline.ARMS
