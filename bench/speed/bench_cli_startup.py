"""What starting the ``bfr`` command line costs, and how many imports in ``bfr_core`` sit inside functions.

For one checkout (``--code``, default this one) it runs, each in a fresh interpreter and ``--repeat``
times (the median is kept): ``import bfr_core.cli``, ``bfr --help`` and ``bfr <command> --help`` for
every command. For each it records the wall seconds, how many modules were loaded and which heavy ones
(torch, sentence_transformers, spacy, llama_cpp, ray, streamlit, matplotlib, plotly, nltk,
transformers). It adds ``python -X importtime -c "import bfr_core.cli"``'s ten largest cumulative
entries, and the count of function-local imports in ``bfr_core`` (an ast walk: imports inside a
function, method or lambda). Writes ``--out`` (default ``bench/out/cli_startup.json``), one entry per
``--label``.

    .venv/bin/python -m bench.speed.bench_cli_startup --label after
    .venv/bin/python -m bench.speed.bench_cli_startup --code /tmp/old_checkout --label before
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
HEAVY = ("torch", "sentence_transformers", "transformers", "spacy", "llama_cpp", "ray", "streamlit",
         "matplotlib", "plotly", "nltk")
PROBE = """
import contextlib, io, json, sys, time
t = time.perf_counter()
import bfr_core.cli
argv = {argv!r}
if argv is not None:
    with contextlib.redirect_stdout(io.StringIO()):
        try:
            from bfr_core.cli import main
            main(argv)
        except SystemExit:
            pass
dt = time.perf_counter() - t
print(json.dumps({{"seconds": dt, "modules": len(sys.modules),
                  "heavy": sorted(m for m in {heavy!r} if m in sys.modules)}}))
"""


def probe(code: Path, argv: list[str] | None, repeat: int) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(code)}
    runs = []
    for _ in range(repeat):
        out = subprocess.run([sys.executable, "-c", PROBE.format(argv=argv, heavy=HEAVY)], capture_output=True,
                             text=True, env=env, cwd=code, check=True).stdout
        runs.append(json.loads(out.strip().splitlines()[-1]))
    return {"seconds_median": round(statistics.median(r["seconds"] for r in runs), 3),
            "modules": runs[-1]["modules"], "heavy": runs[-1]["heavy"]}


def importtime_top(code: Path, n: int = 10) -> list[dict[str, Any]]:
    env = {**os.environ, "PYTHONPATH": str(code)}
    err = subprocess.run([sys.executable, "-X", "importtime", "-c", "import bfr_core.cli"], capture_output=True,
                         text=True, env=env, cwd=code, check=True).stderr
    rows = []
    for line in err.splitlines():
        parts = line.split("|")
        if len(parts) == 3 and parts[0].startswith("import time:") and parts[1].strip().isdigit():
            rows.append({"module": parts[2].strip(), "self_us": int(parts[0].split(":")[1]),
                         "cumulative_us": int(parts[1])})
    return sorted(rows, key=lambda r: -r["cumulative_us"])[:n]


def local_imports(package: Path) -> dict[str, int]:
    counts: dict[str, int] = {}

    def visit(node: ast.AST, inside: bool, rel: str) -> None:
        for child in ast.iter_child_nodes(node):
            if inside and isinstance(child, ast.Import | ast.ImportFrom):
                counts[rel] = counts.get(rel, 0) + 1
            visit(child, inside or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda), rel)

    for path in sorted(package.rglob("*.py")):
        if "__pycache__" not in path.parts:
            visit(ast.parse(path.read_text(encoding="utf-8")), False, str(path.relative_to(package.parent)))
    return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


def commit(code: Path) -> str:
    try:
        return subprocess.run(["git", "-C", str(code), "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--code", type=Path, default=ROOT, help="the checkout to measure (default this one)")
    ap.add_argument("--label", required=True)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "out" / "cli_startup.json")
    args = ap.parse_args()
    code = args.code.resolve()
    commands = json.loads(subprocess.run(
        [sys.executable, "-c", "import json, bfr_core.cli as c; print(json.dumps(sorted(c.COMMANDS)))"],
        capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(code)}, cwd=code, check=True).stdout)
    per_file = local_imports(code / "bfr_core")
    entry = {
        "code": str(code), "commit": commit(code), "python": sys.version.split()[0], "repeat": args.repeat,
        "function_local_imports": sum(per_file.values()), "function_local_imports_by_file": per_file,
        "import_bfr_core_cli": probe(code, None, args.repeat),
        "bfr_help": probe(code, ["--help"], args.repeat),
        "command_help": {c: probe(code, [c, "--help"], args.repeat) for c in commands},
        "importtime_top": importtime_top(code),
    }
    data = json.loads(args.out.read_text()) if args.out.exists() else {}
    data[args.label] = entry
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(data, indent=1) + "\n")
    print(json.dumps({k: entry[k] for k in ("function_local_imports", "import_bfr_core_cli", "bfr_help")}, indent=1))


if __name__ == "__main__":
    main()
