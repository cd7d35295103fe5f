"""``bfr suspect-keys --db DB --dataset D [--overlay NAME] [--out FILE] [--json FILE]``.

Flags answer-key entries that look wrong from the text alone (``evaluation.suspect_keys``), each with
its check and reason. ``--overlay NAME`` scores the flags against an ingested overlay (precision;
recall of WRONG_CITATION + HALLUCINATION; by error type). ``--out FILE`` writes the flags in the
overlay format (``docs/answers.md``: ``question_id``, ``error_type`` = ``SUSPECT_<CHECK>``,
``reasoning``, the key's answer and evidence), for a person to confirm or correct and then ingest
with ``bfr ingest overlay``. Prints a JSON summary.
"""

from __future__ import annotations

import argparse
import json

from bfr_core.commands.jsonout import add_force, emit, open_store
from bfr_core.errors import BfrError
from bfr_core.evaluation.overlay import load_overlay
from bfr_core.evaluation.suspect_keys import as_overlay, score_flags, suspect_keys
from bfr_core.outfile import check_output, output_argument, write_output


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_force(p)
    p.add_argument("--db", required=True, help="DuckDB store holding the dataset")
    p.add_argument("--dataset", required=True, help="the dataset whose key to check")
    p.add_argument("--overlay", default=None, help="score the flags against this ingested overlay")
    output_argument(p, "--out", default=None, help="write the flags to this file in the overlay format")
    output_argument(p, "--json", default=None, help="also write the summary to this file")


def run(args: argparse.Namespace) -> int:
    if args.out:
        check_output(args.out, option="--out", store=args.db, force=args.force)
    store = open_store(args.db, args.json, args.force)
    try:
        if store.dataset(args.dataset) is None:
            raise BfrError(f"no dataset '{args.dataset}' in {args.db}")
        qids = [q.question_id for q in store.questions(args.dataset) if q.scoreable]
        flags = suspect_keys(store, args.dataset, qids)
        out: dict = {"dataset": args.dataset, "questions": len(qids), "flags": len(flags),
                     "flagged_questions": len({f.question_id for f in flags})}
        if args.overlay:
            findings = {q: f.error_type for q, f in load_overlay(store, args.dataset, args.overlay).items()}
            out["against_overlay"] = {"overlay": args.overlay, **score_flags(flags, findings, qids)}
        if args.out:
            records = as_overlay(flags, {q.question_id: q for q in store.questions(args.dataset)})
            write_output(args.out, json.dumps(records, indent=2) + "\n", option="--out", store=args.db,
                         force=args.force)
            out["written"] = {"path": args.out, "records": len(records)}
    finally:
        store.close()
    emit(json.dumps(out, indent=2), args.json, args.db, args.force)
    return 0
