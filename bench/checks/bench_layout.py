"""The layout of ``bench/`` counted: bench files per package and outside them, ``sys.path`` lines,
``noqa: E402``, imports of a bench script by bench code, test files importing bench code (and code
outside ``bench.lib``), for the work tree and for each git revision given (read with ``git show``).

    .venv/bin/python -m bench.checks.bench_layout [--rev REV ...]

Writes ``bench/out/bench_layout.json`` (one entry per revision, ``worktree`` for the files on disk).
Does not cover: whether each script runs (``--help`` of each).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

from bench.lib.git_commit import commit
from bench.lib.layout import bench_script_imports, counts, imports_in_tests

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "bench" / "out" / "bench_layout.json"


def _git(*args: str) -> str:
    return subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, text=True, check=True).stdout


def _wanted(path: str) -> bool:
    return path.endswith(".py") and (path.startswith("bench/") or path.startswith("tests/"))


def files_at(rev: str | None) -> dict[str, str]:
    """Repository path -> text of every bench and test Python file, at ``rev`` or on disk (tracked files)."""
    paths = [p for p in (_git("ls-tree", "-r", "--name-only", rev) if rev else _git("ls-files")).splitlines()
             if _wanted(p)]
    if rev:
        return {p: _git("show", f"{rev}:{p}") for p in paths}
    return {p: (ROOT / p).read_text(encoding="utf-8") for p in paths if (ROOT / p).exists()}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rev", action="append", default=[], help="a git revision to count beside the work tree")
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()
    result: dict[str, object] = {"benchmark": "bench_layout", "commit": commit(), "revisions": {}}
    for rev in [*args.rev, None]:
        files = files_at(rev)
        key = _git("rev-parse", "--short", rev).strip() if rev else "worktree"
        result["revisions"][key] = {**counts(files),
                                    "bench_script_imports_listed": bench_script_imports(files),
                                    "test_imports_outside_lib_listed": imports_in_tests(files, outside=True)}
        print(key, json.dumps(counts(files)), file=sys.stderr)
    args.out.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
