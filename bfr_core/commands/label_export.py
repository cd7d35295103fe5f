"""``bfr label-export``: label versions of both annotation tasks (sufficiency and answer correctness, in a
``task`` column, each with its item and the judges' labels or verdicts on it) to a CSV or JSONL file:
every annotator's, or with ``--annotator`` one annotator's own (no other's label, no run or arm behind
an item); ``--task`` keeps one task."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from bfr_core.errors import BfrError
from bfr_core.evaluation import labels
from bfr_core.evaluation.agreement import judge_labels
from bfr_core.evaluation.answer_labels import is_answer_item, judge_verdicts
from bfr_core.outfile import output_argument
from bfr_core.store import Store


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--db", required=True, help="DuckDB store file holding the labels")
    output_argument(p, "--out", required=True, help="output file; .csv or .jsonl chooses the format")
    p.add_argument("--force", action="store_true", help="replace --out if it exists (never a DuckDB file)")
    p.add_argument("--annotator", default=None, metavar="NAME",
                   help="only NAME's labels, without the runs and arms behind the items (what Annotate gives "
                        "an annotator)")
    p.add_argument("--task", choices=("all", "sufficiency", "answer"), default="all",
                   help="which annotation task's labels (default: both, told apart by the task column)")


def run(args: argparse.Namespace) -> int:
    if not Path(args.db).exists():
        raise BfrError(f"store {args.db} does not exist")
    who = None if args.annotator is None else args.annotator.strip()
    if who == "":
        raise BfrError("--annotator names nobody; give the annotator's name as Annotate saved it")
    store = Store(args.db, read_only=True)
    try:
        tasks = tuple(labels.TASKS.values()) if args.task == "all" else (labels.task_named(args.task),)
        n = labels.export(store, args.out, force=args.force, annotator=who, tasks=tasks,
                          judges=lambda i: judge_verdicts(store, i) if is_answer_item(i) else judge_labels(store, i))
    finally:
        store.close()
    print(f"wrote {n} label rows to {args.out}", file=sys.stderr)
    return 0
