"""``bfr judge RUN --db DB --judge rules|local|openai:MODEL|anthropic:MODEL --prompt mem0|strict|lme``.

Rejudges every answer of a run (the workbench's own arms and imported systems alike) and stores each
verdict with the judge's model, the prompt's hash and the reason (``evaluation.judging``). Cached and
resumable: a verdict already stored for the same prompt and gold is kept, so a rerun of a finished
judge run makes no call; model calls also go through the LLM cache. ``--workers`` judges that many
answers at once; ``--dry-run`` prints the calls and their estimated cost without making any. ``--key
OVERLAY`` judges against an overlay's corrected answers (``bfr ingest-overlay``) instead of the
dataset's. Prints a JSON summary; ``--json FILE`` writes it too.
"""

from __future__ import annotations

import argparse
import json

from bfr_core.commands.jsonout import add_force, emit, open_store
from bfr_core.config import LLMConfig
from bfr_core.errors import BfrError
from bfr_core.evaluation.judging import judge_run, parse_judge
from bfr_core.evaluation.overlay import golds_under
from bfr_core.llm.factory import make_llm
from bfr_core.outfile import output_argument


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_force(p)
    p.add_argument("run_id", metavar="RUN", help="the run whose answers to judge")
    p.add_argument("--db", required=True, help="DuckDB store holding the run")
    p.add_argument("--judge", required=True, help="rules | local[:MODEL] | openai:MODEL | anthropic:MODEL")
    p.add_argument("--prompt", default="mem0", help="mem0 (the paper's) | strict | lme (LongMemEval's, per type)")
    p.add_argument("--key", default="original", help="original, or the name of an ingested overlay")
    p.add_argument("--arms", default=None, help="comma-separated arms (default: every arm with answers)")
    p.add_argument("--workers", type=int, default=4, help="answers judged at once by a model judge")
    p.add_argument("--base-url", default="", help="an OpenAI-compatible endpoint for openai:MODEL")
    p.add_argument("--dry-run", action="store_true", help="count the calls and price them; call nothing")
    output_argument(p, "--json", default=None, help="also write the summary to this file")


def run(args: argparse.Namespace) -> int:
    spec = parse_judge(args.judge, args.prompt)
    if args.workers < 1:
        raise BfrError(f"--workers must be at least 1, got {args.workers}")
    store = open_store(args.db, args.json, args.force)
    try:
        golds = golds_under(store, args.run_id, args.key)
        llm = None
        if spec.provider != "rules" and not args.dry_run:
            config = LLMConfig(provider=spec.provider, model=spec.model, base_url=args.base_url,
                               concurrency=args.workers)
            llm = make_llm(config, store, run_id=args.run_id)
        arms = [a.strip() for a in args.arms.split(",") if a.strip()] if args.arms else None
        rep = judge_run(store, args.run_id, spec, golds, key=args.key, llm=llm, workers=args.workers,
                        dry_run=args.dry_run, arms=arms)
    finally:
        store.close()
    out = json.dumps({"run_id": rep.run_id, "judge": rep.judge, "key": rep.key, "answers": rep.answers,
                      "kept": rep.kept, "judged": rep.judged, "failed": rep.failed, "labels": rep.labels,
                      "wall_s": rep.wall_s, **({"dry_run": rep.dry_run} if rep.dry_run is not None else {})},
                     indent=2)
    emit(out, args.json, args.db, args.force)
    return 0 if not rep.failed else 1
