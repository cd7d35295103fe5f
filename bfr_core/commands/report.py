"""``bfr report RUN``: paper-style Markdown tables with paired tests for a finished run."""

from __future__ import annotations

import argparse
from pathlib import Path

from bfr_core.errors import BfrError


def add_arguments(p: argparse.ArgumentParser) -> None:
    from bfr_core.outfile import output_argument

    p.add_argument("run", help="run id (printed by bfr eval; see the runs table)")
    p.add_argument("--db", required=True, help="DuckDB store file")
    p.add_argument("--ref", default=None, help="reference arm for the paired tests (default mem0)")
    output_argument(p, "--out", default=None, help="write the Markdown here (default stdout)")
    p.add_argument("--force", action="store_true", help="replace --out if it exists (never a DuckDB file)")
    p.add_argument("--k", type=int, default=None, help="cut every arm's evidence set to its first K ids first")


def run(args: argparse.Namespace) -> int:
    from bfr_core.evaluation.report import report
    from bfr_core.outfile import check_output, write_output
    from bfr_core.store import Store

    if not Path(args.db).exists():
        raise BfrError(f"store {args.db} does not exist")
    if args.k is not None and args.k < 1:
        raise BfrError(f"--k must be at least 1, got {args.k}")
    if args.out:
        check_output(args.out, option="--out", store=args.db, force=args.force)  # before any work
    text = report(Store(args.db, read_only=True), args.run, args.ref, args.k)
    if args.out:
        write_output(args.out, text, option="--out", store=args.db, force=args.force)
    else:
        print(text)
    return 0
