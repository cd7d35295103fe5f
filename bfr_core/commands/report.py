"""``bfr report RUN``: paper-style Markdown tables with paired tests for a finished run, every arm
compared at one set size (``--k``, else the run's common size; ``--own-budgets`` opts out)."""

from __future__ import annotations

import argparse
from pathlib import Path

from bfr_core.errors import BfrError
from bfr_core.evaluation.judge_report import keys_markdown
from bfr_core.evaluation.report import report
from bfr_core.outfile import check_output, output_argument, write_output
from bfr_core.store import Store


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("run", help="run id (printed by bfr eval; see the runs table)")
    p.add_argument("--db", required=True, help="DuckDB store file")
    p.add_argument("--ref", default=None, help="reference arm for the paired tests (default mem0)")
    output_argument(p, "--out", default=None, help="write the Markdown here (default stdout)")
    p.add_argument("--force", action="store_true", help="replace --out if it exists (never a DuckDB file)")
    p.add_argument("--k", type=int, default=None,
                   help="cut every arm's evidence set to its first K ids first (default: the run's common size, "
                        "the smallest arm's largest set)")
    p.add_argument("--own-budgets", action="store_true",
                   help="compare each arm at its own set size (not an equal-budget comparison; the report says so)")


def run(args: argparse.Namespace) -> int:
    if not Path(args.db).exists():
        raise BfrError(f"store {args.db} does not exist")
    if args.k is not None and args.k < 1:
        raise BfrError(f"--k must be at least 1, got {args.k}")
    if args.k is not None and args.own_budgets:
        raise BfrError("--k and --own-budgets exclude each other: one cuts every set to K, the other cuts none")
    if args.out:
        check_output(args.out, option="--out", store=args.db, force=args.force)  # before any work
    store = Store(args.db, read_only=True)
    text = report(store, args.run, args.ref, args.k, own_budgets=args.own_budgets)
    text += keys_markdown(store, args.run, args.k, own_budgets=args.own_budgets)  # under each key, where an overlay exists
    if args.out:
        write_output(args.out, text, option="--out", store=args.db, force=args.force)
    else:
        print(text)
    return 0
