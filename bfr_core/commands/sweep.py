"""``bfr sweep``: BFR-Text / BFR-MV over the budget grid C0..C9 -> frontier JSON + plotly figure."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from bfr_core.errors import BfrError
from bfr_core.evaluation.sweep import PAPER_POINTS, output_paths, sweep, write_outputs
from bfr_core.method.budgets import NAMES
from bfr_core.outfile import check_output, output_argument
from bfr_core.progress import tqdm_progress
from bfr_core.store import Store


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--db", required=True, help="DuckDB store file")
    p.add_argument("--benchmark", default=None, help="locomo | longmemeval (the dataset of that name)")
    p.add_argument("--dataset", default=None, help="any dataset name in the store")
    p.add_argument("--arms", default="bfr-text,bfr-mv", help="comma-separated: bfr-text,bfr-mv")
    p.add_argument("--budgets", default="", help="grid points, e.g. C0,C3,C6 (default: all C0..C9)")
    p.add_argument("--paper-points", action="store_true", help="only Table 16's points C0,C1,C2,C3,C4,C6,C9")
    p.add_argument("--limit", type=int, default=None, help="only the first N scoreable questions")
    output_argument(p, "--out", kind="folder", required=True, help="output directory (frontier.json, .html, .png)")
    p.add_argument("--no-png", action="store_true", help="skip the PNG (kaleido starts a browser: ~3 s)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument("--force", action="store_true", help="replace frontier files already in --out")


def run(args: argparse.Namespace) -> int:
    dataset = args.dataset or args.benchmark
    if not dataset:
        raise BfrError("name the data with --benchmark locomo|longmemeval or --dataset NAME")
    if args.limit is not None and args.limit < 1:
        raise BfrError(f"--limit {args.limit}: needs a positive number")
    for path in output_paths(args.out, png=not args.no_png):  # before any work
        check_output(path, option="--out", store=args.db, force=args.force)
    if not Path(args.db).exists():
        raise BfrError(f"store {args.db} does not exist; create it with `bfr ingest ... --db {args.db}`")
    store = Store(args.db, read_only=True)
    if store.dataset(dataset) is None:
        raise BfrError(f"dataset '{dataset}' is not in {args.db}; ingest it first")
    arms = [a.strip() for a in args.arms.split(",") if a.strip()]
    if args.budgets:
        budgets = [b.strip().upper() for b in args.budgets.split(",") if b.strip()]
    else:
        budgets = list(PAPER_POINTS if args.paper_points else NAMES)
    result = sweep(store, dataset, arms=arms, budgets=budgets, limit=args.limit,
                   progress=None if args.quiet else tqdm_progress(f"sweep {dataset}"))
    written = write_outputs(result, args.out, png=not args.no_png, store=args.db, force=args.force)
    print(_table(result), file=sys.stdout)
    for kind, path in written.items():
        print(f"{kind}: {path}", file=sys.stderr)
    return 0


def _table(result: dict) -> str:
    def f(v: float | None, spec: str) -> str:
        return format("-", f">{spec.split('.')[0]}") if v is None else format(v, spec)
    lines = [f"{result['benchmark']}: {result['n_questions']} questions",
             f"{'arm':9} {'budget':6} {'calls':>6} {'paper':>6} {'size':>6} {'paper':>6} "
             f"{'GoldHit':>7} {'ER':>6} {'CER':>6}"]
    for p in result["points"]:
        lines.append(f"{p['arm']:9} {p['budget']:6} {f(p['calls'], '6.2f')} {f(p['paper_calls'], '6.2f')} "
                     f"{f(p['size'], '6.2f')} {f(p['paper_size'], '6.2f')} {f(p['gold_hit'], '7.1f')} "
                     f"{f(p['er'], '6.1f')} {f(p['cer'], '6.1f')}")
    return "\n".join(lines)
