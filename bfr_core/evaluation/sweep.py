"""The budget sweep: BFR-Text and BFR-MV over the grid C0..C9, quality versus realized cost.

For every question Stage I (FCA-MS) runs once; each grid point then runs only the completion loop
from the same E0 (the paper's Figure 5: "both schedules start from the same FCA-MS C0 set"), so a
full LoCoMo sweep costs one Stage I per question plus cheap completion loops.

Covers: :func:`sweep` (-> a JSON-ready dict with one point per arm and budget: Gold Hit, ER, CER,
Turn Hit, realized mean calls and set size, the paper's Table 16 values beside ours, and the
Pareto-optimal points per metric), :func:`write_outputs` (frontier.json, frontier.html and, when
kaleido can render here, frontier.png).

Does not cover: answer quality (F1, Judge, LLM-Suff@Set need the answerer/judges: ``bfr eval``).
"""

from __future__ import annotations

import json
import statistics
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from bfr_core.config import Config
from bfr_core.errors import BfrError
from bfr_core.evaluation import metrics
from bfr_core.method.arms import ArmContext
from bfr_core.method.budgets import GRID, NAMES, PAPER_TABLE16, budget_for
from bfr_core.method.stage1 import stage_one
from bfr_core.method.stage2 import SCHEDULES, complete
from bfr_core.outfile import write_output
from bfr_core.progress import Progress
from bfr_core.records import Question
from bfr_core.retrieval.scope import scope_views

SCHEDULE_OF = {"bfr-text": "text", "bfr-mv": "mv"}
PAPER_POINTS = ("C0", "C1", "C2", "C3", "C4", "C6", "C9")  # the grid points Table 16 reports


def sweep(store: Any, dataset_id: str, *, arms: Sequence[str] = ("bfr-text", "bfr-mv"),
          budgets: Sequence[str] = NAMES, limit: int | None = None, config: Config | None = None,
          progress: Progress | None = None) -> dict[str, Any]:
    bad = [a for a in arms if a not in SCHEDULE_OF]
    if bad:
        raise BfrError(f"sweep runs the completion arms only ({', '.join(SCHEDULE_OF)}), not {', '.join(bad)}")
    unknown = [b for b in budgets if b.upper() not in NAMES]
    if unknown:
        raise BfrError(f"unknown budget(s) {', '.join(unknown)}; choose from {', '.join(NAMES)}")
    config = config or Config()
    questions: list[Question] = [q for q in store.questions(dataset_id, scoreable_only=True)][:limit]
    if not questions:
        raise BfrError(f"dataset '{dataset_id}' has no scoreable questions")
    rows: dict[tuple[str, str], list[dict[str, Any]]] = {(a, b): [] for a in arms for b in budgets}
    stage1_ms: list[float] = []
    views_cache: dict[str, Any] = {}
    t_start = time.perf_counter()
    for n, q in enumerate(questions):
        views = views_cache.get(q.scope_id)
        if views is None:
            views_cache.clear()  # questions come grouped by scope; keep one scope's views in memory
            views = views_cache[q.scope_id] = scope_views(store, dataset_id, q.scope_id)
        query = q.query()
        ctx = ArmContext(views, config, budget_for("bfr-mv", "C0"), "C0", None, config.retrieval.k)
        t0 = time.perf_counter()
        s1 = stage_one(ctx, query)
        stage1_ms.append((time.perf_counter() - t0) * 1000)
        for arm in arms:
            schedule = SCHEDULES[SCHEDULE_OF[arm]]
            for name in budgets:
                b = budget_for(arm, name)
                steps = complete(replace(ctx, budget=b, budget_name=name), query, s1.e0, schedule,
                                 question_vector=s1.question_vector)
                evidence = steps[-1].evidence if steps else s1.e0
                calls = steps[-1].calls if steps else 0
                rows[(arm, name)].append(_score(q, evidence, calls))
        if progress:
            progress(n + 1, len(questions), q.question_id)
    points = []
    for (arm, name), rs in rows.items():
        b = GRID[SCHEDULE_OF[arm]][name.upper()]
        paper = PAPER_TABLE16.get(arm, {}).get(name.upper())
        points.append({
            "arm": arm, "budget": name.upper(),
            "budget_def": {"rounds": b.rounds, "calls": b.calls, "new": b.new, "keep": b.keep},
            **_aggregate(rs),
            "paper_calls": paper[0] if paper else None, "paper_size": paper[1] if paper else None,
        })
    return {
        "benchmark": dataset_id, "dataset_id": dataset_id, "n_questions": len(questions),
        "arms": list(arms), "budgets": [b.upper() for b in budgets],
        "stage1_ms_p50": round(statistics.median(stage1_ms), 2) if stage1_ms else None,
        "elapsed_s": round(time.perf_counter() - t_start, 1),
        "points": points,
        "frontier": {m: _front(points, m) for m in ("gold_hit", "er", "cer")},
        "notes": "Quality in percent over scoreable questions; calls and size are realized means. "
                 "paper_* are Table 16 (LoCoMo pilot, n=200); None where the paper reports no point.",
    }


def _score(q: Question, evidence: Sequence[str], calls: int) -> dict[str, Any]:
    return {"gold_hit": metrics.gold_hit(evidence, q.gold), "er": metrics.evidence_recall(evidence, q.gold),
            "cer": metrics.complete_evidence_recall(evidence, q.gold),
            # Turn Hit averages over every question, unannotated ones counting as misses (paper, Sec. 5)
            "turn_hit": 1.0 if metrics.gold_hit(evidence, q.gold) else 0.0, "calls": calls, "size": len(evidence)}


def _aggregate(rs: Sequence[dict[str, Any]]) -> dict[str, Any]:
    def pct(key: str) -> float | None:
        vals = [r[key] for r in rs if r[key] is not None]
        return round(100 * sum(vals) / len(vals), 2) if vals else None
    return {"gold_hit": pct("gold_hit"), "er": pct("er"), "cer": pct("cer"), "turn_hit": pct("turn_hit"),
            "calls": round(sum(r["calls"] for r in rs) / len(rs), 2) if rs else None,
            "size": round(sum(r["size"] for r in rs) / len(rs), 2) if rs else None, "n": len(rs)}


def _front(points: Sequence[dict[str, Any]], metric: str) -> list[dict[str, Any]]:
    """Pareto-optimal points (lower calls and size, higher quality are preferred)."""
    ok = [p for p in points if p[metric] is not None]
    out = []
    for p in ok:
        dominated = any(
            o is not p and o["calls"] <= p["calls"] and o["size"] <= p["size"] and o[metric] >= p[metric]
            and (o["calls"] < p["calls"] or o["size"] < p["size"] or o[metric] > p[metric]) for o in ok)
        if not dominated:
            out.append({"arm": p["arm"], "budget": p["budget"]})
    return out


def output_paths(out_dir: str | Path, *, png: bool = True) -> list[Path]:
    """The files :func:`write_outputs` writes into ``out_dir``."""
    return [Path(out_dir) / f"frontier.{ext}" for ext in ("json", "html", *(("png",) if png else ()))]


def write_outputs(result: dict[str, Any], out_dir: str | Path, *, png: bool = True, store: str | None = None,
                  force: bool = False) -> dict[str, str]:
    """frontier.json, frontier.html and (if kaleido renders here) frontier.png, each through
    ``outfile.write_output`` (an existing one only with ``force``); returns what was written."""
    from bfr_core.plots import budget_frontier  # heavy: plotly loads only when a figure is written

    out = Path(out_dir)
    written = {}

    def put(name: str, data: str | bytes) -> None:
        write_output(out / name, data, option="--out", store=store, force=force)

    put("frontier.json", json.dumps(result, indent=2) + "\n")
    written["json"] = str(out / "frontier.json")
    pts = result["points"]
    figs = [
        budget_frontier(pts, x="calls", y="gold_hit", title="Gold Hit vs realized calls"),
        budget_frontier(pts, x="calls", y="cer", title="CER vs realized calls"),
        budget_frontier(pts, x="size", y="gold_hit", title="Gold Hit vs realized set size"),
        budget_frontier(pts, x="size", y="cer", title="CER vs realized set size"),
    ]
    html = ["<html><head><meta charset='utf-8'><title>BFR budget frontier</title></head><body>",
            f"<h2>Budget frontier: {result['benchmark']} ({result['n_questions']} questions)</h2>"]
    for i, fig in enumerate(figs):
        html.append(fig.to_html(full_html=False, include_plotlyjs=(i == 0)))
    html.append("</body></html>")
    put("frontier.html", "\n".join(html))
    written["html"] = str(out / "frontier.html")
    if not png:
        return written
    try:
        from plotly.subplots import make_subplots  # heavy: plotly loads only when a figure is written

        grid = make_subplots(rows=1, cols=2, subplot_titles=("Gold Hit vs calls", "CER vs calls"))
        palette = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd")
        colours = {name: palette[i % len(palette)] for i, name in enumerate(dict.fromkeys(
            tr.name for tr in figs[0].data if tr.name != "Pareto front"))}
        for col, fig in ((1, figs[0]), (2, figs[1])):
            for tr in fig.data:
                tr.showlegend = col == 1
                if tr.name in colours:  # the same arm keeps its colour in both panels
                    tr.line.color = tr.marker.color = colours[tr.name]
                grid.add_trace(tr, row=1, col=col)
        grid.update_layout(width=1100, height=420, template="plotly_white")
        image = grid.to_image(format="png")
    except Exception as exc:  # kaleido needs a Chrome binary; say why and carry on
        written["png_error"] = f"{type(exc).__name__}: {exc}".splitlines()[0][:300]
        return written
    put("frontier.png", image)
    written["png"] = str(out / "frontier.png")
    return written
