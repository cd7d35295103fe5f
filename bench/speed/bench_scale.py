"""Evaluation at scale against a local OpenAI-compatible test server: writes bench/out/scale.json.

The server (``tests/llm_wire_server.py``, started here on 127.0.0.1, bounded to 20,000 requests and
30 minutes, then it stops itself) answers every request after 300 ms with a deterministic reply per
role and reports usage as ceil(characters / 4). Every run is a fresh ``bfr eval`` process on a
fresh copy of one warm store (LoCoMo ingested, turn vectors cached), on the same 50 LoCoMo questions
x 2 arms (``mem0,amem``) with ``--answer --judge --suff``:

* ``workers_1`` and ``workers_16``: wall time, the speed-up, rows identical (results rows minus the
  timing columns ``elapsed_ms`` / ``llm_ms``, and traces minus ``elapsed_ms``), failed calls;
* ``workers_16_429``: the server refuses a seeded 20% of requests with 429 + ``Retry-After: 1``;
* ``dry_run``: a pilot (10 questions at k=5: other sets, other prompts) measures the adjudicated
  share and the typical reply lengths, then ``--dry-run`` of the 50-question run is compared with
  the tokens the server then counts for the real run; the estimate with no pilot is reported too;
* ``ray``: ``--executor ray --workers 2`` (a local 2-CPU Ray cluster) against ``workers_1``.

Speeds are measured on 2 cores shared with other jobs: pessimistic.
Usage: ``.venv/bin/python -m bench.speed.bench_scale`` (about 6 minutes).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import duckdb

from bench.lib.store_rows import comparable
from bfr_core.ingest.sources import benchmark_file
from tests.llm_wire_server import WireServer, role_reply

ROOT = Path(__file__).resolve().parents[2]

OUT = ROOT / "bench" / "out" / "scale.json"
CACHE = ROOT / "bench" / "out" / "cache" / "scale"
LOCOMO = benchmark_file("locomo")
ARMS = "mem0,amem"
LIMIT = "50"


def env() -> dict[str, str]:
    e = dict(os.environ)
    e["PYTHONPATH"] = str(ROOT) + os.pathsep + e.get("PYTHONPATH", "")
    return e


def bfr(*args: str) -> subprocess.CompletedProcess:
    done = subprocess.run([sys.executable, "-m", "bfr_core.cli", *args], cwd=ROOT, env=env(),
                          capture_output=True, text=True, timeout=3600)
    if done.returncode != 0:
        raise SystemExit(f"bfr {' '.join(args)} failed:\n{done.stderr[-3000:]}")
    return done


def template() -> Path:
    """LoCoMo ingested once, and one offline pass so the first scopes' vectors are cached."""
    db = CACHE / "template.duckdb"
    if not db.exists():
        CACHE.mkdir(parents=True, exist_ok=True)
        bfr("ingest", "locomo", str(LOCOMO), "--db", str(db), "--no-embed", "--quiet")
        bfr("eval", "--db", str(db), "--benchmark", "locomo", "--arms", ARMS, "--limit", LIMIT, "--quiet",
            "--json", str(CACHE / "warm.json"))
        con = duckdb.connect(str(db))
        con.execute("DELETE FROM results; DELETE FROM traces; DELETE FROM runs; CHECKPOINT")
        con.close()
    return db


def fresh(name: str) -> Path:
    db = CACHE / f"{name}.duckdb"
    db.unlink(missing_ok=True)
    shutil.copyfile(template(), db)
    return db


def run(name: str, server: WireServer, *extra: str, limit: str = LIMIT, db: Path | None = None) -> dict:
    db = db or fresh(name)
    out = CACHE / f"{name}.json"
    n0, t0_in, t0_429 = server.n_requests, server.tokens_in, server.n_429
    t0 = time.perf_counter()
    bfr("eval", "--db", str(db), "--benchmark", "locomo", "--arms", ARMS, "--limit", limit, "--provider", "openai",
        "--model", "wire-model", "--base-url", server.openai_url, "--answer", "--judge", "--suff", "--quiet",
        "--json", str(out), "--force", *extra)
    wall = time.perf_counter() - t0
    summary = json.loads(out.read_text(encoding="utf-8"))
    return {"db": db, "summary": summary, "wall_s": round(wall, 2), "requests": server.n_requests - n0,
            "server_tokens_in": server.tokens_in - t0_in, "refused_429": server.n_429 - t0_429}


def brief(r: dict) -> dict:
    calls = r["summary"].get("llm_calls", {})
    return {"wall_s": r["wall_s"], "requests": r["requests"], "refused_429": r["refused_429"],
            "rows": len(comparable(r["db"])[0]), "calls_failed": calls.get("failed"),
            "provider_calls": calls.get("provider_calls"), "tokens_in": calls.get("tokens_in"),
            "tokens_out": calls.get("tokens_out")}


def dry(db: Path, server: WireServer) -> dict:
    out = CACHE / "plan.json"
    n0 = server.n_requests
    bfr("eval", "--db", str(db), "--benchmark", "locomo", "--arms", ARMS, "--limit", LIMIT, "--provider", "openai",
        "--model", "wire-model", "--base-url", server.openai_url, "--answer", "--judge", "--suff", "--dry-run",
        "--json", str(out), "--force")
    assert server.n_requests == n0, "the dry run called the server"
    return json.loads(out.read_text(encoding="utf-8"))


def main() -> None:
    argparse.ArgumentParser(description=__doc__.split("\n\n")[0]).parse_args()  # --help only
    server = WireServer(reply=role_reply, delay_s=0.3, count="chars4", max_requests=20000, lifetime_s=1800).start()
    try:
        template()
        one = run("workers_1", server, "--workers", "1")
        many = run("workers_16", server, "--workers", "16")
        server.rate_429, server.retry_after = 0.2, "1"
        refused = run("workers_16_429", server, "--workers", "16", "--max-retries", "8")
        server.rate_429 = 0.0
        base_rows = comparable(one["db"])
        # dry run: without a pilot (upper bounds), then after one
        cold = dry(fresh("dry"), server)
        db = CACHE / "dry.duckdb"
        run("pilot", server, "--workers", "16", "--k", "5", limit="10", db=db)
        plan = dry(db, server)
        real = run("dry_real", server, "--workers", "16", db=db)
        try:
            ray_run = run("ray", server, "--executor", "ray", "--workers", "2")
            ray_res = {**brief(ray_run), "rows_identical_to_workers_1": comparable(ray_run["db"]) == base_rows}
        except SystemExit as exc:  # ray missing or broken: say so, do not hide the other figures
            ray_res = {"error": str(exc)[-500:]}
    finally:
        server.stop()
    got = real["server_tokens_in"]
    result = {
        "setup": {"questions": int(LIMIT), "arms": ARMS.split(","), "roles": "--answer --judge --suff",
                  "server_delay_s": 0.3, "token_count": "ceil(chars / 4), server and estimate alike",
                  "machine": "2 cores shared with other jobs (pessimistic)"},
        "workers_1": brief(one),
        "workers_16": {**brief(many), "rows_identical_to_workers_1": comparable(many["db"]) == base_rows},
        "speedup_16_vs_1": round(one["wall_s"] / many["wall_s"], 2),
        "workers_16_429": {**brief(refused), "rate_429": 0.2, "retry_after_s": 1, "max_retries": 8,
                           "rows_identical_to_workers_1": comparable(refused["db"]) == base_rows},
        "dry_run": {
            "estimated_tokens_in": plan["total"]["tokens_in"], "server_counted_tokens_in": got,
            "error_pct": round(100 * (plan["total"]["tokens_in"] - got) / got, 2),
            "estimated_tokens_out": plan["total"]["tokens_out"],
            "reported_tokens_out": real["summary"]["llm_calls"]["tokens_out"],
            "estimated_calls_paid": plan["total"]["calls"] - plan["total"]["cache_hits"],
            "real_provider_calls": real["summary"]["llm_calls"]["provider_calls"],
            "roles": plan["roles"], "notes": plan["notes"],
            "without_pilot": {"estimated_tokens_in": cold["total"]["tokens_in"],
                              "estimated_tokens_out": cold["total"]["tokens_out"],
                              "note": "no earlier runs: every Suff@Set adjudicated, replies at max_tokens "
                                      "(upper bounds); the pilot's own calls are not in this comparison"},
            "usage_by_role_real": real["summary"].get("usage", {}).get("by_role"),
        },
        "ray": ray_res,
    }
    OUT.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(json.dumps({k: v for k, v in result.items() if k != "dry_run"}, indent=2))
    print("dry_run error %:", result["dry_run"]["error_pct"])


if __name__ == "__main__":
    main()
