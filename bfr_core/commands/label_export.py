"""``bfr label-export``: every sufficiency label version (with its item) to a CSV or JSONL file."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from bfr_core.errors import BfrError


def add_arguments(p: argparse.ArgumentParser) -> None:
    from bfr_core.outfile import output_argument

    p.add_argument("--db", required=True, help="DuckDB store file holding the labels")
    output_argument(p, "--out", required=True, help="output file; .csv or .jsonl chooses the format")
    p.add_argument("--force", action="store_true", help="replace --out if it exists (never a DuckDB file)")


def run(args: argparse.Namespace) -> int:
    from bfr_core.evaluation import labels
    from bfr_core.store import Store

    if not Path(args.db).exists():
        raise BfrError(f"store {args.db} does not exist")
    store = Store(args.db, read_only=True)
    try:
        n = labels.export(store, args.out, force=args.force)
    finally:
        store.close()
    print(f"wrote {n} label rows to {args.out}", file=sys.stderr)
    return 0
