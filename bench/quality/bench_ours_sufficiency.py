"""The sufficiency gap by budget: a gold turn found (Turn Hit) against every gold turn found (recall_all)
at evidence sets of 5, 10, 20 and 40 turns, for ``bfr``, the paper's arms and the simple rankings.

Each arm runs through ``pipeline.run_query`` at bench_ours' ``SIZE_PLAN`` (E0 size b and completion
budget per set size): ``bfr``, ``bfr-text`` and ``bfr-mv`` at every size, ``fca-ms`` (Stage I alone,
E0 = b turns) at 5 and 10; BM25 (``mem0``), dense (``amem``), the hybrid view's RRF and the z-fusion
ranking top-k at every size. Figures through ``evaluation.metrics`` (bench_ours.score). ``bfr``'s
rows are **development** figures (its setting was chosen on these questions, bench_ours_selection.py;
the held-out ones are ours_selection.json's cross_validation); the paper's arms and the top-k rankings
choose no weight on them. ``bfr-mv`` runs on LoCoMo only (its entity view parses the turns a cue could
match; over 250 LongMemEval haystacks that is the bench's whole budget).

Latency: ``bfr`` at C6 with the shipped setting and with its set weights at 0, run alternately on
each question (warm p50 / p95 inside the arm, and their ratio: what the set step costs under the same
machine load). Writes ``bench/out/ours_sufficiency.json`` and the plot (``plots.sufficiency_gap``) as
``docs/screenshots/sufficiency_<dataset>.png`` (Plotly's image export through the system's Chromium)
and ``bench/out/ours_sufficiency_<dataset>.html``.

Run: ``nice .venv/bin/python -m bench.quality.bench_ours_sufficiency [--db bench/out/cache/ours.duckdb]
[--datasets locomo,longmemeval] [--limit N]``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from dataclasses import asdict, replace
from pathlib import Path

from bench.lib.ours_runs import (
    OUT,
    ROOT,
    SIZE_PLAN,
    Views,
    arm_runner,
    hybrid_runner,
    questions,
    score,
    zfusion_runner,
)
from bench.lib.selection import DEV200, open_all
from bfr_core import plots
from bfr_core.config import Config, RetrievalConfig
from bfr_core.method import ours, turn_scores
from bfr_core.method.budgets import budget_for
from bfr_core.pipeline import ArmContext

SIZES = (5, 10, 20, 40)
PAPER_ARMS = ("fca-ms", "bfr-text", "bfr-mv")
STAGE_ONE_ONLY = {"fca-ms"}  # E0 alone: its set size is b, so it has the sizes b reaches (5, 10)
NO_MV = {"longmemeval"}  # bfr-mv left out there (its entity view's parsing over 250 haystacks)
FIGURES = ("turn_hit", "recall_all", "gold_hit", "cer", "set_size", "n")


def curves(store, dataset: str, limit: int = 0, paper_arms: bool = True) -> dict[str, dict[str, dict]]:
    """System -> size -> figures over the dataset's scoreable questions (``limit``: the first N, for a smoke run);
    LongMemEval is dev50 and dev200 together."""
    parts = [dataset, DEV200] if dataset == "longmemeval" and store.dataset(DEV200) is not None else [dataset]
    out: dict[str, dict[str, dict]] = {}
    for part in parts:
        qs = questions(store, part)[: limit or None]
        views = Views(store, part)
        runs: dict[str, dict[int, object]] = {"bfr": {}}
        for size in SIZES:
            ground, budget = SIZE_PLAN[size]
            runs["bfr"][size] = arm_runner(views, part, "bfr", budget, ground=ground)
            for arm in PAPER_ARMS if paper_arms else ():
                if arm == "bfr-mv" and dataset in NO_MV or arm in STAGE_ONE_ONLY and size > 10:
                    continue
                runs.setdefault(arm, {})[size] = (arm_runner(views, part, arm, "C0", ground=size)
                                                  if arm in STAGE_ONE_ONLY else
                                                  arm_runner(views, part, arm, budget, ground=ground))
            runs.setdefault("bm25 top-k (mem0)", {})[size] = arm_runner(views, part, "mem0", k=size)
            runs.setdefault("dense top-k (amem)", {})[size] = arm_runner(views, part, "amem", k=size)
            runs.setdefault("rrf top-k (hybrid view)", {})[size] = hybrid_runner(views, size)
            runs.setdefault("z-fusion top-k", {})[size] = zfusion_runner(views, size)
        for system, by_size in runs.items():
            for size, run in by_size.items():
                t0 = time.perf_counter()
                r = score(qs, run)
                print(f"  {part} {system} @{size}: hit {r['turn_hit']} all {r['recall_all']} "
                      f"({time.perf_counter() - t0:.0f} s)", file=sys.stderr, flush=True)
                out.setdefault(system, {}).setdefault(str(size), []).append(r)
    return {system: {size: pooled(rs) for size, rs in by_size.items()} for system, by_size in out.items()}


def latency(store, dataset: str, limit: int = 0) -> dict:
    """``bfr`` at C6 (40 turns) with its shipped setting and with the set weights at 0 (the ranking's order),
    each question run cold then warm, both settings in turn per question (the same machine load for both):
    warm p50 / p95 in ms inside the arm. ``limit``: the first N questions."""
    qs = questions(store, dataset)[: limit or None]
    views = Views(store, dataset)
    config, budget = Config(retrieval=RetrievalConfig(ground=10)), budget_for("bfr", "C6")
    settings = {"shipped": turn_scores.DEFAULT,
                "set weights 0": replace(turn_scores.DEFAULT, set_spread=0.0, set_cover=0.0)}
    warm: dict[str, list[float]] = {k: [] for k in settings}
    for q in qs:
        ctx = ArmContext(views(q.scope_id, q.text), config, budget, "C6")
        for name, s in settings.items():
            for timed in (False, True):
                t0 = time.perf_counter()
                ours.run(ctx, q.query(), s)
                if timed:
                    warm[name].append((time.perf_counter() - t0) * 1000)
    out: dict[str, object] = {"questions": len(qs)}
    for name, ms in warm.items():
        ms.sort()
        out[name] = {"warm_ms_p50": round(statistics.median(ms), 2), "warm_ms_p95": round(ms[int(0.95 * (len(ms) - 1))], 2)}
    out["ratio_p50"] = round(out["shipped"]["warm_ms_p50"] / max(out["set weights 0"]["warm_ms_p50"], 1e-9), 2)
    return out


def pooled(rows: list[dict]) -> dict:
    """Figures of several question sets as one: each a question-weighted mean (its ``n`` questions)."""
    if len(rows) == 1:
        return {k: rows[0][k] for k in FIGURES if k in rows[0]}
    n = sum(r["n"] for r in rows)
    return {"n": n, **{k: round(sum(r[k] * r["n"] for r in rows) / n, 2) for k in FIGURES if k != "n" and k in rows[0]}}


# The rankings bench_ours_selection.py scores top-k beside bfr (its JSON's keys, by prefix) -> the plot's names
SELECTION_RANKINGS = {"z-fusion baseline": "z-fusion top-k", "dense top-k": "dense top-k (amem)",
                      "bm25 top-k": "bm25 top-k (mem0)", "rrf top-k": "rrf top-k (stemmed BM25 + dense)"}


def from_selection(sel: dict) -> dict[str, dict[str, dict[str, dict]]]:
    """Benchmark -> system -> budget -> {turn_hit, recall_all} from a bench_ours_selection.py JSON: ``bfr``'s
    held-out rows (cross-validated, ranking-only: no Stage I cover) and the top-k rankings it scores; no paper arm."""
    held = sel["cross_validation"]["held out (cross-validated, held-out folds pooled)"]
    sizes = [k for k in SIZES if all(f"hit@{k}" in r for r in held.values())]
    out: dict[str, dict[str, dict[str, dict]]] = {}
    for bench, rows in held.items():
        systems = {"bfr (held out, CV)": rows}
        for prefix, name in SELECTION_RANKINGS.items():
            key = next((k for k in sel if k.startswith(prefix)), None)
            if key is not None and bench in sel[key]:
                systems[name] = sel[key][bench]
        out[bench] = {name: {str(k): {"turn_hit": r[f"hit@{k}"], "recall_all": r[f"cer@{k}"]} for k in sizes}
                      for name, r in systems.items()}
    return out


def figure(data: dict, dataset: str, note: str = "") -> dict:
    """The plot as HTML under bench/out and PNG under docs/screenshots (the PNG export may fail: recorded)."""
    fig = plots.sufficiency_gap(data, title=f"Any gold against all gold by budget: {dataset}{note}")
    html = OUT / f"ours_sufficiency_{dataset}.html"
    fig.write_html(html, include_plotlyjs="cdn")
    png = ROOT / "docs" / "screenshots" / f"sufficiency_{dataset}.png"
    os.environ.setdefault("BROWSER_PATH", "/usr/bin/chromium")  # kaleido's Chrome: the system's Chromium
    try:
        fig.write_image(png, width=900, height=460)
    except Exception as exc:  # the JSON and the HTML stand without the image
        return {"html": html.name, "png": None, "png_error": f"{type(exc).__name__}: {exc}"[:300]}
    return {"html": html.name, "png": str(png.relative_to(ROOT))}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--db", default=str(OUT / "cache" / "ours.duckdb"))
    ap.add_argument("--datasets", default="locomo,longmemeval")
    ap.add_argument("--limit", type=int, default=0, help="the first N questions of each dataset (a smoke run)")
    ap.add_argument("--latency-only", action="store_true", help="only the latency pair (shipped against set weights "
                    "0), no curves and no plot (write it to another --out)")
    ap.add_argument("--from-selection", default="", help="plot a bench_ours_selection.py JSON's ranking-only rows "
                    "(bfr held out, the top-k rankings; no paper arm) instead of running the arms")
    ap.add_argument("--no-paper-arms", action="store_true", help="bfr and the top-k rankings only, no plot (write it "
                    "to another --out)")
    ap.add_argument("--out", default=str(OUT / "ours_sufficiency.json"))
    args = ap.parse_args()
    if args.from_selection:
        sel = json.loads(Path(args.from_selection).read_text(encoding="utf-8"))
        data = from_selection(sel)
        result = {"benchmark": "ours_sufficiency (ranking-only, from the selection)", "source": args.from_selection,
                  "note": "bfr's rows are held out (5-fold CV of the selection), ranking-only top-k without Stage I's "
                          "cover; the paper's arms are not in it (they need the full run of this bench)", **data}
        for dataset in data:
            result[f"figure_{dataset}"] = figure(data[dataset], dataset, " (ranking-only, bfr held out)")
        Path(args.out).write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
        print(f"wrote {args.out}", file=sys.stderr)
        return
    t0 = time.time()
    store = open_all(Path(args.db))
    result: dict[str, object] = {
        "benchmark": "ours_sufficiency", "load_at_start": list(os.getloadavg()),
        "settings": asdict(turn_scores.DEFAULT),
        "size_plan": {str(s): {"ground": SIZE_PLAN[s][0], "budget": str(SIZE_PLAN[s][1])} for s in SIZES},
        "development": "bfr rows are development figures (its setting was chosen on these questions); the paper's "
                       "arms and the top-k rankings choose no weight on them",
        "limit": args.limit, "latency_only": args.latency_only}
    for dataset in [d for d in args.datasets.split(",") if d]:
        print(f"{dataset} ...", file=sys.stderr, flush=True)
        if not args.latency_only:
            data = curves(store, dataset, args.limit, not args.no_paper_arms)
            result[dataset] = data
            if not args.no_paper_arms:
                result[f"figure_{dataset}"] = figure(data, dataset)
        result[f"latency_{dataset}"] = latency(store, dataset, args.limit)
    store.close()
    result["load_at_end"] = list(os.getloadavg())
    result["elapsed_s"] = round(time.time() - t0, 1)
    Path(args.out).write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {args.out} in {result['elapsed_s']} s", file=sys.stderr)


if __name__ == "__main__":
    main()
