"""Arm rows: every arm's evidence for every question of a dataset dumped to JSON (:func:`dump`, with the
NER the entity view ran meanwhile), and two dumps compared: which questions' evidence differs, per arm,
and what the differing rows did to gold (found, lost).

Does not cover: the command line and its report (``bench.checks.bench_arm_rows``).
"""

from __future__ import annotations

import json
import time
from collections import Counter
from pathlib import Path


def gold_moves(old: dict, new: dict, keys: list[str], gold: dict[str, frozenset[str]]) -> dict[str, int]:
    """Of the differing rows ``keys``: how many hold another set of gold turns, and how many hold the same
    gold turns at other positions (so a figure cut at some k may differ)."""
    other = moved = 0
    for k in keys:
        g = gold[k.split(":", 1)[1]]
        before, after = ([(i, t) for i, t in enumerate(row[0]) if t in g] for row in (old[k], new[k]))
        if {t for _, t in before} != {t for _, t in after}:
            other += 1
        elif before != after:
            moved += 1
    return {"differing_other_gold_turns": other, "differing_gold_turns_moved": moved}


def compare(a: str, b: str, label: str, out: str, gold: dict[str, frozenset[str]] | None = None) -> dict:
    """Rows that differ between two dumps; with ``gold`` (question id -> gold turn ids) also what the
    differing rows did to the gold turns (:func:`gold_moves`)."""
    old, new = json.loads(Path(a).read_text()), json.loads(Path(b).read_text())
    shared = sorted(set(old) & set(new))
    differ = [k for k in shared if old[k] != new[k]]
    same_set = [k for k in differ if sorted(old[k][0]) == sorted(new[k][0]) and old[k][1:] == new[k][1:]]
    result = {
        "benchmark": "arm_rows", "label": label, "rows_compared": len(shared),
        "arms": sorted({k.split(":", 1)[0] for k in shared}),
        "rows_differing": len(differ), "differing_by_arm": dict(Counter(k.split(":", 1)[0] for k in differ)),
        "differing_same_set_other_order": len(same_set),
        "only_in_first": len(set(old) - set(new)), "only_in_second": len(set(new) - set(old)),
    }
    if gold is not None:
        result.update(gold_moves(old, new, differ, gold))
    runs = json.loads(Path(out).read_text()) if Path(out).is_file() else {"comparisons": []}
    runs["comparisons"] = [c for c in runs["comparisons"] if c.get("label") != label] + [result]
    Path(out).write_text(json.dumps(runs, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(result, indent=2))
    return result


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
