"""``bfr export-run RUN --db DB --format trec|jsonl [--arm A] [--out FILE] [--qrels FILE]``.

Writes a run's arms as a TREC run (``qid Q0 docid rank score tag``, tag = arm) or our JSONL, and the
dataset's gold as TREC qrels, so ranx, ir_measures or trec_eval can score any run. Each arm's ids
are its evidence set in order; scores are the arm's own when its last step carried them, else
``n .. 1``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from bfr_core.errors import BfrError


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("run", metavar="RUN", help="run id")
    p.add_argument("--db", required=True, help="DuckDB store file")
    p.add_argument("--format", dest="fmt", default="trec", help="trec | jsonl (default trec)")
    p.add_argument("--arm", action="append", default=None, help="only this arm (repeatable; default all)")
    p.add_argument("--out", default=None, help="run file to write (default stdout)")
    p.add_argument("--qrels", default=None, help="also write the gold turns as TREC qrels here")


def run(args: argparse.Namespace) -> int:
    from bfr_core.evaluation.imported import export_rows, gold_rows
    from bfr_core.evaluation.runfiles import write_jsonl, write_qrels, write_trec
    from bfr_core.store import Store

    writers = {"trec": write_trec, "jsonl": write_jsonl}
    if args.fmt not in writers:
        raise BfrError(f"unknown format '{args.fmt}'; choose trec or jsonl")
    if not Path(args.db).exists():
        raise BfrError(f"store {args.db} does not exist")
    store = Store(args.db, read_only=True)
    try:
        rows = list(export_rows(store, args.run, args.arm))
        gold = gold_rows(store, args.run) if args.qrels else []
    finally:
        store.close()
    text = _render(writers[args.fmt], rows)
    if args.out:
        Path(args.out).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    if args.qrels:
        Path(args.qrels).write_text(_render(write_qrels, gold), encoding="utf-8")
    return 0


def _render(writer, items) -> str:  # noqa: ANN001 - one of runfiles' writers and its items
    import io

    buf = io.StringIO()
    writer(buf, items)
    return buf.getvalue()
