"""``bfr judges RUN [RUN ...] --db DB [--key KEY ...] [--known-wrong ARM,...] [--json FILE]``.

The judge report (``evaluation.judge_report``): per judge, accept rate per system, question type and
answer length, undecided rate, false accepts on the systems named ``--known-wrong`` (answers written
to be wrong), pairwise agreement and Cohen's kappa, agreement with human labels; under the original
key and every ``--key`` overlay (default: every overlay ingested on the runs' datasets). Prints JSON.
"""

from __future__ import annotations

import argparse
import json

from bfr_core.commands.jsonout import add_force, emit, open_store
from bfr_core.errors import BfrError
from bfr_core.evaluation.judge_report import judge_report
from bfr_core.evaluation.overlay import overlay_names
from bfr_core.outfile import output_argument
from bfr_core.runs import run_row


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_force(p)
    p.add_argument("run_ids", metavar="RUN", nargs="+", help="the runs whose verdicts to report")
    p.add_argument("--db", required=True, help="DuckDB store holding the runs")
    p.add_argument("--key", action="append", default=None,
                   help="an overlay to report under besides the original key (repeatable; default: all)")
    p.add_argument("--known-wrong", default="", help="comma-separated systems whose every answer is wrong")
    output_argument(p, "--json", default=None, help="also write the report to this file")


def run(args: argparse.Namespace) -> int:
    store = open_store(args.db, args.json, args.force)
    try:
        datasets = set()
        for run_id in args.run_ids:
            row = run_row(store, run_id)
            if row is None:
                raise BfrError(f"no run '{run_id}' in {args.db}")
            datasets.add(row[0])
        keys = args.key if args.key is not None else sorted({o for d in datasets for o in overlay_names(store, d)})
        wrong = [a.strip() for a in args.known_wrong.split(",") if a.strip()]
        rep = judge_report(store, args.run_ids, ["original", *keys], known_wrong=wrong)
    finally:
        store.close()
    emit(json.dumps(rep, indent=2), args.json, args.db, args.force)
    return 0
