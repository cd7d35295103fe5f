"""Arm rows of two versions of the code compared: which questions' evidence differs, per arm, and what
the differing rows did to gold (found, lost).

Does not cover: dumping the rows (``bench.checks.bench_arm_rows``).
"""

from __future__ import annotations

import json
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
