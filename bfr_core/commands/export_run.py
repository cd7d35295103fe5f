"""``bfr export-run RUN --db DB --format trec|jsonl [--arm A] [--out FILE] [--qrels FILE] [--force]``.

Writes a run's arms as a TREC run (``qid Q0 docid rank score tag``, tag = arm) or our JSONL, and the
dataset's gold as TREC qrels, so ranx, ir_measures or trec_eval can score any run. Each arm's ids
are its evidence set in order; scores are the arm's own when its last step carried them, else
``n .. 1``. Both files go through ``outfile`` (never the store or its log, an existing file only
with ``--force``), checked before the store is read.
"""

from __future__ import annotations

import argparse
import io
import sys
from pathlib import Path

from bfr_core.errors import BfrError
from bfr_core.evaluation.imported import export_rows, gold_rows
from bfr_core.evaluation.runfiles import write_jsonl, write_qrels, write_trec
from bfr_core.outfile import check_output, output_argument, write_output
from bfr_core.store import Store


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("run", metavar="RUN", help="run id")
    p.add_argument("--db", required=True, help="DuckDB store file")
    p.add_argument("--format", dest="fmt", default="trec", help="trec | jsonl (default trec)")
    p.add_argument("--arm", action="append", default=None, help="only this arm (repeatable; default all)")
    output_argument(p, "--out", default=None, help="run file to write (default stdout)")
    output_argument(p, "--qrels", default=None, help="also write the gold turns as TREC qrels here")
    p.add_argument("--force", action="store_true", help="replace --out / --qrels if they exist (never a DuckDB file)")


def run(args: argparse.Namespace) -> int:
    writers = {"trec": write_trec, "jsonl": write_jsonl}
    if args.fmt not in writers:
        raise BfrError(f"unknown format '{args.fmt}'; choose trec or jsonl")
    if not Path(args.db).exists():
        raise BfrError(f"store {args.db} does not exist")
    outputs = [(o, path) for o, path in (("--out", args.out), ("--qrels", args.qrels)) if path]
    for option, path in outputs:  # before any work
        check_output(path, option=option, store=args.db, force=args.force)
    if len(outputs) == 2 and Path(args.out).resolve() == Path(args.qrels).resolve():
        raise BfrError(f"--out and --qrels both name {args.out}; name two files")
    store = Store(args.db, read_only=True)
    try:
        rows = list(export_rows(store, args.run, args.arm))
        gold = gold_rows(store, args.run) if args.qrels else []
    finally:
        store.close()
    text = _render(writers[args.fmt], rows)
    if args.out:
        write_output(args.out, text, option="--out", store=args.db, force=args.force)
    else:
        sys.stdout.write(text)
    if args.qrels:
        write_output(args.qrels, _render(write_qrels, gold), option="--qrels", store=args.db, force=args.force)
    return 0


def _render(writer, items) -> str:  # noqa: ANN001 - one of runfiles' writers and its items
    buf = io.StringIO()
    writer(buf, items)
    return buf.getvalue()
