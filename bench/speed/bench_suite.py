"""The test suite's time, whole and per test file, as ``.ci/run`` runs it from a fresh clone.

Clones the repository (``--src``, default this checkout) into ``--dest`` (default ``/work/fresh-suite``:
a folder whose parent holds ``shared``, as CI's does), runs ``bash .ci/run`` there with
``$BFR_SUITE_TIMES`` set (``tests/conftest.py`` writes each file's setup + call + teardown seconds), and
writes ``bench/out/suite_times.json``: the wall time of the whole run (set-up included), pytest's
tests / failed / exit status, the seconds per file, slowest first, and the slowest tests'.
``--no-clone`` runs the suite in this checkout instead.

    .venv/bin/python -m bench.speed.bench_suite

Does not cover: time spent by a first-ever set-up (pip's cache and the local model build are warm here).
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

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "bench" / "out" / "suite_times.json"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--src", default=str(ROOT))
    ap.add_argument("--dest", default="/work/fresh-suite")
    ap.add_argument("--no-clone", action="store_true", help="run in this checkout")
    ap.add_argument("--out", default=str(OUT))
    args = ap.parse_args(argv)
    where = ROOT
    if not args.no_clone:
        where = Path(args.dest)
        if where.exists():
            shutil.rmtree(where)
        subprocess.run(["git", "clone", "-q", args.src, str(where)], check=True)
    commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=where, capture_output=True, text=True).stdout.strip()
    times = where / ".suite_times.json"
    env = {**os.environ, "BFR_SUITE_TIMES": str(times)}
    start = time.perf_counter()
    done = subprocess.run(["bash", ".ci/run"], cwd=where, env=env)
    wall = time.perf_counter() - start
    per_file = json.loads(times.read_text(encoding="utf-8")) if times.exists() else {}
    result = {"commit": commit, "fresh_clone": not args.no_clone, "wall_s": round(wall, 1),
              "returncode": done.returncode, "target_s": 900, "met": done.returncode == 0 and wall <= 900,
              "load_avg_at_end": os.getloadavg(), **per_file}
    Path(args.out).write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    print(f"suite: {wall:.0f} s, exit {done.returncode}, {per_file.get('tests', '?')} tests -> {args.out}")
    return done.returncode


if __name__ == "__main__":
    sys.exit(main())
