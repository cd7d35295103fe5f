"""``bfr report RUN``: paper-style Markdown tables with paired tests for a finished run."""

from __future__ import annotations

import argparse
from pathlib import Path

from bfr_core.errors import BfrError


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("run", help="run id (printed by bfr eval; see the runs table)")
    p.add_argument("--db", required=True, help="DuckDB store file")
    p.add_argument("--ref", default=None, help="reference arm for the paired tests (default mem0)")
    p.add_argument("--out", default=None, help="write the Markdown here (default stdout)")
    p.add_argument("--k", type=int, default=None, help="cut every arm's evidence set to its first K ids first")


def run(args: argparse.Namespace) -> int:
    from bfr_core.evaluation.report import report
    from bfr_core.store import Store

    if not Path(args.db).exists():
        raise BfrError(f"store {args.db} does not exist")
    if args.k is not None and args.k < 1:
        raise BfrError(f"--k must be at least 1, got {args.k}")
    text = report(Store(args.db), args.run, args.ref, args.k)
    if args.out:
        Path(args.out).write_text(text, encoding="utf-8")
    else:
        print(text)
    return 0
