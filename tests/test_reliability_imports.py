"""``bfr import-run`` under faults: ``--replace`` killed at any moment or stopped by a full disk keeps
the earlier import whole (it is one transaction: ``runs.write_arm``), and importing into another
run never changes that run's state (an unfinished run stays unfinished).

Kills: SIGKILL of ``bfr import-run --replace`` at delays spread over its run time. Full disk: the
same command under a file-size limit (``RLIMIT_FSIZE``, SIGXFSZ ignored, so a write past it fails as
on a full disk) that the store's log cannot grow past. After each, the arm holds every question's
row, all of the old import or all of the new one. Counts go to ``BFR_RELIABILITY_STATS`` (``imports``)
for ``bench/checks/bench_reliability.py``.
"""

from __future__ import annotations

import os
import resource
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from reliability_stats import record as record_stats

from bfr_core.cli import main
from bfr_core.store import Store

ROOT = Path(__file__).resolve().parents[1]
STATS: dict[str, int] = {}


def record(**counts: int) -> None:
    for k, v in counts.items():
        STATS[k] = STATS.get(k, 0) + v


@pytest.fixture(scope="module", autouse=True)
def _stats():
    yield
    record_stats("imports", STATS)


@pytest.fixture(scope="module")
def template(tmp_path_factory) -> tuple[Path, str, Path, Path]:
    """The demo store with a finished offline run of mem0 and amem, plus the run's mem0 and amem
    rankings as two TREC files (old / new content of one imported system)."""
    d = tmp_path_factory.mktemp("imports")
    from bfr_core.ingest.demo import ensure_demo_store
    from bfr_core.runs import list_runs

    db = d / "template.duckdb"
    ensure_demo_store(db, embed=False).close()
    assert main(["eval", "--db", str(db), "--dataset", "demo", "--arms", "mem0,amem", "--quiet",
                 "--json", str(d / "o.json")]) == 0
    store = Store(db)
    run_id = list_runs(store)[0]["run_id"]
    store.close()
    old, new = d / "old.trec", d / "new.trec"
    assert main(["export-run", run_id, "--db", str(db), "--arm", "mem0", "--out", str(old)]) == 0
    assert main(["export-run", run_id, "--db", str(db), "--arm", "amem", "--out", str(new)]) == 0
    for f in (old, new):  # one system's name in both files
        f.write_text("".join(ln.rsplit(" ", 1)[0] + " theirs\n" for ln in f.read_text().splitlines()))
    assert main(["import-run", str(old), "--db", str(db), "--dataset", "demo", "--name", "theirs",
                 "--run", run_id]) == 0
    return db, run_id, old, new


def _arm(db: Path, run_id: str, arm: str = "theirs") -> list[tuple]:
    store = Store(db, read_only=True)
    try:
        return store.cursor().execute(
            "SELECT r.question_id, r.evidence, r.status, t.trace IS NOT NULL FROM results r LEFT JOIN traces t "
            "USING (run_id, question_id, arm) WHERE r.run_id = ? AND r.arm = ? ORDER BY 1", [run_id, arm]).fetchall()
    finally:
        store.close()


def _copy(template, tmp_path: Path) -> Path:
    db = tmp_path / "s.duckdb"
    shutil.copyfile(template[0], db)
    return db


def _cmd(db: Path, run_id: str, path: Path) -> list[str]:
    return [sys.executable, "-m", "bfr_core.cli", "import-run", str(path), "--db", str(db), "--dataset", "demo",
            "--name", "theirs", "--run", run_id, "--replace"]


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT), "BFR_LOCK_WAIT_S": "2"}


def test_replace_interrupted_after_its_delete_keeps_the_earlier_import(template, tmp_path, monkeypatch) -> None:
    from bfr_core import runs
    from bfr_core.evaluation.imported import import_run

    db = _copy(template, tmp_path)
    before = _arm(db, template[1])
    calls = []

    def interrupted(*args, **kwargs):
        calls.append(1)
        raise KeyboardInterrupt  # Ctrl-C once the old rows are deleted, before the new ones are in

    monkeypatch.setattr(runs, "insert_columns", interrupted)
    store = Store(db)
    try:
        with pytest.raises(KeyboardInterrupt):
            import_run(store, template[3], dataset_id="demo", name="theirs", run_id=template[1], replace=True)
    finally:
        store.close()
    after = _arm(db, template[1])
    record(interrupted_replaces=1, rows_lost=len(before) - len(after))
    assert calls and after == before


def test_replace_killed_at_any_moment_keeps_one_whole_import(template, tmp_path) -> None:
    old_rows = _arm(template[0], template[1])
    db = _copy(template, tmp_path)
    start = time.perf_counter()
    assert subprocess.run(_cmd(db, template[1], template[3]), env=_env(), capture_output=True).returncode == 0
    whole = time.perf_counter() - start
    new_rows = _arm(db, template[1])
    assert new_rows != old_rows and len(new_rows) == len(old_rows)
    kills = 8
    for i in range(kills):
        db = _copy(template, tmp_path)
        proc = subprocess.Popen(_cmd(db, template[1], template[3]), env=_env(), stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        time.sleep(whole * (0.45 + 0.55 * i / kills))  # the imports start after ~0.4 of the time
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        now = _arm(db, template[1])
        record(kills=1, rows_lost=max(0, len(old_rows) - len(now)))
        assert now in (old_rows, new_rows), f"kill {i}: {len(now)} rows of {len(old_rows)}"


def _limit_files(size: int):
    def apply() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (size, size))
    return apply


def test_replace_on_a_full_disk_is_one_line_and_keeps_the_earlier_import(template, tmp_path) -> None:
    db = _copy(template, tmp_path)
    before = _arm(db, template[1])
    out = subprocess.run(_cmd(db, template[1], template[3]), env=_env(), capture_output=True, text=True,
                         preexec_fn=_limit_files(4096))
    lines = out.stderr.strip().splitlines()
    after = _arm(db, template[1])
    record(full_disk_replaces=1, rows_lost=max(0, len(before) - len(after)), tracebacks=int("Traceback" in out.stderr))
    assert "Traceback" not in out.stderr, out.stderr[-2000:]
    assert out.returncode == 2 and len(lines) == 1 and lines[0].startswith("bfr import-run: error: "), out.stderr
    assert after == before


def test_importing_into_an_unfinished_run_leaves_it_unfinished(template, tmp_path) -> None:
    db = _copy(template, tmp_path)
    store = Store(db)
    store.cursor().execute("UPDATE runs SET finished = NULL WHERE run_id = ?", [template[1]])
    store.close()
    assert main(["import-run", str(template[3]), "--db", str(db), "--dataset", "demo", "--name", "other",
                 "--run", template[1]]) == 0
    store = Store(db, read_only=True)
    try:
        finished = store.cursor().execute("SELECT finished FROM runs WHERE run_id = ?", [template[1]]).fetchone()[0]
    finally:
        store.close()
    record(unfinished_runs_finished=int(finished is not None))
    assert finished is None


def test_a_name_with_control_characters_is_refused_and_a_stored_one_is_printed_escaped(template, tmp_path,
                                                                                      capsys) -> None:
    db = _copy(template, tmp_path)
    for name in ("x\x1b[2J", "x\u202eevil", "x\x07"):
        assert main(["import-run", str(template[3]), "--db", str(db), "--dataset", "demo", "--name", name,
                     "--run", template[1]]) == 2
        err = capsys.readouterr().err
        assert "printable" in err and name not in err
    store = Store(db)  # a name stored before the check: shown, never acted on
    store.cursor().execute("UPDATE results SET arm = 'ev\x1b[31mil' WHERE run_id = ? AND arm = 'theirs'", [template[1]])
    store.cursor().execute("UPDATE runs SET arms = list_append(arms, 'ev\x1b[31mil') WHERE run_id = ?", [template[1]])
    store.close()
    assert main(["report", template[1], "--db", str(db)]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "ev\\x1b[31mil" in out
