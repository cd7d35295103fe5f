"""LoCoMo-Plus (the dev half in ../shared/data): every arm and four reference rankings at 10 and 40 turns,
Turn Hit and recall_all per relation type; and LoCoMo's own questions asked in the stitched
conversations beside the same questions over plain LoCoMo, to show the stitching changes nothing there.

Datasets (ingested into ``--db`` when missing; vectors and entities are cached by text, so the LoCoMo
ingest after the stitched one encodes nothing new): ``locomo-plus`` (``bfr ingest locomo-plus
locomo_plus_dev.json --locomo locomo10.json --locomo-questions``) and ``locomo`` (``locomo10.json``).
The LoCoMo questions are a seeded sample stratified by type (``--locomo-sample``, default 200; 0 =
none), the same ids on both sides. ``--provider local`` gives the arms the local model on the trigger
items (``bfr``'s associative step in its remark regime; replies cached in ``--db``). Writes
``bench/out/locomo_plus.json`` with the machine's load and the provider.

    .venv/bin/python -m bench.quality.bench_locomo_plus
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import asdict
from pathlib import Path

from bench.lib.byo_common import PAIRED, code_fingerprint, machine, paired, plus_arguments, run_rows, summary
from bfr_core.config import LLMConfig
from bfr_core.evaluation.sampling import stratified_sample
from bfr_core.ingest import ingest
from bfr_core.llm import make_llm
from bfr_core.method import turn_scores
from bfr_core.pipeline import provider_label
from bfr_core.store import Store

ROOT = Path(__file__).resolve().parents[2]

PLUS, LOCOMO = "locomo-plus", "locomo"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    plus_arguments(ap)
    ap.add_argument("--locomo-sample", type=int, default=200)
    ap.add_argument("--limit", type=int, default=None, help="only the first N trigger questions (file order)")
    ap.add_argument("--provider", default="rules", choices=("rules", "local"),
                    help="the arms' model for the trigger items (bfr's associative step, Stage I's decomposition): "
                         "offline rules, or the local GGUF model (scripts/install_local_llm.sh; replies cached in --db)")
    ap.add_argument("--out", default=str(ROOT / "bench" / "out" / "locomo_plus.json"))
    args = ap.parse_args()
    store = Store(args.db)
    took = {}
    for name, kind, path, options in ((PLUS, "locomo-plus", args.plus, {"locomo": args.locomo, "locomo_questions": True}),
                                      (LOCOMO, "locomo", args.locomo, {})):
        if store.dataset(name) is None and (name == PLUS or args.locomo_sample):
            t0 = time.perf_counter()
            ingest(store, kind, path, name=name, options=options, entities=not args.cached_ner_only)
            took[name] = round(time.perf_counter() - t0, 1)
    arms, ks = args.arms.split(","), [int(k) for k in args.ks.split(",")]
    log = lambda m: print(m, flush=True)  # noqa: E731
    every = store.questions(PLUS)
    triggers = [q for q in every if not q.qtype.startswith("locomo/")][: args.limit]
    load_before, t0 = machine(), time.perf_counter()
    out = {"command": "bench/quality/bench_locomo_plus.py " + " ".join(sys.argv[1:]), "source": args.plus,
           "ingest_s": took, "machine_before": load_before, "cached_ner_only": args.cached_ner_only,
           "bfr_setting": asdict(turn_scores.DEFAULT), "code": code_fingerprint()}
    only = args.cached_ner_only
    llm = None if args.provider == "rules" else make_llm(LLMConfig(provider=args.provider), store)
    out["provider"] = provider_label(llm)
    rows = run_rows(store, PLUS, triggers, arms, ks, lambda q: {"relation": q.qtype}, log=log, cached_ner_only=only,
                    llm=llm)
    out["triggers"] = {"n": len(triggers), "systems": summary(rows, ["relation"]),
                       PAIRED: paired(rows)}
    if args.locomo_sample:
        plain = stratified_sample(store.questions(LOCOMO, scoreable_only=True), args.locomo_sample, 0)
        ids = {q.question_id for q in plain}
        stitched = [q for q in every if q.qtype.startswith("locomo/") and q.question_id.split("/", 1)[1] in ids]
        rows_p = run_rows(store, LOCOMO, plain, arms, ks, lambda q: {"qtype": q.qtype}, log=log, cached_ner_only=only)
        rows_s = run_rows(store, PLUS, stitched, arms, ks, lambda q: {"qtype": q.qtype.removeprefix("locomo/")}, log=log,
                          cached_ner_only=only)
        same = _identical(rows_p, rows_s)
        out["locomo_questions"] = {"n": len(plain), "sample_seed": 0, "plain": summary(rows_p, ["qtype"]),
                                   "stitched": summary(rows_s, ["qtype"]), "per_question_identical": same}
    out["eval_s"] = round(time.perf_counter() - t0, 1)
    out["machine_after"] = machine()
    store.close()
    Path(args.out).write_text(json.dumps(out, indent=1), encoding="utf-8")
    print(f"wrote {args.out}")
    return 0


def _identical(plain: list[dict], stitched: list[dict]) -> dict[str, float]:
    """Per system and k, the share of questions whose Turn Hit and recall_all are the same on both sides."""
    key = lambda r: (r["question_id"].split("/", 1)[-1], r["system"], r["k"])  # noqa: E731
    a = {key(r): (r["turn_hit"], r["recall_all"]) for r in plain}
    b = {key(r): (r["turn_hit"], r["recall_all"]) for r in stitched}
    out: dict[str, list[int]] = {}
    for k, v in a.items():
        tally = out.setdefault(f"{k[1]}@{k[2]}", [0, 0])
        tally[0] += b.get(k) == v
        tally[1] += 1
    return {s: round(100 * same / n, 2) for s, (same, n) in sorted(out.items())}


if __name__ == "__main__":
    raise SystemExit(main())
