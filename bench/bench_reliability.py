"""Reliability figures: runs the five reliability test files and writes bench/out/reliability.json.

Each test file records what it tried (``BFR_RELIABILITY_STATS`` names the JSON file it writes):
inputs fuzzed per ingest format and how many were refused or ingested, kills and rows surviving a
crash, labels saved by concurrent annotators, faults the wire server injected, pages checked for a
planted key. ``records_lost`` adds up every row a test expected and did not find; it must be 0.

Usage: ``.venv/bin/python bench/bench_reliability.py`` (about two minutes on 2 cores).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "bench" / "out" / "reliability.json"
FILES = {
    "ingest_fuzz": "tests/test_reliability_ingest_fuzz.py",
    "crash": "tests/test_reliability_crash.py",
    "annotators": "tests/test_reliability_annotators.py",
    "model_faults": "tests/test_reliability_model_faults.py",
    "injection": "tests/test_reliability_injection.py",
}


def run_one(name: str, path: str, tmp: Path) -> dict:
    stats = tmp / f"{name}.json"
    env = {**os.environ, "BFR_RELIABILITY_STATS": str(stats)}
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", path], cwd=ROOT,
                          env=env, capture_output=True, text=True)
    tail = done.stdout.strip().splitlines()[-1:] if done.stdout.strip() else []
    figures = json.loads(stats.read_text(encoding="utf-8")).get(name, {}) if stats.exists() else {}
    return {"passed": done.returncode == 0, "summary": tail[0] if tail else "", "seconds": round(
        time.perf_counter() - start, 1), **figures}


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        results = {name: run_one(name, path, Path(tmp)) for name, path in FILES.items()}
    fuzz = results["ingest_fuzz"]
    inputs = {k: fuzz.get(k, 0) for k in ("locomo", "longmemeval", "jsonl")}
    faults = results["model_faults"].get("faults_injected", 0) + results["model_faults"].get("unusable_replies", 0)
    lost = (results["crash"].get("rows_lost", 0) + results["annotators"].get("labels_lost", 0)
            + results["model_faults"].get("rows_lost", 0))
    report = {
        "inputs_tried": {**inputs, "total": sum(inputs.values())},
        "inputs_refused_cleanly": {k: fuzz.get(f"{k}_refused", 0) for k in inputs},
        "inputs_ingested": {k: fuzz.get(f"{k}_ingested", 0) for k in inputs},
        "faults_injected": {"llm_http_and_unusable_replies": faults, "sigkill": results["crash"].get("kills", 0),
                            "gzip_bombs": sum(fuzz.get(f"{k}_bomb", 0) for k in inputs)},
        "labels_saved_concurrently": results["annotators"].get("labels_saved", 0),
        "records_lost": lost,
        "all_passed": all(r["passed"] for r in results.values()),
        "by_file": results,
    }
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(json.dumps({k: v for k, v in report.items() if k != "by_file"}, indent=2))
    return 0 if report["all_passed"] and lost == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
