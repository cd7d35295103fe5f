"""A run's summary: the DESIGN.md section 4 JSON contract, per arm and per question type (0-100).

Covers: :func:`arm_summary` (the means over some rows of one arm: retrieval metrics, set size, calls,
and, when a provider filled them, F1, the paper's judge, LongMemEval's judge, Suff@Set and LLM time)
and :func:`summarize` (a stored run as that JSON; ``k`` cuts every arm's evidence to its first k ids
and rescores, :func:`cut_rows`, so systems are compared at one budget), :func:`set_sizes` and
:func:`common_size` (the set size every arm of a run can be compared at: the smallest arm's largest
set); every arm under its registered name (``arm_names``). Does not cover: computing the per-question
metrics (``metrics``), reading rows (``bfr_core.runs``), LongMemEval's official retrieval figures
(``official``).
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from bfr_core.arm_names import canonical_arm
from bfr_core.errors import BfrError
from bfr_core.evaluation.metrics import score_question
from bfr_core.roles.answer_judge import UNDECIDED
from bfr_core.runs import ensure_schema, load_results, run_row
from bfr_core.store import Store

OPTIONAL_KEYS = ("f1", "judge", "judge_undecided", "lme_judge", "lme_undecided", "suff", "llm_s_p50")  # present only when a provider filled them


def _mean(values: Sequence[float | None]) -> float | None:
    vals = [v for v in values if v is not None]
    return round(100.0 * sum(vals) / len(vals), 2) if vals else None


def arm_summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "n": len(rows),
        "gold_hit": _mean([r["gold_hit"] for r in rows]),
        "turn_hit": _mean([r["turn_hit"] for r in rows]),
        "er": _mean([r["er"] for r in rows]),
        "cer": _mean([r["cer"] for r in rows]),
        "recall_all": _mean([r["recall_all"] if r["gold_n"] else None for r in rows]),
        "mean_set_size": round(sum(r["set_size"] for r in rows) / len(rows), 2) if rows else None,
        "mean_calls": round(sum(r["calls"] for r in rows) / len(rows), 2) if rows else None,
        "f1": _mean([r["f1"] for r in rows]),
        # J over decided rows: the offline judge's UNDECIDED is left out and counted apart
        "judge": _mean([None if r["judge"] in (None, UNDECIDED) else float(r["judge"] == "CORRECT")
                        for r in rows]),
        "judge_undecided": (sum(r["judge"] == UNDECIDED for r in rows)
                            if any(r["judge"] is not None for r in rows) else None),
        # LongMemEval's official judge: % "yes" of the decided rows (the offline rules' "undecided" excluded)
        "lme_judge": _mean([None if r.get("lme_judge") in (None, "undecided") else float(r["lme_judge"] == "yes")
                            for r in rows]),
        "lme_undecided": sum(r.get("lme_judge") == "undecided" for r in rows) or None,
        "suff": _mean([None if r["suff"] in (None, "uncertain") else float(r["suff"] == "sufficient")
                       for r in rows]),
        "failed": sum(r["status"] != "ok" for r in rows),
        "llm_s_p50": _median_s([r.get("llm_ms") for r in rows]),
    }


def _median_s(ms: Sequence[float | None]) -> float | None:
    """Median of the known values, milliseconds in, seconds out (LLM wall time per question)."""
    vals = [v for v in ms if v is not None]
    return round(statistics.median(vals) / 1000, 2) if vals else None


def cut_rows(rows: list[dict[str, Any]], gold: dict[str, Sequence[str]], k: int) -> list[dict[str, Any]]:
    """Each row with its evidence cut to the first ``k`` ids and its retrieval measures recomputed."""
    out = []
    for r in rows:
        ev = list(r["evidence"] or [])[:k]
        s = score_question(ev, gold.get(r["question_id"], ()))
        out.append({**r, "evidence": ev, "set_size": len(ev), "gold_hit": s.gold_hit, "turn_hit": s.turn_hit,
                    "er": s.er, "cer": s.cer, "recall_any": s.recall_any, "recall_all": s.recall_all,
                    "ndcg_any": s.ndcg_any})
    return out


def set_sizes(rows: Sequence[dict[str, Any]]) -> dict[str, int]:
    """Arm -> its largest evidence set over the rows it answered (failed rows, scored empty, left out)."""
    out: dict[str, int] = {}
    for r in rows:
        if r.get("status", "ok") == "ok":
            out[r["arm"]] = max(out.get(r["arm"], 0), int(r["set_size"]))
        else:
            out.setdefault(r["arm"], 0)
    return out


def common_size(rows: Sequence[dict[str, Any]]) -> int | None:
    """The set size at which every arm of ``rows`` is compared: the smallest arm's largest set; None
    when every arm's largest set is already that size (no cut needed). An arm that returned no
    evidence at all is empty at any size, so it does not set the size."""
    sizes = {a: n for a, n in set_sizes(rows).items() if n > 0}
    if len(set(sizes.values())) <= 1:
        return None
    return min(sizes.values())


def describe_sizes(sizes: dict[str, int]) -> str:
    """"mem0 10 · bfr-mv 40": each arm's largest set, for a sentence."""
    return " · ".join(f"{a} {n}" for a, n in sizes.items())


def run_rows(store: Store, run_id: str, k: int | None = None) -> list[dict[str, Any]]:
    """A run's result rows, cut to ``k`` when given; each row's arm by its registered name (a run stored
    under an alias, ``arm_names``, reads as its arm)."""
    rows = [{**r, "arm": canonical_arm(r["arm"])} for r in load_results(store, run_id)]
    if k is None:
        return rows
    run = run_row(store, run_id)
    gold = {q.question_id: q.gold for q in store.questions(run[0])} if run else {}
    return cut_rows(rows, gold, k)


def summarize(store: Store, run_id: str, benchmark: str | None = None, k: int | None = None) -> dict[str, Any]:
    """The DESIGN.md section 4 JSON contract (percentages 0-100); ``k`` cuts every arm's set first."""
    ensure_schema(store)
    run = run_row(store, run_id)
    if run is None:
        raise BfrError(f"no run '{run_id}' in {store.path}")
    rows = run_rows(store, run_id, k)
    arms: dict[str, Any] = {}
    for arm in dict.fromkeys(canonical_arm(a) for a in run[1]):
        arm_rows = [r for r in rows if r["arm"] == arm]
        summary = arm_summary(arm_rows)
        by_type: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for r in arm_rows:
            by_type[r["qtype"]].append(r)
        summary["by_type"] = {t: arm_summary(v) for t, v in sorted(by_type.items())}
        arms[arm] = {k: v for k, v in summary.items() if not (k in OPTIONAL_KEYS and v is None)}
        for t in summary["by_type"].values():
            for key in OPTIONAL_KEYS:
                if t.get(key) is None:
                    t.pop(key, None)
    out = {
        "benchmark": benchmark or run[0], "dataset_id": run[0], "run_id": run_id,
        "n_questions": run[2], "budget": run[3] or "default", "k": run[4], "provider": run[5], "arms": arms,
    }
    if k is not None:
        out["cut_k"] = k
    return out
