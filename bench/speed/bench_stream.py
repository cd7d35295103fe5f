"""Streaming parse of LongMemEval files up to M's size: peak memory and time per file size; writes
``bench/out/stream.json``.

Inputs: the dev50 sample as shipped, then LongMemEval-shaped files of growing size built from it in a
temp folder (never in the repository; one at a time, deleted after use): dev50's 50 questions with
haystacks padded to ``--sessions`` (default 500, M's size) by ``bench_msize.padded`` (filler sessions
drawn from the other dev50 haystacks), that block written ``rounds`` times with the question ids
renamed (``r<round>_<id>``). Every round reuses the same sessions, as M's haystacks share theirs, so the
file grows while its unique content stays fixed: the M-sized file (2.96 GB with the defaults) holds
the unique sessions of the smallest.

Each parse runs in a fresh process, peak memory = its peak RSS (``VmHWM``, imports included; the peak
after the imports is recorded too):

* ``new``: ``load_longmemeval`` (streaming, ``common.JsonArray``);
* ``old``: the whole-file path it replaced, ``load_items(path, load_json(path))`` (the same builder
  after ``json.loads`` of the whole text); only on files up to ``--old-max-gib`` and when the machine's
  available memory is at least 8x the file (it needs several times the file size);
* ``cli``: ``bfr ingest longmemeval PATH --no-embed --quiet`` into a new store in the temp folder:
  the parse, release recognition, validation and the store write, no encoding.

The machine is shared: load averages are recorded at the start and end, with the commit measured.

    PYTHONPATH=. nice -n 10 .venv/bin/python -m bench.speed.bench_stream [--rounds 1,4,11] [--sessions 500]
"""

from __future__ import annotations

import argparse
import contextlib
import gzip
import io
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
DEV50 = ROOT.parent / "shared" / "data" / "longmemeval_s_dev50.json.gz"
GIB = 1 << 30


# -- child: one parse in a fresh process ----------------------------------------------------------
def _rss_mb() -> float:
    """This process's peak RSS (``VmHWM``; not ``ru_maxrss``, which in a child forked from this bench
    started at the parent's peak)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return round(int(line.split()[1]) / 1024, 1)
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def child(mode: str, path: str, tmp: str) -> dict[str, Any]:
    """Parse ``path`` one way; imports first, so the RSS they take is measured apart."""
    from bfr_core.ingest.common import load_json, sha256_file
    from bfr_core.ingest.longmemeval import load_items, load_longmemeval

    if mode == "cli":
        from bfr_core.cli import main as cli_main
    rss_imports = _rss_mb()
    start, cpu0 = time.perf_counter(), time.process_time()
    row: dict[str, Any] = {}
    if mode == "new":
        b = load_longmemeval(path)
    elif mode == "old":
        b = load_items(path, load_json(path), sha256=sha256_file(path))
    else:
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            code = cli_main(["ingest", "longmemeval", path, "--db", str(Path(tmp) / "cli.duckdb"), "--no-embed",
                             "--quiet"])
        notes = [ln.strip()[2:] for ln in out.getvalue().splitlines() if ln.strip().startswith("- ")]
        row = {"exit_code": code, "release": next((n for n in notes if n.startswith("release:")), None)}
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu0
    if mode != "cli":
        row = {"questions": len(b.questions), "unique_sessions": len(b.sessions), "turns": len(b.turns),
               "haystack_entries": b.extra["haystack_entries"],
               "unique_text_mb": round(sum(len(t.text.encode()) for t in b.turns) / 1e6, 1)}
    return {"peak_rss_mb": _rss_mb(), "rss_after_imports_mb": rss_imports, "seconds": round(wall, 1),
            "cpu_s": round(cpu, 1), **row}


def run_child(mode: str, path: Path, tmp: Path) -> dict[str, Any]:
    load0 = os.getloadavg()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run([sys.executable, "-m", "bench.speed.bench_stream", "--child", mode, str(path), str(tmp)], env=env,
                          capture_output=True, text=True, cwd=ROOT)
    if proc.returncode != 0:
        return {"error": proc.stderr.strip().splitlines()[-1:] or [f"exit {proc.returncode}"]}
    res = json.loads(proc.stdout.strip().splitlines()[-1])
    return {**res, "loadavg_start": [round(x, 2) for x in load0], "loadavg_end": [round(x, 2) for x in os.getloadavg()]}


# -- parent: files of growing size ------------------------------------------------------------------
def block(sessions: int, seed: int) -> list[tuple[str, str]]:
    """dev50 padded to ``sessions`` per haystack: (question id, the item's JSON without its id)."""
    from bench.lib.haystacks import padded  # the padding bench_msize.py measures with

    with gzip.open(DEV50) as fh:
        data = json.load(fh)
    items = padded(data, len(data), sessions, seed)
    return [(it["question_id"], json.dumps({k: v for k, v in it.items() if k != "question_id"})) for it in items]


def write_file(path: Path, items: list[tuple[str, str]], rounds: int) -> int:
    """``rounds`` copies of ``items``, question ids renamed; returns the bytes written."""
    with open(path, "w", encoding="utf-8") as fh:
        fh.write("[")
        for r in range(rounds):
            for i, (qid, body) in enumerate(items):
                fh.write(("" if r == i == 0 else ", ") + '{"question_id": ' + json.dumps(f"r{r}_{qid}") + ", "
                         + body[1:])
        fh.write("]")
    return path.stat().st_size


def mem_available() -> int:
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemAvailable:"):
            return int(line.split()[1]) * 1024
    return 0


def measure(name: str, path: Path, tmp: Path, old_max: float, built: dict[str, Any] | None) -> dict[str, Any]:
    size = path.stat().st_size
    row: dict[str, Any] = {"input": name, "bytes": size, "gib": round(size / GIB, 2), **(built or {})}
    row["new"] = run_child("new", path, tmp)
    print(f"{name}: new {row['new']}", file=sys.stderr)
    avail = mem_available()
    if size <= old_max * GIB and avail >= 8 * size:
        row["old"] = run_child("old", path, tmp)
        print(f"{name}: old {row['old']}", file=sys.stderr)
    else:
        row["old"] = {"skipped": f"{size / GIB:.2f} GiB file; whole-file parse run only up to {old_max} GiB and "
                                 f"with 8x the file free ({avail / GIB:.1f} GiB available)"}
    row["cli"] = run_child("cli", path, tmp)
    (tmp / "cli.duckdb").unlink(missing_ok=True)
    print(f"{name}: cli {row['cli']}", file=sys.stderr)
    return row


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", default="1,4,11", help="copies of the padded 50-question block per file")
    ap.add_argument("--sessions", type=int, default=500)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--old-max-gib", type=float, default=1.2)
    ap.add_argument("--tmp", default=None, help="folder for the temp files (default: the system temp folder)")
    ap.add_argument("--out", default=str(ROOT / "bench" / "out" / "stream.json"))
    ap.add_argument("--child", nargs=3, metavar=("MODE", "PATH", "TMP"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        print(json.dumps(child(*args.child)))
        return 0
    import ijson

    from bench.lib.git_commit import commit

    rounds = [int(r) for r in args.rounds.split(",")]
    result: dict[str, Any] = {
        "benchmark": "stream", "commit": commit(), "ijson": {"version": ijson.__version__, "backend": ijson.backend},
        "cpu_count": os.cpu_count(), "mem_available_gib_start": round(mem_available() / GIB, 1),
        "loadavg_start": [round(x, 2) for x in os.getloadavg()],
        "construction": {"source": DEV50.name, "sessions_per_haystack": args.sessions, "seed": args.seed,
                         "rounds": rounds, "how": "dev50's 50 questions padded by bench_msize.padded, written "
                                                  "`rounds` times with renamed question ids (r<round>_<id>)"},
        "rows": [],
    }
    tmp = Path(tempfile.mkdtemp(prefix="bfr_stream_", dir=args.tmp))
    try:
        result["rows"].append(measure("dev50 (as shipped, gzip)", DEV50, tmp, args.old_max_gib, None))
        items = block(args.sessions, args.seed)
        per_round = sum(len(body) for _, body in items)
        for r in rounds:
            need = per_round * r * 1.02 + 2 * GIB
            free = shutil.disk_usage(tmp).free
            if free < need:
                result["rows"].append({"input": f"{r} round(s)", "skipped": f"{free / GIB:.1f} GiB free, {need / GIB:.1f} needed"})
                continue
            path = tmp / "lme_m_like.json"
            start = time.perf_counter()
            write_file(path, items, r)
            built = {"rounds": r, "questions": 50 * r, "build_s": round(time.perf_counter() - start, 1)}
            try:
                result["rows"].append(measure(f"{r} round(s) of dev50 padded to {args.sessions}", path, tmp,
                                              args.old_max_gib, built))
            finally:
                path.unlink(missing_ok=True)
        del items
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    result["loadavg_end"] = [round(x, 2) for x in os.getloadavg()]
    Path(args.out).write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    for row in result["rows"]:  # one line per file: peak RSS (MB) of each path
        peaks = {m: row.get(m, {}).get("peak_rss_mb", "-") for m in ("new", "old", "cli")}
        print(f"{row['input']}: {row.get('bytes', 0):,} bytes, peak RSS MB {peaks}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
