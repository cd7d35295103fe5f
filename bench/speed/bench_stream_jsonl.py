"""Peak memory of reading JSON Lines: ``bfr ingest jsonl`` and ``bfr import-run``, this code against the
landed code (``BFR_BASELINE``: a folder holding bfr_core, default /work/main, or a git commit of this
repository, whose tree is exported to a temporary folder), on generated files; writes
bench/out/stream_jsonl.json.

Files (generated here, deterministic): a conversation file of ``SIZES_MB`` megabytes (sessions of 10
turns of ~300 characters, one question per 10 sessions) ingested with ``--no-embed``; and a run file
of ``RUN_MB`` megabytes holding ``SYSTEMS`` systems' rankings of a small dataset's questions, imported
with ``--tag`` (one system kept), and, with this code, a file of that system's lines alone (the peak
that the kept rankings, not the file, account for). Each command is its own process; its peak resident memory is the
``ru_maxrss`` of a wrapper's only child. Reported per size: peak MB of each code, and the slope (MB of
peak per MB of file) between the two sizes, which is what decides a 1 GB file. A 1 GB file itself is
not run here (the machine's 2 cores are shared); the slope and the intercept say where it lands.

Usage: ``.venv/bin/python -m bench.speed.bench_stream_jsonl`` (a few minutes).
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "bench" / "out" / "stream_jsonl.json"
BASELINE = os.environ.get("BFR_BASELINE", "/work/main")
SIZES_MB = (16, 64)
RUN_MB = 64
SYSTEMS = 8
WORDS = ("camera tripod lens trip museum dinner sister garden violin recipe marathon laptop meeting "
         "birthday flight hotel doctor puppy bakery concert").split()


def conversations(path: Path, mb: int) -> Path:
    rng = random.Random(mb)
    with open(path, "w", encoding="utf-8") as f:
        n = 0
        while f.tell() < mb * 1_000_000:
            sid = f"s{n}"
            turns = [{"speaker": "user" if i % 2 == 0 else "assistant",
                      "text": " ".join(rng.choice(WORDS) for _ in range(45))} for i in range(10)]
            f.write(json.dumps({"type": "session", "session_id": sid, "scope": f"c{n // 50}",
                                "date": "2024-03-01T10:00", "turns": turns}) + "\n")
            if n % 10 == 0:
                f.write(json.dumps({"type": "question", "question_id": f"q{n}", "scope": f"c{n // 50}",
                                    "question": "What did I buy?", "answer": "a tripod", "gold": [f"{sid}_1"]}) + "\n")
            n += 1
    return path


def small_dataset(path: Path, questions: int) -> Path:
    with open(path, "w", encoding="utf-8") as f:
        for s in range(20):
            f.write(json.dumps({"type": "session", "session_id": f"s{s}", "turns": [
                {"speaker": "user", "text": f"turn {s} {i} " + WORDS[(s + i) % len(WORDS)]} for i in range(10)]}) + "\n")
        for q in range(questions):
            f.write(json.dumps({"type": "question", "question_id": f"q{q}", "question": "What?", "answer": "x",
                                "gold": [f"s{q % 20}_1"]}) + "\n")
    return path


def run_file(path: Path, questions: int) -> Path:
    """``SYSTEMS`` systems' rankings (100 ids each) of every question, system after system."""
    ids = [f"s{s}_{i + 1}" for s in range(20) for i in range(10)]
    rng = random.Random(7)
    with open(path, "w", encoding="utf-8") as f:
        for system in range(SYSTEMS):
            for q in range(questions):
                f.write(json.dumps({"question_id": f"q{q}", "system": f"sys{system}",
                                    "ranking": rng.sample(ids, 100)}) + "\n")
    return path


def peak_mb(code: Path, *args: str) -> tuple[float, float]:
    """(peak resident MB, seconds) of ``bfr ARGS`` run with ``code`` on PYTHONPATH."""
    wrapper = ("import resource, subprocess, sys; r = subprocess.run(sys.argv[1:], capture_output=True, text=True); "
               "sys.stderr.write(r.stderr[-2000:]) if r.returncode else None; "
               "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, r.returncode)")
    env = {**os.environ, "PYTHONPATH": str(code)}
    t0 = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", wrapper, sys.executable, "-m", "bfr_core.cli", *args], cwd=code,
                          env=env, capture_output=True, text=True, timeout=7200)
    kb, rc = done.stdout.split()
    if rc != "0":
        raise SystemExit(f"bfr {' '.join(args[:2])} with {code} failed: {done.stderr[-1500:]}")
    return round(int(kb) / 1024, 1), round(time.perf_counter() - t0, 1)


def slope(points: list[tuple[float, float]]) -> float:
    (x0, y0), (x1, y1) = points[0], points[-1]
    return round((y1 - y0) / (x1 - x0), 2)


def baseline_code(tmp: Path) -> tuple[Path, str]:
    """(folder, commit) of ``BFR_BASELINE``: a folder as given, or a commit's tree exported under ``tmp``."""
    if Path(BASELINE).is_dir():
        done = subprocess.run(["git", "-C", BASELINE, "rev-parse", "HEAD"], capture_output=True, text=True)
        return Path(BASELINE), done.stdout.strip()
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", BASELINE], capture_output=True, text=True,
                            check=True).stdout.strip()
    folder = tmp / "baseline"
    folder.mkdir()
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", commit], capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(folder)], input=archive, check=True)
    return folder, commit


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="bench-stream-") as d:
        tmp = Path(d)
        base, commit = baseline_code(tmp)
        codes = {"this": ROOT, "baseline": base}
        result: dict = {"baseline_code": BASELINE, "baseline_commit": commit, "ingest_jsonl": {}, "import_run": {}}
        for mb in SIZES_MB:
            f = conversations(tmp / f"conv{mb}.jsonl", mb)
            row = {"file_mb": round(f.stat().st_size / 1e6, 1)}
            for name, code in codes.items():
                db = tmp / f"{name}{mb}.duckdb"
                row[name] = dict(zip(("peak_mb", "seconds"), peak_mb(code, "ingest", "jsonl", str(f), "--db", str(db),
                                                                      "--no-embed", "--quiet"), strict=True))
                db.unlink()
            result["ingest_jsonl"][f"{mb}MB"] = row
        sizes = list(result["ingest_jsonl"].values())  # the rows per size, before the slopes join them
        for name in codes:
            pts = [(r["file_mb"], r[name]["peak_mb"]) for r in sizes]
            result["ingest_jsonl"][f"{name}_peak_mb_per_file_mb"] = slope(pts)
            result["ingest_jsonl"][f"{name}_projected_1GB_peak_mb"] = round(
                pts[-1][1] + slope(pts) * (1000 - pts[-1][0]))
        questions = int(RUN_MB * 1e6 / SYSTEMS / 1000)  # a ranking line is about 1 kB
        data = small_dataset(tmp / "small.jsonl", questions)
        rf = run_file(tmp / "run.jsonl", questions)
        result["import_run"]["file_mb"] = round(rf.stat().st_size / 1e6, 1)
        result["import_run"]["systems_in_file"] = SYSTEMS
        for name, code in codes.items():
            db = tmp / f"imp-{name}.duckdb"
            subprocess.run([sys.executable, "-m", "bfr_core.cli", "ingest", "jsonl", str(data), "--db", str(db),
                            "--name", "small", "--no-embed", "--quiet"], cwd=code, env={**os.environ,
                           "PYTHONPATH": str(code)}, check=True, capture_output=True)
            result["import_run"][name] = dict(zip(("peak_mb", "seconds"), peak_mb(
                code, "import-run", str(rf), "--db", str(db), "--dataset", "small", "--name", "theirs",
                "--tag", "sys3"), strict=True))
        one = tmp / "run_one_system.jsonl"  # the kept system's lines alone: what the import holds whatever the file
        with open(rf, encoding="utf-8") as src, open(one, "w", encoding="utf-8") as dst:
            dst.writelines(line for line in src if json.loads(line)["system"] == "sys3")
        db = tmp / "imp-one.duckdb"
        subprocess.run([sys.executable, "-m", "bfr_core.cli", "ingest", "jsonl", str(data), "--db", str(db), "--name",
                        "small", "--no-embed", "--quiet"], cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)},
                       check=True, capture_output=True)
        result["import_run"]["this_one_system_file"] = {"file_mb": round(one.stat().st_size / 1e6, 1), **dict(zip(
            ("peak_mb", "seconds"), peak_mb(ROOT, "import-run", str(one), "--db", str(db), "--dataset", "small",
                                            "--name", "theirs", "--tag", "sys3"), strict=True))}
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
