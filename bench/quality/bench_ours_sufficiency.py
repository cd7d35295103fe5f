"""The sufficiency gap by budget: at k = 5, 10, 20 and 40 turns, how often a gold turn is among the first k
(any gold: Turn Hit / Gold Hit) against how often every gold turn is (all gold: recall_all / CER), for our arm
``conv-fusion`` (``bfr`` is its alias), the paper's arms, the paper's baselines and the simple top-k rankings,
on one benchmark in a store.

* The arms (``bench.lib.arm_rows.ARMS``: mem0, amem, com, mragent-flat, fca-ms, bfr-text, bfr-mv, bfr) run once
  per scoreable question the way ``bench.checks.bench_arm_rows dump`` runs them (``pipeline.run_query`` at each arm's own
  default budget, offline: no LLM, the rules stand-in wherever an arm calls a model); each evidence set is
  taken in the order the arm built it and cut to its first k turns. ``conv-fusion`` runs at the shipped setting
  (``bfr_core/method/ours.toml`` as it is; its sha256 is recorded). The paper's one-shot baselines return
  ``RetrievalConfig.k`` (10) turns, so at 20 and 40 they hold their whole set: ``reached`` says so and
  the plot leaves those points out (``ui.sufficiency.REACH``).
* The simple rankings (:data:`RANKINGS`: stemmed BM25, the store's dense view, their RRF, the z-fusion of
  both) are ranked once per question over its whole scope and cut at k, as
  ``bench.quality.bench_ours_selection`` scores them.

``conv-fusion``'s figures are **development** figures: its weights were chosen on these benchmarks' questions
(``bench.quality.bench_ours_selection``; its held-out figures are ``head_model.json``'s, held out twice). On a
benchmark the head model's trees were trained on (``head_training.TRAIN``), its rows are **cross-fitted**: each
question's 40 turns are its set order with the head re-ordered by trees trained on the other four conversation
folds (``head_training.fold_trees``, the folds of ``bench_head_model``), over the selection's cases of ``--cases-db``;
the arm's own rows, whose trees saw every question, are kept as ``in_sample``, and ``cross_fit`` counts the
questions whose set at 40 is the arm's. These are whole-benchmark figures. No arm or ranking here chose a weight
on them. Writes one benchmark's entry into
``ui.sufficiency.PATH`` (``bench/out/sufficiency_budgets.json``; the Trace page reads it) and its plot
(``plots.sufficiency_gap``) as ``docs/screenshots/sufficiency_<key>.png`` (Plotly's image export through
the system's Chromium) and ``bench/out/sufficiency_<key>.html``.

Run (one benchmark per run; ``--rows`` reuses a ``bench.checks.bench_arm_rows dump`` of the same code and store):
``nice .venv/bin/python -m bench.quality.bench_ours_sufficiency --db STORE --dataset locomo --key locomo
--name LoCoMo [--rows DUMP.json] [--limit N]``; ``--latency-only``: ``conv-fusion`` at C6 with the shipped setting
against its set weights at 0 (warm p50 / p95), written to ``bench/out/ours_sufficiency_latency.json``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path

from bench.lib.arm_rows import ARMS, dump
from bench.lib.git_commit import commit
from bench.lib.head_training import TRAIN, cross_fitted, examples_of, fold_of, fold_trees
from bench.lib.ours_runs import OUT, ROOT, Views, questions
from bench.lib.selection import FOLDS, SEARCHED, cases_in
from bench.lib.sufficiency import RANKINGS, SIZES, curves
from bfr_core import plots
from bfr_core.arm_names import CONV_FUSION, canonical_arm
from bfr_core.config import Config, RetrievalConfig
from bfr_core.method import ours, turn_scores
from bfr_core.method.budgets import budget_for
from bfr_core.method.variants import score_variant
from bfr_core.pipeline import ArmContext
from bfr_core.store import Store
from ui import sufficiency

SETTING = ROOT / "bfr_core" / "method" / "ours.toml"
DEVELOPMENT = ("development: the shipped weights were chosen on this benchmark's questions "
               "(bench_ours_selection.py); a whole-benchmark figure, not held out")
CROSS_FITTED = ("development: the shipped weights were chosen on this benchmark's questions (bench_ours_selection.py); "
                "the head model re-orders each question's head with trees trained on the other conversation folds "
                "(cross-fitted, bench_head_model.py's folds)")
PAPER = "the paper's arm, offline (the rules stand-in where it calls a model); no weight chosen on these questions"
BASELINE = ("the paper's baseline, offline; no weight chosen on these questions; it returns its default k "
            "(10) turns, so larger budgets hold its whole set")
RANKING = "a top-k ranking; no weight chosen on these questions (held out)"
LABELS = {CONV_FUSION: DEVELOPMENT, "fca-ms": PAPER, "bfr-text": PAPER, "bfr-mv": PAPER,
          **dict.fromkeys(("mem0", "amem", "com", "mragent-flat"), BASELINE), **dict.fromkeys(RANKINGS, RANKING)}


def ranking_rows(store: Store, dataset: str, qs: Sequence, top: int = max(SIZES)) -> dict[str, list[str]]:
    """Each of :data:`RANKINGS`' first ``top`` turns per question over its whole scope, keyed as a dump's rows."""
    views = Views(store, dataset)
    out: dict[str, list[str]] = {}
    for q in qs:
        v = views(q.scope_id, q.text)
        for name, variant in RANKINGS.items():
            order = turn_scores.ranking(score_variant(v, q.query(), variant).final)[:top]
            out[f"{name}:{q.question_id}"] = [v.turns[int(i)].turn_id for i in order]
    return out


def cross_fitted_rows(db: str, dataset: str) -> dict[str, list[str]]:
    """``conv-fusion``'s first 40 turns per question of ``dataset`` (keyed as a dump's rows), its head re-ordered
    by the trees of the fold that held out its conversation (``head_training.cross_fitted``) over the selection's
    cases in the store at ``db``; empty when the trees were not trained on ``dataset``."""
    if dataset not in TRAIN:
        return {}
    cases = cases_in(Path(db))
    examples = examples_of(cases, SEARCHED)
    folds = fold_of(cases, FOLDS)
    orders = cross_fitted(cases, examples, folds, fold_trees(examples, folds, FOLDS))[dataset]
    ids = {c.question_id: c.ids for c in cases[dataset]}
    return {f"{CONV_FUSION}:{q}": [ids[q][int(i)] for i in o[:max(SIZES)]] for q, o in orders.items()}


def arm_rows(db: str, dataset: str, rows: str, limit: int) -> tuple[dict[str, list[str]], str]:
    """The arms' evidence per question: a dump of this code and store (``rows``), or ``arm_rows.dump`` run now."""
    if rows:
        data = json.loads(Path(rows).read_text(encoding="utf-8"))
        return {k: v[0] for k, v in data.items()}, rows
    if limit:
        raise SystemExit("--limit needs --rows (a dump runs every scoreable question)")
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "rows.json"
        dump(db, dataset, ARMS.split(","), str(out))
        data = json.loads(out.read_text(encoding="utf-8"))
    return {k: v[0] for k, v in data.items()}, "bench_arm_rows.dump, this run"


def latency(store, dataset: str, limit: int = 0) -> dict:
    """``conv-fusion`` at C6 (40 turns) with its shipped setting and with the set weights at 0 (the ranking's order),
    each question run cold then warm, both settings in turn per question (the same machine load for both):
    warm p50 / p95 in ms inside the arm. ``limit``: the first N questions."""
    qs = questions(store, dataset)[: limit or None]
    views = Views(store, dataset)
    config, budget = Config(retrieval=RetrievalConfig(ground=10)), budget_for(CONV_FUSION, "C6")
    settings = {"shipped": turn_scores.DEFAULT,
                "set weights 0": turn_scores.DEFAULT.ranking_only()}
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


def figure(entry: dict, key: str) -> dict:
    """The benchmark's plot as HTML under bench/out and PNG under docs/screenshots (a failed PNG export is recorded)."""
    fig = plots.sufficiency_gap(sufficiency.curves(entry), title=f"{entry['name']}: any gold (solid) against "
                                f"all gold (dashed) in the first k turns, {entry['n']:,} questions ({CONV_FUSION}: development)")
    html = OUT / f"sufficiency_{key}.html"
    fig.write_html(html, include_plotlyjs="cdn")
    png = ROOT / "docs" / "screenshots" / f"sufficiency_{key}.png"
    os.environ.setdefault("BROWSER_PATH", "/usr/bin/chromium")  # kaleido's Chrome: the system's Chromium
    try:
        fig.write_image(png, width=1100, height=fig.layout.height)
    except Exception as exc:  # the JSON and the HTML stand without the image
        return {"html": html.name, "png": None, "png_error": f"{type(exc).__name__}: {exc}"[:300]}
    return {"html": html.name, "png": str(png.relative_to(ROOT))}


def measure(args: argparse.Namespace) -> None:
    t0, code = time.time(), commit(ROOT)  # before this run writes its image (a tracked file)
    rows, source = arm_rows(args.db, args.dataset, args.rows, args.limit)  # before this process opens the store
    rows = {f"{canonical_arm(k.split(':', 1)[0])}:{k.split(':', 1)[1]}": v for k, v in rows.items()}
    held = cross_fitted_rows(args.cases_db, args.dataset)
    store = Store(args.db)
    qs = questions(store, args.dataset)[: args.limit or None]
    gold = {q.question_id: frozenset(q.gold) for q in qs}
    rows.update(ranking_rows(store, args.dataset, qs))
    kind = store.dataset(args.dataset)["kind"]
    store.close()
    labels = {**LABELS, CONV_FUSION: CROSS_FITTED if held else DEVELOPMENT}
    entry = {"name": args.name, "kind": kind, "dataset": args.dataset, "store": args.db, "arm_rows": source,
             "n": sum(1 for g in gold.values() if g), "limit": args.limit,
             "labels": {s: labels.get(s, "") for s in (*map(canonical_arm, ARMS.split(",")), *RANKINGS)}}
    if held:
        own = {k: v for k, v in rows.items() if k.split(":", 1)[0] == CONV_FUSION}
        mine = {k: v for k, v in held.items() if k.split(":", 1)[1] in gold}
        entry["in_sample"] = curves(own, gold)[CONV_FUSION]
        entry["cross_fit"] = {"cases": args.cases_db, "replaced": len(mine), "same set at 40": sum(
            set(v) == set(own.get(k, ())[:max(SIZES)]) for k, v in mine.items())}
        rows.update(mine)
    entry["systems"] = {s: {"label": labels.get(s, ""), "budgets": b} for s, b in curves(rows, gold).items()}
    entry["figure"] = figure(entry, args.key)
    entry["elapsed_s"] = round(time.time() - t0, 1)
    path = Path(args.out)
    result = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    result.update({
        "benchmark": "sufficiency_budgets", "commit": code,
        "ours_toml_sha256": hashlib.sha256(SETTING.read_bytes()).hexdigest(),
        "settings": asdict(turn_scores.DEFAULT), "budgets": list(SIZES),
        "llm": "none (offline; the rules stand-in wherever an arm calls a model)",
        "figures": "any: % of questions with a gold turn among the first k turns (Turn Hit / Gold Hit); all: % with "
                   "every gold turn among them (recall_all / CER); gap = any - all; over the questions with gold turns",
        "development": f"{CONV_FUSION}'s figures are development figures (its weights were chosen on LoCoMo, LongMemEval dev50 + "
                       "dev200, LoCoMo-Plus dev and BEAM 100K); where its head model's trees trained on a benchmark, "
                       "its rows are cross-fitted (each question's head re-ordered by trees that never saw its "
                       "conversation) and the arm's own rows are its in_sample figures; every other system chose no "
                       "weight on them"})
    result.setdefault("benchmarks", {})[args.key] = entry
    result["benchmarks"][args.key]["commit"] = result["commit"]
    path.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {args.key} into {path} in {entry['elapsed_s']} s", file=sys.stderr)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--db", default=str(OUT / "cache" / "ours.duckdb"))
    ap.add_argument("--dataset", default="locomo", help="the dataset id in the store")
    ap.add_argument("--key", default="", help="the benchmark's key in the JSON and the image's name (default: --dataset)")
    ap.add_argument("--name", default="", help="the benchmark's display name (default: --key)")
    ap.add_argument("--cases-db", default=str(OUT / "cache" / "ours.duckdb"),
                    help="the store the selection's cases come from (cross-fitted rows on a benchmark the trees trained on)")
    ap.add_argument("--rows", default="", help="a bench_arm_rows.py dump of the arms on this store and code")
    ap.add_argument("--limit", type=int, default=0, help="the first N questions (a smoke run; needs --rows)")
    ap.add_argument("--out", default=str(sufficiency.PATH))
    ap.add_argument("--latency-only", action="store_true", help="only the latency pair (shipped against set weights "
                    "0) on --dataset, written to --latency-out")
    ap.add_argument("--latency-out", default=str(OUT / "ours_sufficiency_latency.json"))
    args = ap.parse_args()
    args.key = args.key or args.dataset
    args.name = args.name or args.key
    if not args.latency_only:
        measure(args)
        return
    out = Path(args.latency_out)
    store = Store(args.db)
    load = list(os.getloadavg())
    entry = latency(store, args.dataset, args.limit)
    store.close()
    entry.update({"load_at_start": load, "load_at_end": list(os.getloadavg()), "limit": args.limit,
                  "settings": asdict(turn_scores.DEFAULT)})
    # one dataset per run: the other datasets' entries stay, each with the setting and load it ran under
    result = json.loads(out.read_text(encoding="utf-8")) if out.exists() else {}
    kept = {k: v for k, v in result.items() if k.startswith("latency_") and isinstance(v, dict)}
    result = {"benchmark": "ours_sufficiency_latency", **kept, f"latency_{args.dataset}": entry}
    out.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
