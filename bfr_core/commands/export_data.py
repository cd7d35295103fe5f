"""``bfr export-data DATASET --db DB --out FILE.jsonl [--blind] [--force]``.

Writes what each question of a stored dataset searches (``bfr_core.ingest.corpus``: one JSON line per
scope, its sessions and turns with the store's ids and dates, and its questions), so another system
runs on exactly the conversations the arms search and its run imports with ``bfr import-run``.
``--blind`` leaves out answers, gold, question types and source ids, and hashes every id
(``ingest.corpus.blind_id``; ``bfr import-run`` maps them back).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from bfr_core.errors import BfrError
from bfr_core.ingest.corpus import corpus_lines
from bfr_core.outfile import check_output, output_argument, write_output
from bfr_core.progress import tqdm_progress
from bfr_core.store import Store


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("dataset", metavar="DATASET", help="dataset id in the store")
    p.add_argument("--db", required=True, help="DuckDB store file")
    output_argument(p, "--out", required=True, help="JSON Lines file to write (one line per scope)")
    p.add_argument("--blind", action="store_true",
                   help="leave out what a method must not read: answers, gold, question types, source ids; "
                        "every id hashed (bfr import-run maps them back)")
    p.add_argument("--force", action="store_true", help="replace --out if it exists (never a DuckDB file)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")


def run(args: argparse.Namespace) -> int:
    if not Path(args.db).exists():
        raise BfrError(f"store {args.db} does not exist")
    check_output(args.out, option="--out", store=args.db, force=args.force)  # before any work
    store = Store(args.db, read_only=True)
    try:
        if store.dataset(args.dataset) is None:
            known = ", ".join(d["dataset_id"] for d in store.datasets()) or "none"
            raise BfrError(f"no dataset '{args.dataset}' in {args.db} (datasets: {known})")
        progress = None if args.quiet else tqdm_progress("export")
        text = "".join(corpus_lines(store, args.dataset, args.blind, progress))
        counts = store.counts(args.dataset)
    finally:
        store.close()
    write_output(args.out, text, option="--out", store=args.db, force=args.force)
    print(f"wrote {counts['scopes']:,} scopes ({counts['questions']:,} questions"
          f"{', blind' if args.blind else ''}) of '{args.dataset}' to {args.out}", file=sys.stderr)
    return 0
