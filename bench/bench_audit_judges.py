"""Answers and judges against the LoCoMo audit (conversations 0-4): import, rejudge, report, suspect keys.

What it measures, in a fresh store (LoCoMo ingested without vectors):

* ``import``: each of the six ``locomo-audit/answers`` files through ``bfr import-answers`` (the
  adversarial files' verdicts named ``gpt-4o-mini``, their judge); lines refused (target 0); and the
  gpt-4o-mini accuracy the report gives per file against the same figure computed from the file
  itself (majority of the three verdicts; target: equal);
* ``rules``: all 6 x 762 answers rejudged by the rules (``bfr judge --judge rules``), wall time
  (target <= 60 s), then the same again (target: 0 verdicts computed); per file the undecided rate
  (target <= 15 % on each real run), accept rate and agreement with the imported verdicts on the
  answers both decided; false accepts on the adversarial files (targets <= 2 % v1, <= 5 % v2, as a
  share of the decided answers and of all answers);
* ``local`` (``--local N``): the local model's judge (strict prompt) on a seeded sample of N answers
  per file, with its time; a crash of llama.cpp is reported as "blocked" with its exit status;
* ``overlay``: the audit's ``errors.json`` as overlay ``audit``; every figure under both keys (the
  report's ``keys``), questions left out as unanswerable, and the answer ceiling of the original key;
* ``retrieval`` (``--retrieval-db DB --retrieval-run RUN``): a LoCoMo retrieval run's Gold Hit / CER
  per arm under the original key and the audit overlay (corrected evidence; unanswerable questions
  left out), on a copy of that store, over the run's questions in conversations 0-4;
* ``suspect_keys``: flags from the text alone against the audit (precision; recall of WRONG_CITATION +
  HALLUCINATION, target 50 % / 50 %), by error type and by check.

The JSON holds counts and rates only (no benchmark text).

    .venv/bin/python bench/bench_audit_judges.py [--local 200]   # ~1 min without --local
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bfr_core.evaluation.answer_import import import_answers  # noqa: E402
from bfr_core.evaluation.judge_report import judge_report  # noqa: E402
from bfr_core.evaluation.judging import judge_run, parse_judge  # noqa: E402
from bfr_core.evaluation.overlay import golds_under, ingest_overlay, load_overlay  # noqa: E402
from bfr_core.evaluation.suspect_keys import score_flags, suspect_keys  # noqa: E402
from bfr_core.ingest import ingest  # noqa: E402
from bfr_core.ingest.sources import benchmark_file  # noqa: E402
from bfr_core.store import Store  # noqa: E402

AUDIT = benchmark_file("locomo").parent / "locomo-audit"
TARGETS = {"refused_lines": 0, "rules_wall_s_max": 60.0, "rerun_judged": 0, "rules_undecided_max_pct": 15.0,
           "false_accept_v1_max_pct": 2.0, "false_accept_v2_max_pct": 5.0, "suspect_recall_min_pct": 50.0,
           "suspect_precision_min_pct": 50.0}
IMPORTED = "gpt-4o-mini (imported)"


def file_accuracy(path: Path) -> tuple[float, int]:
    """The file's own gpt-4o-mini accuracy: majority of the three verdicts, in %, and its answer count."""
    data = json.loads(path.read_text())
    recs = [r for rs in data["detailed_results"].values() for r in rs]
    ok = sum(sum(bool(v) for v in r["llm_judgments"].values()) * 2 > len(r["llm_judgments"]) for r in recs)
    return round(100.0 * ok / len(recs), 2), len(recs)


def local_sample(db: Path, runs: dict[str, str], n: int, seed: int) -> dict[str, Any]:
    """The local judge on a seeded sample of ``n`` answers per file, in a child process (llama.cpp may
    crash the interpreter: the parent survives and reports it)."""
    code = f"""
import json, random, sys, time
sys.path.insert(0, {str(ROOT)!r})
from bfr_core.config import LLMConfig
from bfr_core.evaluation.judging import judge_run, parse_judge
from bfr_core.evaluation.overlay import golds_under
from bfr_core.llm.factory import make_llm
from bfr_core.runs import load_results
from bfr_core.store import Store
store = Store({str(db)!r})
spec = parse_judge("local", "strict")
out = {{}}
for name, run_id in {runs!r}.items():
    qids = sorted(r["question_id"] for r in load_results(store, run_id))
    keep = set(random.Random({seed}).sample(qids, min({n}, len(qids))))
    golds = {{q: g for q, g in golds_under(store, run_id).items() if q in keep}}
    llm = make_llm(LLMConfig(provider="local"), store, run_id=run_id)
    t0 = time.perf_counter()
    rep = judge_run(store, run_id, spec, golds, llm=llm, workers=1)
    out[name] = {{"judged": rep.judged, "kept": rep.kept, "failed": rep.failed, "wall_s": round(time.perf_counter() - t0, 1)}}
    print(json.dumps({{name: out[name]}}), flush=True)
store.close()
"""
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-X", "faulthandler", "-c", code], capture_output=True, text=True)
    if proc.returncode != 0:
        return {"status": f"blocked: exit {proc.returncode}", "stderr_tail": proc.stderr[-1500:],
                "wall_s": round(time.perf_counter() - t0, 1)}
    per = {}
    for line in proc.stdout.splitlines():
        if line.startswith("{"):
            per.update(json.loads(line))
    return {"status": "ran", "per_file": per, "wall_s": round(time.perf_counter() - t0, 1)}


def rules_figures(report: dict[str, Any], files: list[str], judge: str) -> dict[str, Any]:
    """Per file: undecided, accept and agreement with the imported verdicts, from the report's original key."""
    sec = report["keys"]["original"]
    mine = sec["judges"].get(judge, {}).get("by_system", {})
    out = {}
    for name in files:
        got = mine.get(name, {})
        out[name] = {"n": got.get("n"), "undecided_pct": got.get("undecided_pct"), "accept_pct_of_decided": got.get("accept_pct"),
                     "accept_pct_of_all": round(got["accept_pct"] * got["decided"] / got["n"], 2)
                     if got.get("accept_pct") is not None else None}
    return out


def agreement_by_file(store: Store, runs: dict[str, str], judge: str) -> dict[str, Any]:
    """Agreement with the imported gpt-4o-mini verdicts on the answers both decided, per file."""
    out = {}
    for name, run_id in runs.items():
        rep = judge_report(store, [run_id])
        pair = next((p for p in rep["keys"]["original"]["pairs"] if {p["a"], p["b"]} == {judge, IMPORTED}), None)
        out[name] = pair and {k: pair[k] for k in ("n", "agreement_pct", "kappa")}
    return out


def retrieval_both_keys(db: Path, run_id: str, tmp: Path) -> dict[str, Any]:
    """Gold Hit / CER per arm of ``run_id`` under the original key and the audit, on a copy of ``db``."""
    import shutil

    from bfr_core.evaluation.overlay import retrieval_under

    copy = tmp / "retrieval.duckdb"
    shutil.copy(db, copy)
    store = Store(copy)
    try:
        ingest_overlay(store, AUDIT / "errors.json", dataset_id="locomo", name="audit", replace=True)
        return {"run": run_id, **{key: retrieval_under(store, run_id, key) for key in ("original", "audit")}}
    finally:
        store.close()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(ROOT / "bench" / "out" / "audit_judges.json"))
    ap.add_argument("--local", type=int, default=0, help="answers per file for the local-model judge (0: skip)")
    ap.add_argument("--seed", type=int, default=2026, help="the local sample's seed")
    ap.add_argument("--retrieval-db", default=None, help="a store holding a LoCoMo retrieval run (copied, not changed)")
    ap.add_argument("--retrieval-run", default=None, help="that run's id")
    args = ap.parse_args(argv)
    files = sorted(p for p in (AUDIT / "answers").glob("*.json"))
    wrong = [p.stem for p in files if p.stem.startswith("adversarial")]
    out: dict[str, Any] = {"targets": TARGETS, "data": "locomo-audit, LoCoMo conversations 0-4"}
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "audit.duckdb"
        store = Store(db)
        ingest(store, "locomo", benchmark_file("locomo"), embed=False)
        runs, refused, imported = {}, 0, {}
        for p in files:
            t0 = time.perf_counter()
            try:
                rep = import_answers(store, p, dataset_id="locomo", name=p.stem, judge_name="gpt-4o-mini")
            except Exception as exc:  # noqa: BLE001 - a refused file is a measured outcome
                refused += 1
                imported[p.stem] = {"refused": str(exc)[:300]}
                continue
            runs[p.stem] = rep.run_id
            imported[p.stem] = {"answers": rep.answers, "s": round(time.perf_counter() - t0, 2)}
        out["import"] = {"files": len(files), "files_refused": refused, "refused_lines": refused, "per_file": imported}
        ingest_overlay(store, AUDIT / "errors.json", dataset_id="locomo", name="audit")

        spec = parse_judge("rules")
        t0 = time.perf_counter()
        first = [judge_run(store, r, spec, golds_under(store, r)) for r in runs.values()]
        wall = round(time.perf_counter() - t0, 2)
        t0 = time.perf_counter()
        again = [judge_run(store, r, spec, golds_under(store, r)) for r in runs.values()]
        rewall = round(time.perf_counter() - t0, 2)
        for r in runs.values():
            judge_run(store, r, spec, golds_under(store, r, "audit"), key="audit")
        out["rejudge"] = {"answers": sum(x.judged for x in first), "wall_s": wall,
                          "rerun_judged": sum(x.judged for x in again), "rerun_kept": sum(x.kept for x in again),
                          "rerun_wall_s": rewall}
        if args.local:
            out["local"] = {"n_per_file": args.local, "seed": args.seed, "prompt": "strict",
                            **local_sample(db, runs, args.local, args.seed)}
        report = judge_report(store, list(runs.values()), ["original", "audit"], known_wrong=wrong)
        out["report"] = report
        out["reproduced"] = {}
        for p in files:
            want, n = file_accuracy(p)
            got = report["keys"]["original"]["judges"][IMPORTED]["by_system"][p.stem]["accept_pct"]
            out["reproduced"][p.stem] = {"file_pct": want, "report_pct": got, "equal": want == got, "n": n}
        out["rules"] = {"per_file": rules_figures(report, [p.stem for p in files], "rules"),
                        "agreement_with_imported": agreement_by_file(store, runs, "rules")}
        if "local" in out and out["local"].get("status") == "ran":
            judge = parse_judge("local", "strict").name
            out["local"]["per_file_figures"] = rules_figures(report, [p.stem for p in files], judge)
            out["local"]["agreement_with_imported"] = agreement_by_file(store, runs, judge)
        qids = sorted({row[0] for run in runs.values() for row in store.cursor().execute(
            "SELECT question_id FROM results WHERE run_id = ?", [run]).fetchall()})
        findings = {q: f.error_type for q, f in load_overlay(store, "locomo", "audit").items()}
        t0 = time.perf_counter()
        flags = suspect_keys(store, "locomo", qids)
        out["suspect_keys"] = {**score_flags(flags, findings, qids), "wall_s": round(time.perf_counter() - t0, 2)}
        store.close()
        if args.retrieval_db and args.retrieval_run:
            out["retrieval"] = retrieval_both_keys(Path(args.retrieval_db), args.retrieval_run, Path(tmp))
    real = [p.stem for p in files if p.stem not in wrong]
    per = out["rules"]["per_file"]
    v1 = next(w for w in wrong if "v1" in w)
    v2 = next(w for w in wrong if "v2" in w)
    out["met"] = {
        "imports_without_refusal": out["import"]["refused_lines"] == 0,
        "accuracy_reproduced": all(x["equal"] for x in out["reproduced"].values()),
        "rules_wall": wall <= TARGETS["rules_wall_s_max"],
        "rerun_free": out["rejudge"]["rerun_judged"] == 0,
        "rules_undecided": all(per[r]["undecided_pct"] <= TARGETS["rules_undecided_max_pct"] for r in real),
        "false_accept_v1": per[v1]["accept_pct_of_decided"] <= TARGETS["false_accept_v1_max_pct"],
        "false_accept_v2": per[v2]["accept_pct_of_decided"] <= TARGETS["false_accept_v2_max_pct"],
        "suspect_keys": (out["suspect_keys"]["recall_pct"] or 0) >= TARGETS["suspect_recall_min_pct"]
        and (out["suspect_keys"]["precision_pct"] or 0) >= TARGETS["suspect_precision_min_pct"],
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(out, indent=2) + "\n")
    print(json.dumps({"met": out["met"], "rejudge": out["rejudge"], "rules": out["rules"], "reproduced": out["reproduced"],
                      "suspect": {k: out["suspect_keys"][k] for k in ("precision_pct", "recall_pct", "flagged")},
                      "local": out.get("local", {}).get("status")}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
