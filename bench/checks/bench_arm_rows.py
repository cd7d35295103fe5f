"""Arm rows before and after a change: every arm's evidence set, in order, for every question.

Two modes:

* ``dump``: run the arms on every scoreable question of a dataset in a store (offline, no LLM) and
  write ``{"ARM:QUESTION_ID": [evidence ids in order, step kinds, budget]}``. Run it once with the old
  code and once with the new, on copies of the same store (``git worktree add ../old REV`` and
  ``PYTHONPATH=../old``), so the comparison sees code changes only: the committed ``bench/out/*.json``
  were measured on other stores, whose cached vectors differ in their last bits.
* ``compare``: count the rows that differ between two dumps, per arm, and whether the differing
  ones hold the same set in another order (with ``--db``: also how many hold other gold turns, and how
  many the same gold turns at other positions); writes ``bench/out/arm_rows.json``.

    .venv/bin/python -m bench.checks.bench_arm_rows dump --db STORE --dataset locomo --out new.json
    .venv/bin/python -m bench.checks.bench_arm_rows compare old.json new.json --label "..."

The dump also prints how many texts the entity view's NER parsed on the way (what the store's
NER cache lacked) and how long that took.

Does not cover: answers and judgments (``bench_rules_answers.py``), speed.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from bench.lib.arm_rows import ARMS, compare, dump

ROOT = Path(__file__).resolve().parents[2]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="mode", required=True)
    d = sub.add_parser("dump")
    d.add_argument("--db", required=True)
    d.add_argument("--dataset", default="locomo")
    d.add_argument("--arms", default=ARMS)
    d.add_argument("--out", required=True)
    c = sub.add_parser("compare")
    c.add_argument("first")
    c.add_argument("second")
    c.add_argument("--label", required=True)
    c.add_argument("--out", default=str(ROOT / "bench" / "out" / "arm_rows.json"))
    c.add_argument("--db", help="the store the dumps ran on: also count what the differing rows did to gold turns")
    c.add_argument("--dataset", default="locomo", help="with --db: the dumps' dataset")
    args = ap.parse_args(argv)
    if args.mode == "dump":
        dump(args.db, args.dataset, [a.strip() for a in args.arms.split(",") if a.strip()], args.out)
    else:
        gold = None
        if args.db:
            from bfr_core.store import Store

            gold = {q.question_id: frozenset(q.gold) for q in Store(args.db).questions(args.dataset, scoreable_only=True)}
        compare(args.first, args.second, args.label, args.out, gold)
    return 0


if __name__ == "__main__":
    sys.exit(main())
