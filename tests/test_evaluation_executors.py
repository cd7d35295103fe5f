"""Concurrent and distributed evaluation: rows do not depend on the executor or the worker count.

Against the local wire server (loopback, bounded, stops itself): ``--workers 1`` and ``--workers 8``
give identical results rows (timing columns aside) and traces, with 20% of requests refused with
429 + Retry-After on the concurrent run and no call failed; per-arm / per-role usage lands in the
JSON; a SIGKILL of a concurrent run loses at most the scope in flight; the Ray executor on a local
2-worker cluster gives the same rows as threads (skipped only when ray is not importable).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
from pathlib import Path

import duckdb
import pytest
from llm_wire_server import WireServer, role_reply
from test_reliability_crash import PROGRESS, replicated_demo

from bfr_core.cli import main
from bfr_core.evaluation.executors import ThreadExecutor
from bfr_core.ingest import ingest
from bfr_core.runs import comparable_rows
from bfr_core.store import Store

ROOT = Path(__file__).resolve().parents[1]
ARMS = "mem0,amem"


@pytest.fixture(scope="module")
def template(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("exec")
    store = Store(d / "template.duckdb")
    # vectors and entity names stored: no `bfr eval` these tests start loads a model
    ingest(store, "jsonl", replicated_demo(d / "demo4.jsonl", 4), name="demo", entities=True)
    store.con.execute("CHECKPOINT")
    store.close()
    return d / "template.duckdb"


@pytest.fixture()
def server():
    s = WireServer(reply=role_reply, delay_s=0.02, count="chars4", max_requests=5000, lifetime_s=300).start()
    yield s
    s.stop()


def fresh(template: Path, tmp_path: Path, name: str) -> Path:
    db = tmp_path / f"{name}.duckdb"
    shutil.copyfile(template, db)
    return db


def eval_args(db: Path, out: Path, server: WireServer, *extra: str) -> list[str]:
    return ["eval", "--db", str(db), "--dataset", "demo", "--arms", ARMS, "--provider", "openai",
            "--model", "wire-model", "--base-url", server.openai_url, "--answer", "--judge", "--suff",
            "--json", str(out), "--quiet", "--force", *extra]


def rows_of(db: Path) -> tuple[list[tuple], list[tuple]]:
    con = duckdb.connect(str(db))  # the in-process CLI may still hold it open (same configuration)
    try:
        return comparable_rows(con)
    finally:
        con.close()


def test_thread_map_keeps_job_order_whatever_finishes_first():
    import time

    def slow(ctx, item):
        time.sleep(0.001 * ((item * 7) % 5))
        return ctx + item

    assert list(ThreadExecutor(8, window=3).map(slow, [(100, i) for i in range(40)])) == [100 + i for i in range(40)]
    assert list(ThreadExecutor(1).map(slow, [(0, i) for i in range(5)])) == list(range(5))


def test_workers_1_and_8_identical_even_with_429s(template, tmp_path, server):
    one, many = fresh(template, tmp_path, "one"), fresh(template, tmp_path, "many")
    assert main(eval_args(one, tmp_path / "one.json", server, "--workers", "1")) == 0
    calls_one = server.n_requests
    server.rate_429, server.retry_after = 0.2, "0.01"
    assert main(eval_args(many, tmp_path / "many.json", server, "--workers", "8")) == 0
    assert server.n_429 > 0  # the concurrent run really was refused some requests
    assert server.n_requests - calls_one == calls_one + server.n_429  # same calls, plus the retried 429s
    r1, r8 = rows_of(one), rows_of(many)
    assert r1 == r8
    con = duckdb.connect(str(one))
    assert con.execute("SELECT count(*) FROM results WHERE answer IS NULL OR judge IS NULL OR suff IS NULL"
                       ).fetchone()[0] == 0  # every row answered, judged and Suff-judged
    con.close()
    s1 = json.loads((tmp_path / "one.json").read_text())
    s8 = json.loads((tmp_path / "many.json").read_text())
    assert s1["llm_calls"]["failed"] == s8["llm_calls"]["failed"] == 0
    # two arms asking the same prompt pay once: which one pays depends on who asked first, so per arm
    # only the call counts are fixed; the run's tokens are
    assert s1["llm_calls"]["tokens_in"] == s8["llm_calls"]["tokens_in"] > 0
    for arm in ARMS.split(","):
        u1, u8 = s1["usage"]["by_arm"][arm], s8["usage"]["by_arm"][arm]
        assert u1["calls"] == u8["calls"] > 0
        assert set(u1["roles"]) >= {"answer", "judge", "suff"}
        assert u1["cost_usd"] is None  # a self-hosted endpoint has no list price: unknown, not 0
    assert s1["usage"]["by_role"]["answer"]["calls"] == sum(s1["usage"]["by_arm"][a]["roles"]["answer"]["calls"]
                                                         for a in ARMS.split(","))


def test_dry_run_estimates_the_tokens_the_run_reports(template, tmp_path, server):
    db = fresh(template, tmp_path, "dry")
    # a pilot (another k, so other sets and prompts) measures the adjudicated share and typical reply lengths
    assert main(eval_args(db, tmp_path / "pilot.json", server, "--limit", "7", "--k", "5", "--workers", "4")) == 0
    before = server.n_requests
    assert main(eval_args(db, tmp_path / "plan.json", server, "--dry-run")) == 0
    assert server.n_requests == before  # nothing was called
    plan = json.loads((tmp_path / "plan.json").read_text())
    tin0 = server.tokens_in
    assert main(eval_args(db, tmp_path / "real.json", server, "--workers", "4")) == 0
    real = json.loads((tmp_path / "real.json").read_text())
    est, got = plan["total"]["tokens_in"], server.tokens_in - tin0
    assert got == real["llm_calls"]["tokens_in"]  # the run reports what the server counted
    assert abs(est - got) / got <= 0.10, (est, got)
    assert plan["roles"]["answer"]["calls"] == real["usage"]["by_role"]["answer"]["calls"]
    assert plan["roles"]["judge"]["tokens_out_source"].startswith("typical")
    assert not plan["roles"]["answer"]["estimated"] and plan["roles"]["judge"]["estimated"]
    assert plan["total"]["cost_usd"] is None  # unknown price shown as unknown
    assert main(eval_args(db, tmp_path / "plan2.json", server, "--dry-run")) == 0
    plan2 = json.loads((tmp_path / "plan2.json").read_text())
    assert plan2["pairs_to_retrieve"] == 0 and plan2["total"]["calls"] == 0  # all done: nothing left


def env() -> dict[str, str]:
    e = dict(os.environ)
    e["PYTHONPATH"] = str(ROOT) + os.pathsep + e.get("PYTHONPATH", "")
    return e


def test_sigkill_of_a_concurrent_run_loses_at_most_the_batch_in_flight(template, tmp_path):
    db, ref = fresh(template, tmp_path, "kill"), fresh(template, tmp_path, "ref")
    cmd = [sys.executable, "-m", "bfr_core.cli", "eval", "--dataset", "demo", "--arms", "mem0,amem,bfr-mv",
           "--workers", "4"]
    proc = subprocess.Popen([*cmd, "--db", str(db), "--json", str(tmp_path / "k.json")], cwd=ROOT, env=env(),
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    seen = {"done": 0, "total": 0}
    hit = threading.Event()

    def read() -> None:
        assert proc.stderr is not None
        while chunk := proc.stderr.read1(4096):
            for m in PROGRESS.finditer(chunk.decode("utf-8", "replace")):
                n, total = int(m.group(1)), int(m.group(2))
                if 0 < n < total and not hit.is_set():
                    seen.update(done=n, total=total)
                    os.kill(proc.pid, signal.SIGKILL)
                    hit.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    proc.wait(timeout=600)
    reader.join(timeout=30)
    assert hit.is_set() and proc.returncode == -signal.SIGKILL
    con = duckdb.connect(str(db))
    kept = con.execute("SELECT count(*) FROM results").fetchone()[0]
    con.close()
    per_scope = seen["total"] // 4  # 4 scopes, 6 scoreable questions x 3 arms each
    assert kept >= seen["done"] and kept % per_scope == 0 and kept < seen["total"]  # whole scopes only
    again = subprocess.run([*cmd, "--db", str(db), "--json", str(tmp_path / "k.json"), "--quiet"], cwd=ROOT,
                           env=env(), capture_output=True, text=True, timeout=600)
    assert again.returncode == 0, again.stderr[-2000:]
    whole = subprocess.run([*cmd, "--db", str(ref), "--json", str(tmp_path / "r.json"), "--quiet"], cwd=ROOT,
                           env=env(), capture_output=True, text=True, timeout=600)
    assert whole.returncode == 0, whole.stderr[-2000:]
    assert rows_of(db) == rows_of(ref)


def test_ray_executor_on_a_local_2_worker_cluster_matches_threads(template, tmp_path, server):
    pytest.importorskip("ray", reason="ray is not installed (pip install -e '.[ray]')")
    import ray

    threads, dist = fresh(template, tmp_path, "threads"), fresh(template, tmp_path, "ray")
    # two scopes (12 scoreable questions) keep the cluster's start-up the bulk of the time
    assert main(eval_args(threads, tmp_path / "t.json", server, "--workers", "2", "--limit", "12")) == 0
    try:
        assert main(eval_args(dist, tmp_path / "r.json", server, "--executor", "ray", "--workers", "2",
                              "--limit", "12")) == 0
    finally:
        ray.shutdown()
    assert rows_of(threads) == rows_of(dist)
    s = json.loads((tmp_path / "r.json").read_text())
    assert s["llm_calls"]["failed"] == 0 and s["llm_calls"]["provider_calls"] > 0  # the driver logged them
