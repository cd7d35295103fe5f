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
import json
import sys
import time
from pathlib import Path

from bench.lib.arm_rows import compare

ROOT = Path(__file__).resolve().parents[2]
ARMS = "mem0,amem,com,mragent-flat,fca-ms,bfr-text,bfr-mv,bfr"


def _count_ner() -> list[float]:
    """[texts parsed, seconds] by the entity view's NER during the dump (it parses what the cache lacks)."""
    from bfr_core.retrieval.views import entity

    seen = [0, 0.0]
    inner = entity.run_ner

    def counted(texts, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003, ANN202 - a pass-through
        start = time.perf_counter()
        out = inner(texts, *args, **kwargs)
        seen[0] += len(texts)
        seen[1] += time.perf_counter() - start
        return out

    entity.run_ner = counted
    return seen


def dump(db: str, dataset: str, arms: list[str], out: str) -> None:
    try:  # the layout before 2026-12-01 had the scope builder in bfr_core.index
        from bfr_core.retrieval.scope import scope_views
    except ImportError:
        from bfr_core.index import scope_views
    from bfr_core.pipeline import run_query
    from bfr_core.store import Store

    store = Store(db)
    rows: dict[str, list] = {}
    parsed = _count_ner()
    start = time.perf_counter()
    for q in store.questions(dataset, scoreable_only=True):
        views = scope_views(store, dataset, q.scope_id)
        for arm in arms:
            tr = run_query(views, q.query(), arm, dataset_id=dataset)
            rows[f"{arm}:{q.question_id}"] = [list(tr.evidence), [s.kind for s in tr.steps], tr.budget]
    Path(out).write_text(json.dumps(rows), encoding="utf-8")
    print(f"{len(rows)} rows in {time.perf_counter() - start:.1f} s -> {out}; NER parsed {parsed[0]:,} text(s) "
          f"in {parsed[1]:.1f} s; turns in the dataset {store.counts(dataset)['turns']:,}")


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
