"""Does a refactor of ``bfr`` leave its output unchanged? Evidence and scores before and after, compared.

Covers: ``bfr``'s evidence through the real pipeline (``pipeline.run_query``) at 40 turns (C6) and at
10 (C0, ground 10), and every turn's final score (``turn_scores.score_turns`` at the shipped setting),
on the first ``--conversations`` LoCoMo chats and every dev50 question. ``--dump LABEL`` writes them to
``bench/out/cache/ours_identity_LABEL.json`` (run it once on the code before the change, once after);
``--compare A B`` writes ``bench/out/ours_identity.json``: per benchmark, how many questions have the
same evidence in the same order, the same ranking, bit-identical scores, and the largest score gap.

Issue 25 ("Fewer knobs") ran it at b47aa4f (``before``) and after the dead settings left
``OursSettings`` (``after``). ``--variants COMMIT`` checks the variants that left for
bfr_core/method/variants.py: ``turn_scores`` as it was at COMMIT (read with ``git show``) against
``variants.score_variant`` over random settings of the old 22 fields (Rocchio and the MiniLM
session topic included), on the first LoCoMo chat and the first dev50 questions; it writes
``bench/out/ours_variants_identity.json`` (questions x settings with bit-identical scores).

Run: ``.venv/bin/python -m bench.checks.bench_ours_identity --dump before [--db bench/out/cache/ours.duckdb]``,
then ``--dump after``, then ``--compare before after``; ``--variants b47aa4f``.
Does not cover: the other arms, Stage II's trace beyond its evidence.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from dataclasses import fields
from pathlib import Path
from types import ModuleType

import numpy as np

from bench.lib import git_commit  # the code this bench measured
from bench.lib.ours_runs import OUT, Views, open_store, questions
from bfr_core.config import Config, RetrievalConfig
from bfr_core.method import turn_scores
from bfr_core.method.variants import Variant, score_variant
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


# The old 22 fields' values the variant check draws from (the selection grid's at b47aa4f, plus w_bm25 0 and w_dense 0)
OLD_VALUES: dict[str, tuple] = {
    "w_bm25": (1.0, 0.0), "w_dense": (1.0, 0.5, 1.5, 0.0), "stemmed": (True, False), "bm25_speaker": (False, True),
    "fusion": ("z", "rrf"), "speaker": (0.0, 6.0), "dates": (0.0, 3.0), "near1": (0.0, 0.6), "near2": (0.0, 0.4),
    "cover": (True,), "dense_view": (False, True), "session": (0.0, 0.5, 1.0), "session_top": (1, 2, 3),
    "role": (0.0, 1.0), "role_ratio": (3.0,), "recency": (0.0, 0.3), "doc_bm25": (0.0, 0.5),
    "doc_dense": (0.0, 0.5, 1.0), "doc_view": ("static", "short"), "remark": ("off", "form", "form|disagree", "form|weak"),
    "remark_shift": (1.0, 0.5, 0.75), "prf": (0, 3, 10)}


def old_turn_scores(commit: str, where: Path) -> ModuleType:
    """``bfr_core.method.turn_scores`` (and its ours.toml) as they were at ``commit``, imported under another name."""
    for name in ("turn_scores.py", "ours.toml"):
        text = subprocess.run(["git", "show", f"{commit}:bfr_core/method/{name}"], capture_output=True, text=True,
                              check=True, cwd=Path(__file__).parent).stdout
        (where / name).write_text(text, encoding="utf-8")
    spec = importlib.util.spec_from_file_location(f"turn_scores_{commit}", where / "turn_scores.py")
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    sys.modules[spec.name] = module  # type: ignore[union-attr]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def as_variant(old: object) -> Variant:
    """The variants.Variant that names what an old OursSettings named."""
    d = {f.name: getattr(old, f.name) for f in fields(old)}  # type: ignore[arg-type]
    kept = {f.name for f in fields(turn_scores.OursSettings)}
    bm25 = "plain" if not d["stemmed"] else "stemmed+speaker" if d["bm25_speaker"] else "stemmed"
    return Variant(turn_scores.OursSettings(**{k: d[k] for k in kept}), bm25, d["w_bm25"], d["fusion"], d["dense_view"],
                   d["recency"], d["doc_bm25"], d["doc_dense"], d["doc_view"], d["prf"], d["cover"])


def variants(db: Path, commit: str, points: int, lme_questions: int) -> dict:
    """Old turn_scores against variants over ``points`` random old settings (plus the start and the shipped one)."""
    rng = random.Random(0)
    store = open_store(db)
    with tempfile.TemporaryDirectory() as tmp:
        old = old_turn_scores(commit, Path(tmp))
        settings = [old.OursSettings(), old.DEFAULT] + [
            old.OursSettings(**{k: rng.choice(v) for k, v in OLD_VALUES.items()}) for _ in range(points)]
        out: dict[str, object] = {"commit": commit, "settings": len(settings)}
        try:
            for d in DATASETS:
                qs = questions(store, d)
                qs = [q for q in qs if q.scope_id == min(x.scope_id for x in qs)] if d == "locomo" else qs[:lme_questions]
                views = Views(store, d)
                same = total = 0
                differing = []
                for q in qs:
                    v = views(q.scope_id, q.text)
                    for s in settings:
                        a, b = old.score_turns(v, q.query(), s).final, score_variant(v, q.query(), as_variant(s)).final
                        total += 1
                        if np.array_equal(a, b):
                            same += 1
                        elif len(differing) < 20:
                            differing.append({"question": q.question_id, "settings": repr(s),
                                              "gap": float(np.abs(a - b).max()) if a.shape == b.shape else None})
                out[d] = {"questions": len(qs), "pairs": total, "bit-identical": same, "differing": differing}
                print(f"  {d}: {same}/{total} bit-identical", file=sys.stderr, flush=True)
        finally:
            store.close()
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--db", default=str(OUT / "cache" / "ours.duckdb"))
    ap.add_argument("--conversations", type=int, default=2, help="LoCoMo chats (sorted ids) dumped")
    ap.add_argument("--dump", metavar="LABEL", help="write bench/out/cache/ours_identity_LABEL.json")
    ap.add_argument("--compare", nargs=2, metavar=("A", "B"), help="compare two dumps into ours_identity.json")
    ap.add_argument("--variants", metavar="COMMIT", help="old turn_scores at COMMIT against bfr_core.method.variants")
    ap.add_argument("--points", type=int, default=40, help="random old settings the variant check draws")
    ap.add_argument("--lme-questions", type=int, default=20, help="dev50 questions the variant check reads")
    args = ap.parse_args()
    if sum(map(bool, (args.dump, args.compare, args.variants))) != 1:
        ap.error("give exactly one of --dump LABEL, --compare A B or --variants COMMIT")
    if args.variants:
        t0 = time.time()
        res = {"benchmark": "ours_variants_identity", "load": list(os.getloadavg()),
               **variants(Path(args.db), args.variants, args.points, args.lme_questions),
               "elapsed_s": round(time.time() - t0, 1)}
        (OUT / "ours_variants_identity.json").write_text(json.dumps(res, indent=1) + "\n", encoding="utf-8")
        print(f"wrote {OUT / 'ours_variants_identity.json'}", file=sys.stderr)
        return
    marked = git_commit.commit()  # one git call: HEAD, "+uncommitted" when a tracked file differs
    commit = marked.removesuffix("+uncommitted")
    if args.dump:
        t0 = time.time()
        rows = dump(Path(args.db), args.conversations)
        meta = {"label": args.dump, "commit": commit, "dirty": marked.endswith("+uncommitted"), "conversations": args.conversations,
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
