"""``bfr ingest {locomo,longmemeval,jsonl,beam,locomo-plus} PATH --db DB [--name NAME] [--replace] [--no-embed]
[--executor ray [--ray-address ADDR]]``.

``beam`` reads a folder (one conversation, a tier, or the root); ``locomo-plus`` stitches into the
LoCoMo file named by ``--locomo`` (``--locomo-questions`` adds LoCoMo's own questions; ``--stitch
embedded`` puts each cue inside an existing session, a robustness variant).

Loads one benchmark file into a DuckDB store and prints the report (counts, questions by type,
notes on repaired or dropped gold ids). Bad input never leaves a partial dataset behind: all of the
file is parsed (a LongMemEval file streaming, one question at a time) before the single write
transaction. Errors are ``BfrError`` and are printed by
``bfr_core.cli`` as one line (exit 2).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import TextIO

from bfr_core.commands.import_answers import ingest_overlay_command
from bfr_core.errors import InputError
from bfr_core.evaluation.executors import make_executor
from bfr_core.ingest import FOLDER_KINDS, check_kind, ingest
from bfr_core.ingest.common import check_file
from bfr_core.progress import Progress, restarts, tqdm_progress
from bfr_core.records import IngestReport
from bfr_core.store import Store, removed_if_failed

KINDS_HELP = "locomo | longmemeval | jsonl | beam | locomo-plus | overlay (an audited key: --dataset D)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    # kind is checked by bfr_core.ingest (not argparse choices) so a wrong kind is a one-line error
    parser.add_argument("kind", metavar="KIND", help=f"input format: {KINDS_HELP}")
    parser.add_argument("path", metavar="PATH", help="benchmark file (.json, .json.gz or .jsonl); a folder for beam")
    parser.add_argument("--db", required=True, help="DuckDB store file (created if missing)")
    parser.add_argument("--name", default=None, help="dataset id (default: the kind; the file name for jsonl)")
    parser.add_argument("--replace", action="store_true", help="overwrite a dataset with the same id")
    parser.add_argument("--no-embed", dest="embed", action="store_false",
                        help="write now, compute vectors on first use (each conversation's on its first "
                             "search); the same command without it later computes the rest")
    parser.add_argument("--quiet", action="store_true", help="no progress bars")
    parser.add_argument("--dataset", default=None, help="overlay: the dataset whose key it corrects (its name: --name, "
                        "default 'audit')")
    parser.add_argument("--locomo", default=None, help="locomo-plus: the locomo10.json to stitch into")
    parser.add_argument("--executor", default="local", choices=("local", "ray"),
                        help="where MiniLM encodes: this machine's cores (default) or a Ray cluster")
    parser.add_argument("--ray-address", default=None,
                        help="Ray cluster to join (e.g. ray://head:10001 or auto; default: start a local one)")
    parser.add_argument("--locomo-questions", action="store_true",
                        help="locomo-plus: also ask LoCoMo's own questions in the stitched conversations")
    parser.add_argument("--stitch", default="session", choices=("session", "embedded"),
                        help="locomo-plus: each cue a session of its own (the benchmark's, default) or inside the "
                             "session before it (a robustness variant: can a method find the cue without its shape?)")


def staged_progress() -> Progress:
    """One tqdm bar per stage: a new bar starts whenever the total changes or the count restarts
    (:func:`~bfr_core.progress.restarts`); the encoding bar counts cost, so tqdm's ETA follows it."""
    state: dict[str, object] = {"prev": None, "bar": None}

    def update(done: int, total: int, label: str) -> None:
        if restarts(state["prev"], done, total):  # type: ignore[arg-type]
            state["bar"] = tqdm_progress("ingest")
        state["prev"] = (done, total)
        state["bar"](done, total, label)  # type: ignore[operator]

    return update


def format_report(report: IngestReport, db: str, seconds: float) -> str:
    """The report as a few readable lines."""
    lines = [
        f"ingested {report.source} as '{report.dataset_id}' ({report.kind}) into {db} in {seconds:.1f} s",
        f"  scopes {report.scopes:,}  sessions {report.sessions:,}  turns {report.turns:,}  "
        f"questions {report.questions:,}  scoreable {report.scoreable:,}",
    ]
    if report.by_type:
        lines.append("  by type: " + ", ".join(f"{k} {v:,}" for k, v in report.by_type))
    lines += [f"  - {note}" for note in report.notes]
    return "\n".join(lines)


def run(args: argparse.Namespace, out: TextIO | None = None) -> int:
    if args.kind == "overlay":
        return ingest_overlay_command(args)
    check_kind(args.kind)  # fail before the store file is created or opened
    if args.kind not in FOLDER_KINDS:
        check_file(Path(args.path))
    elif not Path(args.path).is_dir():
        raise InputError(args.path, "folder not found (beam reads a conversation, tier or root folder)")
    plus_only = [flag for flag, on in (("--locomo", args.locomo), ("--locomo-questions", args.locomo_questions),
                                       ("--stitch", args.stitch != "session")) if on]
    if plus_only and args.kind != "locomo-plus":
        raise InputError(args.path, f"{', '.join(plus_only)}: only for locomo-plus, not {args.kind}")
    options = {}
    if args.kind == "locomo-plus":
        options = {"locomo": args.locomo, "locomo_questions": args.locomo_questions, "stitch": args.stitch}
        if args.locomo:
            check_file(Path(args.locomo))
    executor = None
    if args.executor == "ray" or args.ray_address:
        executor = make_executor("ray" if args.executor == "ray" else "thread", 1, args.ray_address)
    progress = None if args.quiet else staged_progress()
    started = time.perf_counter()
    with removed_if_failed(args.db):  # a failed ingest into a new path leaves no file or folder
        store = Store(args.db)
        try:
            report = ingest(store, args.kind, args.path, name=args.name, replace=args.replace,
                            embed=args.embed, progress=progress, options=options, executor=executor)
        finally:
            store.close()
    print(format_report(report, args.db, time.perf_counter() - started), file=out or sys.stdout)
    return 0
