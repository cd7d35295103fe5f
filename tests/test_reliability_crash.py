"""Crashes: ``bfr eval`` killed with SIGKILL mid-run resumes to the same result as an uninterrupted run.

The store holds the demo conversations copied into many scopes (dataset ``demo``), so the run
commits one transaction per scope and a kill lands between commits. The test reads the progress
bar on stderr (the process holds DuckDB's single-writer lock, so the store cannot be read while
it runs), kills the process once some scopes are done, counts what survived, reruns the same
command and compares the summary JSON with an uninterrupted run on a fresh copy.

Not covered: a kill inside DuckDB's own checkpoint (DuckDB's WAL replay is trusted), power loss.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
from pathlib import Path

import duckdb
import pytest

from bfr_core.ingest import ingest
from bfr_core.ingest.demo import demo_file
from bfr_core.store import Store

ROOT = Path(__file__).resolve().parents[1]
DEMO = demo_file()
SCOPES = 16
ARMS = "mem0,amem,bfr-mv"
PROGRESS = re.compile(r"(\d+)/(\d+) \[")


def replicated_demo(path: Path, copies: int) -> Path:
    """demo.jsonl with every record copied into ``copies`` scopes (ids prefixed, so all unique)."""
    out = []
    recs = [json.loads(x) for x in DEMO.read_text(encoding="utf-8").splitlines() if x.strip()]
    for c in range(copies):
        p = f"c{c:02d}_"
        for r in recs:
            r = json.loads(json.dumps(r))
            r["scope"] = p + str(r.get("scope", "default"))
            if r["type"] == "session":
                r["session_id"] = p + r["session_id"]
                for t in r["turns"]:
                    if "turn_id" in t:
                        t["turn_id"] = p + t["turn_id"]
            else:
                r["question_id"] = p + r["question_id"]
                r["gold"] = [p + g for g in r["gold"]]
            out.append(json.dumps(r))
    path.write_text("\n".join(out) + "\n", encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def template(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("crash")
    store = Store(d / "template.duckdb")
    # vectors and entity names stored: no `bfr eval` these tests start loads a model
    ingest(store, "jsonl", replicated_demo(d / "demo_many.jsonl", SCOPES), name="demo", entities=True)
    store.con.execute("CHECKPOINT")
    store.close()
    return d / "template.duckdb"


def command(db: Path, out: Path, *, quiet: bool) -> list[str]:
    cmd = [sys.executable, "-m", "bfr_core.cli", "eval", "--db", str(db), "--dataset", "demo", "--arms", ARMS,
           "--json", str(out), "--force"]
    return [*cmd, "--quiet"] if quiet else cmd


def env() -> dict[str, str]:
    e = dict(os.environ)
    e["PYTHONPATH"] = str(ROOT) + os.pathsep + e.get("PYTHONPATH", "")
    return e


def run_to_end(db: Path, out: Path) -> dict:
    done = subprocess.run(command(db, out, quiet=True), cwd=ROOT, env=env(), capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "Traceback" not in done.stderr
    return json.loads(out.read_text(encoding="utf-8"))


def kill_mid_run(db: Path, out: Path) -> tuple[int, int]:
    """Start the run, SIGKILL it once the progress bar shows some (not all) pairs done."""
    proc = subprocess.Popen(command(db, out, quiet=False), cwd=ROOT, env=env(), stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    seen = bytearray()
    state = {"done": 0, "total": 0}
    hit = threading.Event()

    def read() -> None:
        assert proc.stderr is not None
        while chunk := proc.stderr.read1(4096):
            seen.extend(chunk)
            for m in PROGRESS.finditer(chunk.decode("utf-8", "replace")):
                n, total = int(m.group(1)), int(m.group(2))
                if 0 < n < total and not hit.is_set():
                    state.update(done=n, total=total)
                    os.kill(proc.pid, signal.SIGKILL)  # at once, from the reader: no clock involved
                    hit.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    proc.wait(timeout=600)
    reader.join(timeout=30)
    assert hit.is_set(), f"the run ended before it could be killed: {bytes(seen[-500:])!r}"
    assert proc.returncode == -signal.SIGKILL
    STATS["kills"] = STATS.get("kills", 0) + 1
    return state["done"], state["total"]


def table_counts(db: Path, run_id: str | None = None) -> dict[str, int]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        out = {}
        for t in ("results", "traces"):
            out[t] = con.execute(f"SELECT count(*) FROM {t}").fetchone()[0]
            out[f"{t}_dupes"] = con.execute(
                f"SELECT count(*) FROM (SELECT run_id, question_id, arm FROM {t} GROUP BY ALL HAVING count(*) > 1)"
            ).fetchone()[0]
        out["finished"] = con.execute("SELECT count(*) FROM runs WHERE finished IS NOT NULL").fetchone()[0]
        out["failed"] = con.execute("SELECT count(*) FROM results WHERE status <> 'ok'").fetchone()[0]
        return out
    finally:
        con.close()


STATS: dict[str, int] = {}


@pytest.fixture(scope="module")
def expected(template, tmp_path_factory) -> tuple[dict, dict[str, int]]:
    """The uninterrupted run on a fresh copy: its summary and table counts."""
    d = tmp_path_factory.mktemp("fresh")
    fresh = d / "fresh.duckdb"
    shutil.copy(template, fresh)
    return run_to_end(fresh, d / "fresh.json"), table_counts(fresh)


def test_sigkill_mid_eval_resumes_to_identical_summary(template, expected, tmp_path):
    crashed = tmp_path / "crashed.duckdb"
    shutil.copy(template, crashed)
    expected, fresh_counts = expected
    total = fresh_counts["results"]
    assert total == SCOPES * 6 * 3

    done, shown_total = kill_mid_run(crashed, tmp_path / "crashed.json")
    assert shown_total == total
    after_kill = table_counts(crashed)  # the lock died with the process: the file opens again
    assert 0 < after_kill["results"] < total, after_kill
    assert after_kill["results"] >= done  # every pair the bar reported was committed before it
    assert after_kill["results"] % 18 == 0  # whole scopes only: a scope lands in one transaction
    assert after_kill["results"] == after_kill["traces"] and after_kill["finished"] == 0
    assert not (tmp_path / "crashed.json").exists()

    resumed = run_to_end(crashed, tmp_path / "crashed.json")
    final = table_counts(crashed)
    assert final["results"] == total and final["traces"] == total
    assert final["results_dupes"] == 0 and final["traces_dupes"] == 0 and final["failed"] == 0
    assert final["finished"] == 1
    assert resumed == expected
    STATS.update(rows_before_kill=after_kill["results"], rows_total=total,
                 rows_lost=total - final["results"])
    # a second rerun of a finished run changes nothing
    again = run_to_end(crashed, tmp_path / "again.json")
    assert again == expected and table_counts(crashed) == final


@pytest.fixture(scope="module", autouse=True)
def _stats():
    yield
    if out := os.environ.get("BFR_RELIABILITY_STATS"):
        Path(out).write_text(json.dumps({"crash": STATS}), encoding="utf-8")


def test_sigkill_leaves_no_partial_scope(template, expected, tmp_path):
    """Killed twice at different points, the run still converges to the uninterrupted result."""
    db = tmp_path / "twice.duckdb"
    shutil.copy(template, db)
    kill_mid_run(db, tmp_path / "x.json")
    first = table_counts(db)["results"]
    kill_mid_run(db, tmp_path / "x.json")
    second = table_counts(db)["results"]
    assert first <= second and second % 18 == 0
    assert run_to_end(db, tmp_path / "x.json") == expected[0]
    assert table_counts(db) == expected[1]
