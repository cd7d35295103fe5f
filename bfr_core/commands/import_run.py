"""``bfr import-run FILE --db DB --dataset D --name SYSTEM``: another system's run as an arm of a run.

Formats (``--format``, default ``auto``): our JSONL (``docs/run-format.md``), a TREC run, LongMemEval's
retrieval log; see ``bfr_core.evaluation.runfiles``. ``--run RUN`` adds the arm to an existing run
(its questions; then ``bfr report RUN`` tests it against every other arm), otherwise a new run of
its own is made. ``--k K`` cuts each ranking to its first K items. Prints a few lines: the run id, what was read, the arm's mean set size
and retrieval figures (plus LongMemEval's official session / turn figures on a LongMemEval dataset)
and the ``bfr report`` line that compares it at one set size; ``--json`` prints all of it as JSON.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from bfr_core.errors import BfrError
from bfr_core.evaluation.imported import import_run, official_rows
from bfr_core.evaluation.metrics import aggregate
from bfr_core.evaluation.official import KEYS
from bfr_core.evaluation.summary import summarize
from bfr_core.ingest.common import check_file
from bfr_core.store import Store


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", metavar="FILE", help="the run file")
    p.add_argument("--db", required=True, help="DuckDB store holding the dataset")
    p.add_argument("--dataset", required=True, help="the dataset the run answers")
    p.add_argument("--name", required=True, help="the arm name the system gets")
    p.add_argument("--format", dest="fmt", default="auto", help="auto | jsonl | trec | lme")
    p.add_argument("--run", default=None, help="add the arm to this existing run (default: a new run)")
    p.add_argument("--k", type=int, default=None, help="cut each ranking to its first K items")
    p.add_argument("--tag", default=None, help="the system to read from a file holding several")
    p.add_argument("--allow-missing", action="store_true",
                   help="score the run's questions absent from the file as empty sets")
    p.add_argument("--replace", action="store_true", help="import again over an arm of the same name")
    p.add_argument("--json", action="store_true", help="print the run id, counts and the arm's whole summary as JSON")


def run(args: argparse.Namespace) -> int:
    check_file(Path(args.file))
    if not Path(args.db).exists():
        raise BfrError(f"store {args.db} does not exist")
    if args.k is not None and args.k < 1:
        raise BfrError(f"--k must be at least 1, got {args.k}")
    store = Store(args.db)
    try:
        rep = import_run(store, args.file, dataset_id=args.dataset, name=args.name, fmt=args.fmt, run_id=args.run,
                         k=args.k, tag=args.tag, allow_missing=args.allow_missing, replace=args.replace)
        summary = summarize(store, rep.run_id)["arms"][rep.arm]
        out = {"run_id": rep.run_id, "arm": rep.arm, "format": rep.fmt, "questions": rep.questions,
               "missing_scored_empty": rep.missing, "file_questions_outside_run": rep.skipped,
               "sessions_expanded": rep.expanded_sessions, "summary": summary}
        if store.dataset(args.dataset)["kind"] == "longmemeval":
            agg = aggregate(official_rows(store, rep.run_id, rep.arm), rates=KEYS, means=())["overall"]
            out["official"] = {k: None if agg[k] is None else round(agg[k], 2) for k in KEYS}
    finally:
        store.close()
    print(json.dumps(out, indent=2) if args.json else short_summary(out, args.db))
    return 0


def short_summary(out: dict, db: str) -> str:
    """What ``import-run`` prints without ``--json``: a few lines a person reads."""
    s = out["summary"]
    extra = [f"{out['missing_scored_empty']} missing (scored empty)"] if out["missing_scored_empty"] else []
    extra += [f"{out['file_questions_outside_run']} of the file's questions outside the run, skipped"
              ] if out["file_questions_outside_run"] else []
    figures = " · ".join(f"{name} {s[key]:.1f}" for key, name in (("gold_hit", "Gold Hit"), ("er", "ER"),
                                                                   ("cer", "CER"), ("turn_hit", "Turn Hit"))
                         if s.get(key) is not None)
    lines = [f"Imported '{out['arm']}' ({out['format']}) into run {out['run_id']}: {out['questions']} questions"
             + (f" ({'; '.join(extra)})" if extra else "") + ".",
             f"{out['arm']}: mean set size {s.get('mean_set_size')} · {figures or 'no question with gold turns'}"]
    if out.get("official"):
        lines.append("LongMemEval official: " + " · ".join(f"{k} {v}" for k, v in out["official"].items()))
    lines.append(f"Compare at one set size: bfr report {out['run_id']} --db {db} · every figure: --json")
    return "\n".join(lines)
