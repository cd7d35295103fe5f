"""Retry-After honoured at speed: ``bfr eval --workers 16`` against ``--workers 1`` while a loopback
server refuses every 5th request with 429 and ``Retry-After: 0.2``; writes bench/out/retry.json.

The server (``tests/llm_wire_server.py`` on 127.0.0.1, bounded to 20,000 requests and 30 minutes)
answers each request after ``DELAY_S`` with a deterministic reply per role and refuses every 5th
request (by arrival order) with 429 + ``Retry-After: 0.2``. Both runs are ``bfr eval`` (``cli.main``,
in this process after a warm-up run, so Python's imports are not timed: on this shared machine they
take longer than the calls) on fresh copies of one store: ``SCOPES`` generated conversations, each
with its own words so no two prompts are alike (the LLM cache would answer repeats), ingested with
their vectors as ``bfr ingest`` does by default (a store ingested without them has every scope's turns
encoded during the run, in the thread that hands out the jobs: seconds of CPU per scope on this
machine, timed by neither the retry policy nor the workers); arm ``mem0`` with ``--answer --judge
--suff``, ``--max-retries 8``. Reported: wall and process CPU times, the
speed-up (target >= 7x), requests and 429s each run saw, failed calls, and whether the results rows
(timing columns aside) and traces of the two runs are identical (target: yes). A run with the server
refusing nothing is measured beside for the ceiling on this machine.

Usage: ``.venv/bin/python -m bench.speed.bench_retry`` (about 8 minutes on 2 shared cores).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.lib.store_rows import comparable
from bfr_core.cli import main as bfr_main
from tests.llm_wire_server import WireServer, role_reply

ROOT = Path(__file__).resolve().parents[2]

OUT = ROOT / "bench" / "out" / "retry.json"
SCOPES = 16
DELAY_S = 1.0
ARMS = "mem0"  # BM25 top-k: the run's time is its model calls
EVERY_429 = 5
RETRY_AFTER = "0.2"


def bfr(*args: str) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-m", "bfr_core.cli", *args], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=3600)
    if done.returncode != 0:
        raise SystemExit(f"bfr {' '.join(args[:2])} failed:\n{done.stderr[-3000:]}")


def conversations(path: Path) -> Path:
    """``SCOPES`` conversations of 2 sessions x 4 turns and 3 questions each, every text its own."""
    lines = []
    for c in range(SCOPES):
        for s in range(2):
            lines.append({"type": "session", "session_id": f"c{c}s{s}", "scope": f"c{c}", "date": f"2024-03-0{s + 1}",
                          "turns": [{"speaker": "user" if i % 2 == 0 else "assistant",
                                     "text": f"In chat {c}-{s}-{i} I mentioned item{c * 100 + s * 10 + i} and "
                                             f"place{(c * 7 + s * 3 + i) % 97} near lake{c}."} for i in range(4)]})
        for q in range(3):
            lines.append({"type": "question", "question_id": f"c{c}q{q}", "scope": f"c{c}",
                          "question": f"Where did I mention item{c * 100 + q}?", "answer": f"place{q}",
                          "gold": [f"c{c}s0_{q + 1}"]})
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    return path


def eval_in_process(*args: str) -> None:
    code = bfr_main(["eval", *args])
    if code != 0:
        raise SystemExit(f"bfr eval exited {code}")


def run(tmp: Path, template: Path, name: str, server: WireServer, workers: int) -> dict:
    db = tmp / f"{name}.duckdb"
    shutil.copyfile(template, db)
    n0, r0 = server.n_requests, server.n_429
    t0, c0 = time.perf_counter(), time.process_time()
    eval_in_process("--db", str(db), "--dataset", "demo", "--arms", ARMS, "--provider", "openai", "--model",
        "wire-model", "--base-url", server.openai_url, "--answer", "--judge", "--suff", "--workers", str(workers),
        "--max-retries", "8", "--quiet", "--json", str(tmp / f"{name}.json"), "--force")
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    calls = json.loads((tmp / f"{name}.json").read_text(encoding="utf-8")).get("llm_calls", {})
    return {"db": db, "wall_s": round(wall, 2), "cpu_s": round(cpu, 2), "requests": server.n_requests - n0, "refused_429": server.n_429 - r0,
            "calls_failed": calls.get("failed"), "provider_calls": calls.get("provider_calls")}


def main() -> None:
    argparse.ArgumentParser(description=__doc__.split("\n\n")[0]).parse_args()  # --help only
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="bench-retry-") as d:
        tmp = Path(d)
        template = tmp / "template.duckdb"
        bfr("ingest", "jsonl", str(conversations(tmp / "conv.jsonl")), "--db", str(template), "--name",
            "demo", "--quiet")
        server = WireServer(reply=role_reply, delay_s=DELAY_S, count="chars4", max_requests=20000,
                            lifetime_s=1800, every_429=EVERY_429, retry_after=RETRY_AFTER).start()
        try:
            server.every_429 = 0
            run(tmp, template, "warm_up", server, 16)  # imports and the answer roles loaded once
            server.every_429 = EVERY_429
            (tmp / "warm_up.duckdb").unlink()
            one = run(tmp, template, "workers_1", server, 1)
            many = run(tmp, template, "workers_16", server, 16)
            server.every_429 = 0
            ceiling = run(tmp, template, "workers_16_no_429", server, 16)
        finally:
            server.stop()
        base = comparable(one["db"])
        same = comparable(many["db"]) == base
        result = {
            "setup": {"data": f"{SCOPES} generated conversations, 3 questions each, no two prompts alike, ingested with vectors",
                      "timing": "bfr eval through cli.main in one process, after a warm-up run (imports not timed)", "arms": ARMS.split(","), "roles": "--answer --judge --suff",
                      "server_delay_s": DELAY_S, "every_nth_refused_429": EVERY_429, "retry_after_s": float(RETRY_AFTER),
                      "max_retries": 8, "machine": "2 cores shared with other jobs (pessimistic)"},
            "workers_1": {k: v for k, v in one.items() if k != "db"},
            "workers_16": {k: v for k, v in many.items() if k != "db"} | {"rows_identical_to_workers_1": same},
            "speedup_16_vs_1": round(one["wall_s"] / many["wall_s"], 2),
            "workers_16_no_429": {k: v for k, v in ceiling.items() if k != "db"}
            | {"rows_identical_to_workers_1": comparable(ceiling["db"]) == base},
            "speedup_16_no_429_vs_1_with_429": round(one["wall_s"] / ceiling["wall_s"], 2),
            "targets": {"speedup_at_least": 7.0, "rows_identical": True},
            "load_avg_1_5_15": {"before": [round(x, 2) for x in load_before],
                                "after": [round(x, 2) for x in os.getloadavg()]},
        }
    result["targets_met"] = result["speedup_16_vs_1"] >= 7.0 and same
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
