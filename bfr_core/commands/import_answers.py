"""``bfr import-answers FILE --db DB --dataset D --name SYSTEM``: another system's answers as an arm.

Formats (``--format``, default ``auto``): the ``eval_results.json`` shape of mem0-style harnesses,
LongMemEval's hypothesis JSONL, our JSONL (``docs/answers.md``). ``--run RUN`` adds the arm to an
existing run, otherwise a new run of the file's questions is made. Verdicts in the file are kept as a
named judge (``"gpt-4o-mini (imported)"``). Prints the run id, the arm and the counts as JSON; ``--json
FILE`` writes the same to a file.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from bfr_core.commands.jsonout import add_force, emit, open_store
from bfr_core.errors import BfrError
from bfr_core.evaluation.answer_import import import_answers
from bfr_core.evaluation.overlay import ingest_overlay
from bfr_core.ingest.common import check_file
from bfr_core.outfile import output_argument
from bfr_core.store import Store


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_force(p)
    p.add_argument("file", metavar="FILE", help="the answers file")
    p.add_argument("--db", required=True, help="DuckDB store holding the dataset")
    p.add_argument("--dataset", required=True, help="the dataset the answers answer")
    p.add_argument("--name", required=True, help="the arm name the system gets")
    p.add_argument("--format", dest="fmt", default="auto", help="auto | eval | lme | jsonl")
    p.add_argument("--run", default=None, help="add the arm to this existing run (default: a new run)")
    p.add_argument("--allow-missing", action="store_true",
                   help="keep the run's questions absent from the file as failed rows")
    p.add_argument("--judge-name", default=None,
                   help="the judge of the file's verdicts when its metadata does not name one")
    output_argument(p, "--json", default=None, help="also write the result to this file")


def run(args: argparse.Namespace) -> int:
    check_file(Path(args.file))
    store = open_store(args.db, args.json, args.force)
    try:
        rep = import_answers(store, args.file, dataset_id=args.dataset, name=args.name, fmt=args.fmt,
                             run_id=args.run, allow_missing=args.allow_missing,
                             judge_name=args.judge_name)
    finally:
        store.close()
    out = json.dumps({"run_id": rep.run_id, "arm": rep.arm, "format": rep.fmt, "answers": rep.answers,
                      "with_evidence": rep.with_evidence, "missing": rep.missing, "imported_judges": rep.judges},
                     indent=2)
    emit(out, args.json, args.db, args.force)
    return 0


def ingest_overlay_command(args: argparse.Namespace) -> int:
    """``bfr ingest overlay FILE --db DB --dataset D [--name audit] [--replace]``: an audited answer key
    (the locomo-audit ``errors.json`` format) over dataset D; prints what it holds as JSON."""
    check_file(Path(args.path))
    if not args.dataset:
        raise BfrError("bfr ingest overlay needs --dataset: the dataset whose answer key it corrects")
    if not Path(args.db).exists():
        raise BfrError(f"store {args.db} does not exist")
    store = Store(args.db)
    try:
        out = ingest_overlay(store, args.path, dataset_id=args.dataset, name=args.name or "audit",
                             replace=args.replace)
    finally:
        store.close()
    print(json.dumps(out, indent=2))
    return 0
