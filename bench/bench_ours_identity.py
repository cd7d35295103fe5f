"""Does a refactor of ``bfr`` leave its output unchanged? Evidence and scores before and after, compared.

Covers: ``bfr``'s evidence through the real pipeline (``pipeline.run_query``) at 40 turns (C6) and at
10 (C0, ground 10), and every turn's final score (``turn_scores.score_turns`` at the shipped setting),
on the first ``--conversations`` LoCoMo chats and every dev50 question. ``--dump LABEL`` writes them to
``bench/out/cache/ours_identity_LABEL.json`` (run it once on the code before the change, once after);
``--compare A B`` writes ``bench/out/ours_identity.json``: per benchmark, how many questions have the
same evidence in the same order, the same ranking, bit-identical scores, and the largest score gap.

Issue 25 ("Fewer knobs") ran it at b47aa4f (``before``) and after the dead settings left
``OursSettings`` (``after``).

Run: ``.venv/bin/python bench/bench_ours_identity.py --dump before [--db bench/out/cache/ours.duckdb]``,
then ``--dump after``, then ``--compare before after``.
Does not cover: the other arms, Stage II's trace beyond its evidence.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
from bench_ours import OUT, Views, open_store, questions

from bfr_core.config import Config, RetrievalConfig
from bfr_core.method import turn_scores
from bfr_core.pipeline import run_query

DATASETS = ("locomo", "longmemeval")
POINTS = {"40": ("C6", 10), "10": ("C0", 10)}  # set size -> (budget, ground)


def dump(db: Path, conversations: int) -> dict:
    """Evidence at each point and the final scores of every question in scope (see the module docstring)."""
    store = open_store(db)
    out: dict[str, dict] = {}
    try:
        for d in DATASETS:
            qs = questions(store, d)
            keep = sorted({q.scope_id for q in qs})[:conversations] if d == "locomo" else None
            views = Views(store, d)
            rows = {}
            for q in qs:
                if keep is not None and q.scope_id not in keep:
                    continue
                v = views(q.scope_id, q.text)
                row: dict[str, object] = {"scores": turn_scores.score_turns(v, q.query()).final.tolist()}
                for size, (budget, ground) in POINTS.items():
                    tr = run_query(v, q.query(), "bfr", dataset_id=d, budget=budget,
                                   config=Config(retrieval=RetrievalConfig(ground=ground)))
                    row[f"evidence@{size}"] = list(tr.evidence)
                rows[q.question_id] = row
            out[d] = rows
            print(f"  {d}: {len(rows)} questions", file=sys.stderr, flush=True)
    finally:
        store.close()
    return out


def compare(a: dict, b: dict) -> dict:
    """Per benchmark: questions with identical evidence (each point), ranking and scores; the largest gap."""
    out = {}
    for d in DATASETS:
        qa, qb = a.get(d, {}), b.get(d, {})
        common = sorted(set(qa) & set(qb))
        r: dict[str, object] = {"questions": len(common), "only_in_one": len(set(qa) ^ set(qb))}
        for size in POINTS:
            same = [qa[q][f"evidence@{size}"] == qb[q][f"evidence@{size}"] for q in common]
            r[f"same evidence, same order @{size}"] = sum(same)
            r[f"differing @{size}"] = [q for q, s in zip(common, same, strict=True) if not s][:20]
        gaps, same_rank, exact = [], 0, 0
        for q in common:
            x, y = np.asarray(qa[q]["scores"]), np.asarray(qb[q]["scores"])
            if x.shape != y.shape:
                gaps.append(float("inf"))
                continue
            gaps.append(float(np.abs(x - y).max()) if len(x) else 0.0)
            same_rank += bool(np.array_equal(turn_scores.ranking(x), turn_scores.ranking(y)))
            exact += bool(np.array_equal(x, y))
        r["same ranking (every turn)"] = same_rank
        r["bit-identical scores"] = exact
        r["largest score gap"] = max(gaps, default=0.0)
        out[d] = r
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--db", default=str(OUT / "cache" / "ours.duckdb"))
    ap.add_argument("--conversations", type=int, default=2, help="LoCoMo chats (sorted ids) dumped")
    ap.add_argument("--dump", metavar="LABEL", help="write bench/out/cache/ours_identity_LABEL.json")
    ap.add_argument("--compare", nargs=2, metavar=("A", "B"), help="compare two dumps into ours_identity.json")
    args = ap.parse_args()
    if bool(args.dump) == bool(args.compare):
        ap.error("give exactly one of --dump LABEL or --compare A B")
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                            cwd=Path(__file__).parent).stdout.strip()
    if args.dump:
        t0 = time.time()
        rows = dump(Path(args.db), args.conversations)
        meta = {"label": args.dump, "commit": commit, "dirty": bool(subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"], capture_output=True, text=True,
            cwd=Path(__file__).parent).stdout.strip()), "conversations": args.conversations,
            "settings": repr(turn_scores.DEFAULT), "load": list(os.getloadavg()), "elapsed_s": round(time.time() - t0, 1)}
        path = OUT / "cache" / f"ours_identity_{args.dump}.json"
        path.write_text(json.dumps({"meta": meta, **rows}) + "\n", encoding="utf-8")
        print(f"wrote {path}", file=sys.stderr)
        return
    a, b = (json.loads((OUT / "cache" / f"ours_identity_{x}.json").read_text(encoding="utf-8")) for x in args.compare)
    result = {"benchmark": "ours_identity", "load": list(os.getloadavg()), "a": a["meta"], "b": b["meta"],
              "points": {k: {"budget": v[0], "ground": v[1]} for k, v in POINTS.items()}, **compare(a, b)}
    (OUT / "ours_identity.json").write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    print(json.dumps({d: {k: v for k, v in result[d].items() if not k.startswith("differing")} for d in DATASETS},
                     indent=1))


if __name__ == "__main__":
    main()
