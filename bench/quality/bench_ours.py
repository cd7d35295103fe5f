"""Benchmark of our arm ``bfr``: quality-versus-size curve, ablation, LongMemEval dev50, latency.

Everything runs through the real pipeline (store -> ``retrieval.scope.scope_views`` -> ``pipeline.run_query``,
or ``ours.run_variant`` for the ablation: bfr's pipeline over a variant's ranking), on a store it builds once under
``bench/out/cache/`` (or ``--db``). Writes

* ``bench/out/ours.json`` - on LoCoMo (1,536 scoreable questions, ``curve``) and LongMemEval dev50
  (``curve_longmemeval``): Gold Hit / Turn Hit / CER (= recall_all) / ER by evidence-set size
  (5, 10, 20, 30, 40) for ``bfr`` (development figures: its setting was chosen on these questions),
  the plain fusion (stemmed BM25 + the dense view, RRF top-k) and the z-fusion (``ZFUSION``),
  ``bfr-mv`` at its grid points, each by question type (``by_type``); ``--baselines`` adds BM25,
  dense and hybrid-view top-k. ``longmemeval_dev50``: the 40-turn table, the b3c15d39 check and
  warm latency; ``latency``: LoCoMo warm latency.
* ``bench/out/ours_ablation.json`` - each component of ``bfr`` removed in turn, at 40 and 10 turns, on LoCoMo
  (``results``) and dev50 (``results_longmemeval``).
* ``bench/out/ours_curve.html`` / ``ours_curve_longmemeval.html`` (and ``.png`` when kaleido can render).

Run: ``.venv/bin/python -m bench.quality.bench_ours [--db X] [--skip-ablation] [--skip-lme]
[--baselines] [--mv-points C0,C1,C2,C6]``.
How the weights were chosen: ``bench_ours_selection.py`` (``ours_selection.json``).
Does not cover: answer-level scores (no LLM here), the full 500-question LongMemEval-S.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, replace
from pathlib import Path

from bench.lib.ours_runs import (
    OUT,
    PAIRED,
    SIZE_PLAN,
    Runner,
    Views,
    arm_runner,
    hybrid_runner,
    open_store,
    paired,
    plain_fusion_runner,
    questions,
    rounded,
    score,
    variant_runner,
    zfusion_runner,
)
from bfr_core.ingest.sources import data_dir
from bfr_core.method import turn_scores
from bfr_core.method.variants import Variant
from bfr_core.store import Store

ROOT = Path(__file__).resolve().parents[2]

DATA = data_dir()
SIZES = (5, 10, 20, 30, 40)
MV_POINTS = ("C0", "C1", "C2", "C6")  # C4 lands on C6 (40 turns, within 0.3 points)
SHUTTER = ("b3c15d39", ("answer_05d808e6_1_11", "answer_05d808e6_2_1"))


# The ablation: each component removed (or, for the pieces the shipped setting leaves off, added) in turn;
# each variant differs from the shipped ranking (variants.Variant()) in one piece.
SHIPPED = turn_scores.DEFAULT
ABLATIONS: dict[str, Variant] = {
    "full": Variant(),
    "- stemming (the shared, unstemmed BM25 view)": Variant(bm25="plain"),
    "+ speaker prefix in BM25 (as the shared views)": Variant(bm25="stemmed+speaker"),
    "- z-score fusion (RRF instead)": Variant(fusion="rrf"),
    "- dense": Variant(replace(SHIPPED, w_dense=0.0)),
    "- BM25": Variant(w_bm25=0.0),
    "- dense view (the static vectors alone)": Variant(dense_view=False),
    "- speaker prior": Variant(replace(SHIPPED, speaker=0.0)),
    "- date prior": Variant(replace(SHIPPED, dates=0.0)),
    "- context +-1": Variant(replace(SHIPPED, near1=0.0)),
    "- context +-2": Variant(replace(SHIPPED, near2=0.0)),
    "- context (both)": Variant(replace(SHIPPED, near1=0.0, near2=0.0)),
    "- Stage I cover (E0 = score order)": Variant(cover=False),
    "- head model (the set's 40-turn head in set order)": Variant(replace(SHIPPED, head_model="")),
    "- session relevance": Variant(replace(SHIPPED, session=0.0)),
    "+ session relevance from its 2 best turns (not its best)": Variant(replace(SHIPPED, session_top=2)),
    "+ session topic (1.0, MiniLM vectors)": Variant(doc_dense=1.0, doc_view="short"),
    "+ session BM25 (0.5)": Variant(doc_bm25=0.5),
    "+ recency (0.3)": Variant(recency=0.3),
    "- stating-role prior (fires on user/assistant stores only)": Variant(replace(SHIPPED, role=0.0)),
    **({"- remark regime (words always lead; fires on remarks only)": Variant(replace(SHIPPED, remark="off"))}
       if SHIPPED.remark != "off" else
       {"+ remark regime (form gate: the dense view alone on remarks)": Variant(replace(SHIPPED, remark="form"))}),
    **({"- clauses (a remark scored whole in the remark regime)": Variant(replace(SHIPPED, remark_clauses="off"))}
       if SHIPPED.remark_clauses != "off" else
       {"+ clauses (a remark's clauses' mean in the remark regime)": Variant(replace(
           SHIPPED, remark=SHIPPED.remark if SHIPPED.remark != "off" else "form", remark_clauses="mean"))}),
    "+ Rocchio feedback from the top 10 in the remark regime": Variant(
        replace(SHIPPED, remark=SHIPPED.remark if SHIPPED.remark != "off" else "form"), prf=10),
}


# ------------------------------------------------------------------------------------------------
# Store and questions
# ------------------------------------------------------------------------------------------------


# ------------------------------------------------------------------------------------------------
# Runners: question -> (evidence, calls, elapsed ms)
# ------------------------------------------------------------------------------------------------


# ------------------------------------------------------------------------------------------------
# Sections
# ------------------------------------------------------------------------------------------------


PLAIN = "plain fusion top-k (stemmed bm25 + dense, rrf)"
ZF = "z-fusion top-k (stemmed bm25 + static dense, z-scores, no priors, no context)"
DEVELOPMENT = ("bfr rows are development figures: its shipped setting was chosen on these questions "
               "(bench_ours_selection.py); the held-out figures are ours_selection.json's cross_validation. "
               "The fusion baselines choose no weight: their figures are held out.")


def curve(store: Store, dataset: str = "locomo", *, baselines: bool = False,
          mv_points: Sequence[str] = MV_POINTS) -> dict:
    """Quality by set size for bfr and the plain stemmed fusion (and, with ``baselines``, BM25 / dense /
    hybrid-view top-k); bfr-mv at ``mv_points``."""
    qs = questions(store, dataset)
    views = Views(store, dataset)
    halves = dataset == "locomo"
    out: dict[str, dict] = {"bfr": {}, PLAIN: {}, ZF: {}, "bfr-mv (grid)": {}}
    if baselines:
        out.update({"bm25 top-k (mem0)": {}, "dense top-k (amem)": {}, "rrf top-k (hybrid view)": {}})
    pairs: dict[str, dict] = {}
    for size in SIZES:
        ground, budget = SIZE_PLAN[size]
        hits: dict[str, dict[str, bool]] = {name: {} for name in out}
        r = score(qs, arm_runner(views, dataset, "bfr", budget, ground=ground), halves=halves, hits=hits["bfr"])
        r["budget"] = budget if isinstance(budget, str) else asdict(budget)
        r["ground"] = ground
        out["bfr"][str(size)] = r
        out[PLAIN][str(size)] = score(qs, plain_fusion_runner(views, size), halves=halves and size == 40, hits=hits[PLAIN])
        out[ZF][str(size)] = score(qs, zfusion_runner(views, size), halves=halves and size == 40, hits=hits[ZF])
        if baselines:
            for name, run in (("bm25 top-k (mem0)", arm_runner(views, dataset, "mem0", k=size)),
                              ("dense top-k (amem)", arm_runner(views, dataset, "amem", k=size))):
                out[name][str(size)] = score(qs, run, hits=hits[name])
            out["rrf top-k (hybrid view)"][str(size)] = score(qs, hybrid_runner(views, size),
                                                              halves=halves and size == 40,
                                                              hits=hits["rrf top-k (hybrid view)"])
        pairs[str(size)] = paired(hits)
        _log(out, size)
    out[PAIRED] = pairs
    for point in mv_points:
        try:
            r = score(qs, arm_runner(views, dataset, "bfr-mv", point))
        except Exception as exc:  # another module's bug must not cost the rest of the benchmark
            out["bfr-mv (grid)"][point] = {"error": f"{type(exc).__name__}: {exc}"[:300]}
            print(f"  bfr-mv {point}: failed ({exc})", file=sys.stderr)
            continue
        r["budget"] = point
        out["bfr-mv (grid)"][point] = r
        print(f"  bfr-mv {point}: size {r['set_size']} GH {r['gold_hit']} CER {r['cer']}", file=sys.stderr)
    return out


def _log(out: dict, size: int) -> None:
    line = "  ".join(f"{name.split()[0]} {v[str(size)]['turn_hit']}/{v[str(size)]['cer']}"
                     for name, v in out.items() if str(size) in v and name != PAIRED)
    print(f"  size {size}: {line}", file=sys.stderr)


def latency(store: Store) -> dict:
    """bfr at C6 on every LoCoMo question, each run twice in a row: first (caches filled from the
    store), then warm (reported)."""
    qs = questions(store, "locomo")
    views = Views(store, "locomo")
    run = arm_runner(views, "locomo", "bfr", "C6")
    cold, warm = [], []
    for q in qs:
        cold.append(run(q)[2])
        warm.append(run(q)[2])
    warm.sort()
    return {"questions": len(qs), "warm_ms_p50": rounded(statistics.median(warm)),
            "warm_ms_p95": rounded(warm[int(0.95 * (len(warm) - 1))]), "warm_ms_mean": rounded(statistics.fmean(warm)),
            "cold_ms_p50": rounded(statistics.median(cold)), "cold_ms_max": rounded(max(cold)),
            "note": "elapsed inside the arm (Trace.elapsed_ms); views built once per scope before timing"}


def longmemeval(store: Store, with_mv: bool = True) -> dict:
    if store.dataset("longmemeval") is None:
        return {"skipped": "longmemeval not in the store"}
    qs = questions(store, "longmemeval")
    views = Views(store, "longmemeval")
    arms: dict[str, Runner] = {
        "bfr (C6)": arm_runner(views, "longmemeval", "bfr", "C6"),
        **({"bfr-mv (C6)": arm_runner(views, "longmemeval", "bfr-mv", "C6")} if with_mv else {}),
        PLAIN.replace("top-k", "top-40"): plain_fusion_runner(views, 40),
        ZF.replace("top-k", "top-40"): zfusion_runner(views, 40),
        "bm25 top-40 (mem0)": arm_runner(views, "longmemeval", "mem0", k=40),
        "rrf top-40 (hybrid view)": hybrid_runner(views, 40),
    }
    out: dict[str, object] = {"n_questions": len(qs),
                              "note": "Turn Hit over all questions (unannotated = miss); recall_all over "
                                      "questions with gold turns (set-level: k = set size)"}
    for name, run in arms.items():
        try:
            r = score(qs, run)
        except Exception as exc:  # as in curve(): record, continue
            out[name] = {"error": f"{type(exc).__name__}: {exc}"[:300]}
            continue
        out[name] = {k: r[k] for k in ("turn_hit", "recall_all", "set_size", "calls", "ms_p50", "by_type")}
    # Every dev50 question has its own haystack, so the pass above met each scope cold (stemmed BM25
    # and Stage I's term sets are built on first use). Warm = the same question again right away.
    cold, warm = [], []
    for q in qs:
        cold.append(arms["bfr (C6)"](q)[2])
        warm.append(arms["bfr (C6)"](q)[2])
    out["bfr (C6)"].pop("ms_p50", None)
    out["bfr (C6)"]["ms_p50_warm"] = rounded(statistics.median(warm))
    out["bfr (C6)"]["ms_p50_first_question_of_scope"] = rounded(statistics.median(cold))
    qid, gold = SHUTTER
    q = next((x for x in qs if x.question_id == qid), None)
    if q is not None:
        ev = arms["bfr (C6)"](q)[0]
        out["b3c15d39"] = {"gold": list(gold), "retrieved": [g for g in gold if g in ev], "set_size": len(ev),
                           "both": all(g in ev for g in gold)}
    return out


def ablation(store: Store, dataset: str = "locomo") -> dict:
    qs = questions(store, dataset)
    views = Views(store, dataset)
    # LongMemEval's issue-16 measures: Turn Hit over every question, recall_all over those with gold
    keys = ("gold_hit", "cer") if dataset == "locomo" else ("turn_hit", "recall_all")
    out: dict[str, dict] = {}
    for size, (ground, budget) in ((40, SIZE_PLAN[40]), (10, SIZE_PLAN[10])):
        rows = {}
        for name, variant in ABLATIONS.items():
            r = score(qs, variant_runner(views, variant, budget, ground))
            rows[name] = {k: r[k] for k in (*keys, "er", "set_size", "by_type")}
            print(f"  ablation {dataset} @{size} {name}: {r[keys[0]]}/{r[keys[1]]}", file=sys.stderr)
        full = rows["full"]
        for r in rows.values():
            for k in keys:
                r[f"d_{k}"] = rounded(r[k] - full[k])
        out[str(size)] = rows
    return out


def figure(curves: dict, path: Path, title: str) -> dict:
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    fig = make_subplots(rows=1, cols=2, subplot_titles=("Turn Hit / Gold Hit (%)", "CER = recall_all (%)"))
    styles = {"bfr": ("#d62728", "solid"), "bm25 top-k (mem0)": ("#1f77b4", "dash"),
              "dense top-k (amem)": ("#2ca02c", "dot"), "rrf top-k (hybrid view)": ("#9467bd", "dashdot"), PLAIN: ("#ff7f0e", "dash"),
              ZF: ("#8c564b", "dot")}
    for name, (color, dash) in styles.items():
        if name not in curves:
            continue
        pts = curves[name]
        xs = [pts[str(s)]["set_size"] for s in SIZES]
        for col, metric in ((1, "gold_hit"), (2, "cer")):
            fig.add_trace(go.Scatter(x=xs, y=[pts[str(s)]["turn_hit" if metric == "gold_hit" else metric] for s in SIZES], mode="lines+markers", name=name,
                                     line={"color": color, "dash": dash}, legendgroup=name, showlegend=col == 1),
                          row=1, col=col)
    mv = {k: v for k, v in curves["bfr-mv (grid)"].items() if "error" not in v}
    for col, metric in ((1, "gold_hit"), (2, "cer")):
        fig.add_trace(go.Scatter(x=[v["set_size"] for v in mv.values()], y=[v["turn_hit" if metric == "gold_hit" else metric] for v in mv.values()],
                                 mode="markers+text", text=list(mv), textposition="bottom right", name="bfr-mv (grid)",
                                 marker={"color": "black", "symbol": "x", "size": 9}, legendgroup="mv",
                                 showlegend=col == 1), row=1, col=col)
    fig.update_xaxes(title_text="mean evidence-set size (turns)")
    fig.update_layout(title=title, height=460,
                      width=1100, template="plotly_white")
    fig.write_html(path.with_suffix(".html"), include_plotlyjs="cdn")
    try:
        fig.write_image(path.with_suffix(".png"), scale=1.5)
        return {"html": path.with_suffix(".html").name, "png": path.with_suffix(".png").name}
    except Exception as exc:  # kaleido needs a browser; the HTML is the figure of record
        return {"html": path.with_suffix(".html").name, "png": None, "png_error": f"{type(exc).__name__}: {exc}"[:200]}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--db", default=str(OUT / "cache" / "ours.duckdb"))
    ap.add_argument("--skip-ablation", action="store_true")
    ap.add_argument("--skip-lme", action="store_true")
    ap.add_argument("--baselines", action="store_true", help="also BM25 / dense / hybrid-view top-k in the curves")
    ap.add_argument("--mv-points", default=",".join(MV_POINTS), help="bfr-mv grid points in the LoCoMo curve")
    ap.add_argument("--lme-mv-points", default="C6",
                    help="bfr-mv grid points on dev50 ('' = none: its entity map runs NER over every haystack, "
                         "~20 s each cold; its dev50 rows are in method.json / ours_eval_longmemeval.json)")
    args = ap.parse_args()
    store = open_store(Path(args.db))
    t0 = time.time()
    result: dict[str, object] = {
        "benchmark": "ours", "python": platform.python_version(), "machine": platform.machine(),
        "load_at_start": list(os.getloadavg()), "development": DEVELOPMENT,
        "settings": asdict(turn_scores.DEFAULT),
        "size_plan": {str(k): {"ground": g, "budget": b if isinstance(b, str) else asdict(b)}
                      for k, (g, b) in SIZE_PLAN.items()},
    }
    print("LoCoMo curve ...", file=sys.stderr)
    mv = tuple(p for p in args.mv_points.split(",") if p)
    result["curve"] = curve(store, "locomo", baselines=args.baselines, mv_points=mv)
    if not args.skip_lme:
        print("LongMemEval dev50 curve ...", file=sys.stderr)
        lme_mv = tuple(p for p in args.lme_mv_points.split(",") if p)
        result["curve_longmemeval"] = curve(store, "longmemeval", baselines=args.baselines, mv_points=lme_mv)
        print("LongMemEval dev50 ...", file=sys.stderr)
        result["longmemeval_dev50"] = longmemeval(store, with_mv=bool(lme_mv))
    print("latency ...", file=sys.stderr)
    result["latency"] = latency(store)
    result["figure"] = figure(result["curve"], OUT / "ours_curve",
                              "LoCoMo (1,536 scoreable questions): quality versus evidence-set size")
    if "curve_longmemeval" in result:
        result["figure_longmemeval"] = figure(result["curve_longmemeval"], OUT / "ours_curve_longmemeval",
                                              "LongMemEval dev50: quality versus evidence-set size")
    result["load_at_end"] = list(os.getloadavg())
    result["elapsed_s"] = round(time.time() - t0, 1)
    (OUT / "ours.json").write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {OUT / 'ours.json'}", file=sys.stderr)
    if not args.skip_ablation:
        print("ablation ...", file=sys.stderr)
        abl = {"benchmark": "ours_ablation", "settings": asdict(turn_scores.DEFAULT),
               "note": "each component of bfr removed in turn, full pipeline; d_* = change against full. "
                       "LongMemEval dev50: turn_hit over all 50, recall_all over the 48 with gold",
               "questions": {"locomo": len(questions(store, "locomo"))}, "results": ablation(store)}
        if not args.skip_lme:
            abl["questions"]["longmemeval"] = len(questions(store, "longmemeval"))
            abl["results_longmemeval"] = ablation(store, "longmemeval")
        if store.dataset("locomo-plus") is not None:  # bench_ours_selection.py ingests LoCoMo-Plus's dev half
            abl["questions"]["locomo-plus"] = len(questions(store, "locomo-plus"))
            abl["results_locomo_plus"] = ablation(store, "locomo-plus")
        (OUT / "ours_ablation.json").write_text(json.dumps(abl, indent=1) + "\n", encoding="utf-8")
        print(f"wrote {OUT / 'ours_ablation.json'}", file=sys.stderr)


if __name__ == "__main__":
    main()
