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
* ``local`` (``--local-pass N [--until HH:MM]``, run apart and first: it is slow): the local model's
  judge (strict prompt) on N answers per file (the same questions in every file, stratified by
  question type, seeded), in its own store under ``bench/out/cache`` so a stopped pass resumes;
  per file the undecided rate, accept rate (false accepts on the adversarial files), agreement with
  the imported verdicts, the rules' figures on the same answers, and seconds per answer (the
  verdicts' own timings, which count a call the cache answers on a resume as its replay, and this
  pass's new verdicts over the time they took); written to
  ``audit_judges_local.json`` after every round and merged into this report by a plain run;
* ``overlay``: the audit's ``errors.json`` as overlay ``audit``; every figure under both keys (the
  report's ``keys``), questions left out as unanswerable, and the answer ceiling of the original key;
* ``retrieval`` (``--retrieval-db DB --retrieval-run RUN``): a LoCoMo retrieval run's Gold Hit / CER
  per arm under the original key and the audit overlay (corrected evidence; unanswerable questions
  left out), on a copy of that store, over the run's questions in conversations 0-4;
* ``suspect_keys``: flags from the text alone against the audit (precision; recall of WRONG_CITATION +
  HALLUCINATION, target 50 % / 50 %), by error type and by check, in sample and leave one
  conversation out (the setting picked on four conversations from the fixed grid, scored on the
  fifth; pooled); development figures;

The JSON holds counts and rates only (no benchmark text).

    .venv/bin/python -m bench.quality.bench_audit_judges --local-pass 200 --until 22:50   # hours on 2 cores
    .venv/bin/python -m bench.quality.bench_audit_judges   # ~1 min; merges audit_judges_local.json
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path
from typing import Any

from bfr_core.evaluation.answer_import import import_answers
from bfr_core.evaluation.judge_report import judge_report
from bfr_core.evaluation.judging import judge_run, parse_judge
from bfr_core.evaluation.overlay import golds_under, ingest_overlay, load_overlay
from bfr_core.evaluation.suspect_keys import (
    DEFAULT,
    GRID,
    choose,
    cross_validate,
    flags_of,
    score_flags,
    signals,
)
from bfr_core.ingest import ingest
from bfr_core.ingest.sources import benchmark_file
from bfr_core.runs import ensure_schema, load_results
from bfr_core.store import Store
from bfr_core.verdicts import load_verdicts

ROOT = Path(__file__).resolve().parents[2]

AUDIT = benchmark_file("locomo").parent / "locomo-audit"
TARGETS = {"refused_lines": 0, "rules_wall_s_max": 60.0, "rerun_judged": 0, "rules_undecided_max_pct": 15.0,
           "false_accept_v1_max_pct": 2.0, "false_accept_v2_max_pct": 5.0, "suspect_recall_min_pct": 50.0,
           "suspect_precision_min_pct": 50.0, "local_answers_per_file_min": 200}
IMPORTED = "gpt-4o-mini (imported)"


def file_accuracy(path: Path) -> tuple[float, int]:
    """The file's own gpt-4o-mini accuracy: majority of the three verdicts, in %, and its answer count."""
    data = json.loads(path.read_text())
    recs = [r for rs in data["detailed_results"].values() for r in rs]
    ok = sum(sum(bool(v) for v in r["llm_judgments"].values()) * 2 > len(r["llm_judgments"]) for r in recs)
    return round(100.0 * ok / len(recs), 2), len(recs)


LOCAL_DB = ROOT / "bench" / "out" / "cache" / "audit_local.duckdb"
LOCAL_OUT = ROOT / "bench" / "out" / "audit_judges_local.json"
RULES = "rules"


def local_store(db: Path) -> tuple[Store, dict[str, str]]:
    """The local pass's own store (kept between runs: its verdicts and call cache make the pass
    resumable): LoCoMo without vectors and the six files, each imported once; file -> run id."""
    db.parent.mkdir(parents=True, exist_ok=True)
    store = Store(db)
    if store.dataset("locomo") is None:
        ingest(store, "locomo", benchmark_file("locomo"), embed=False)
    ensure_schema(store)
    runs = {}
    for p in sorted((AUDIT / "answers").glob("*.json")):
        found = store.cursor().execute("SELECT DISTINCT run_id FROM results WHERE arm = ?", [p.stem]).fetchall()
        runs[p.stem] = found[0][0] if found else import_answers(
            store, p, dataset_id="locomo", name=p.stem, judge_name="gpt-4o-mini").run_id
    return store, runs


def local_order(store: Store, run_id: str, n: int, seed: int) -> list[str]:
    """``n`` questions of the run stratified by question type (``sampling.stratified_sample``), in a
    seeded shuffled order, so a pass stopped early has judged a near-stratified prefix of them."""
    import random

    from bfr_core.evaluation.sampling import stratified_sample

    asked = {r["question_id"] for r in load_results(store, run_id)}
    picked = [q.question_id for q in stratified_sample([q for q in store.questions("locomo") if q.question_id in asked], n, seed)]
    random.Random(seed).shuffle(picked)
    return picked


def _share(labels: list[str], want: str) -> float | None:
    return round(100.0 * sum(x == want for x in labels) / len(labels), 2) if labels else None


def sample_figures(store: Store, runs: dict[str, str], judge: str) -> dict[str, Any]:
    """Per file, on the answers ``judge`` has judged (original key): undecided, accept of decided
    (every acceptance on an adversarial file is a false accept), agreement and kappa with the imported
    verdicts on the answers both decided, the rules' same figures on the same answers, the judge's
    agreement with the rules, and its mean seconds per answer (the verdicts' own timings)."""
    from bfr_core.evaluation.judge_report import verdict_table
    from bfr_core.evaluation.stats import cohen_kappa
    from bfr_core.roles.answer_judge import UNDECIDED

    def pair(a: dict, b: dict, keys: list) -> dict[str, Any]:
        both = [k for k in keys if a.get(k, UNDECIDED) != UNDECIDED and b.get(k, UNDECIDED) != UNDECIDED]
        xa, xb = [a[k] for k in both], [b[k] for k in both]
        return {"n": len(both), "agreement_pct": _share([str(x == y) for x, y in zip(xa, xb, strict=True)], "True"),
                "kappa": round(cohen_kappa(xa, xb, ("CORRECT", "WRONG")), 3) if both else None}

    def rates(labels: list[str]) -> dict[str, Any]:
        decided = [x for x in labels if x != UNDECIDED]
        return {"n": len(labels), "undecided_pct": _share(labels, UNDECIDED), "accept_pct_of_decided": _share(decided, "CORRECT")}

    out = {}
    for name, run_id in runs.items():
        table = verdict_table(store, [run_id])
        mine, imported, rules = table.get(judge, {}), table.get(IMPORTED, {}), table.get(RULES, {})
        keys = sorted(mine)
        ms = [v["elapsed_ms"] for v in load_verdicts(store, run_id) if v["judge"] == judge and v["key"] == "original"]
        out[name] = {**rates([mine[k] for k in keys]), "agreement_with_imported": pair(mine, imported, keys),
                     "rules_same_answers": {**rates([rules[k] for k in keys if k in rules]),
                                            "agreement_with_imported": pair(rules, imported, keys)},
                     "agreement_with_rules": pair(mine, rules, keys),
                     "s_per_answer": round(sum(ms) / len(ms) / 1000, 1) if ms else None}
    return out


def local_pass(n: int, seed: int, until: str | None, db: Path = LOCAL_DB, out_path: Path = LOCAL_OUT,
               chunk: int = 5, threads: int = 1) -> dict[str, Any]:
    """The local model's judge (strict prompt) on ``n`` sampled answers per file, each question in every
    file in turn (so the files stay within one question of each other when the pass stops), writing
    the figures after each question and logging each round of ``chunk`` questions; starts nothing
    after ``until`` (HH:MM UTC) and resumes where it stopped when run again."""
    import datetime as dt

    from bfr_core.config import LLMConfig
    from bfr_core.llm.factory import make_llm
    from bfr_core.llm.local_provider import LocalLLM

    store, runs = local_store(db)
    rules = parse_judge(RULES)
    for run_id in runs.values():
        judge_run(store, run_id, rules, golds_under(store, run_id))
    spec = parse_judge("local", "strict")
    # one llama.cpp thread: on cores other jobs share, two threads mostly wait on each other; no RAM state
    # cache: the question-major order below already reuses the previous call's prefix, and saving a
    # state after every call costs CPU (bench/speed/bench_local_judge_speed.py: 8.5 -> 7.9 CPU s a verdict)
    inner = LocalLLM(n_threads=threads, state_cache_bytes=0)
    llms = {name: make_llm(LLMConfig(provider="local"), store, run_id=run_id, provider=inner) for name, run_id in runs.items()}
    golds = {name: golds_under(store, run_id) for name, run_id in runs.items()}
    order = local_order(store, next(iter(runs.values())), n, seed)
    stop = dt.datetime.combine(dt.datetime.now(dt.UTC).date(), dt.time.fromisoformat(until), dt.UTC) if until else None
    t0, status = time.perf_counter(), "complete"
    done = {"judged": 0, "judge_s": 0.0}  # this pass's new verdicts and the time they took

    def write(state: str) -> dict[str, Any]:
        figures = {"status": state, "n_target_per_file": n, "seed": seed, "prompt": "strict", "judge": spec.name,
                   "model": inner.label, "llama_threads": threads,
                   "sample": "stratified by question type, same questions in every file, each question judged "
                             f"in every file in turn, in rounds of {chunk} questions", "this_pass_wall_s": round(time.perf_counter() - t0, 1),
                   "this_pass_judged": done["judged"],
                   "this_pass_s_per_answer": round(done["judge_s"] / done["judged"], 1) if done["judged"] else None,
                   "per_file": sample_figures(store, runs, spec.name)}
        out_path.write_text(json.dumps(figures, indent=2) + "\n")
        return figures

    for i in range(0, len(order), chunk):
        for q in order[i:i + chunk]:
            judged = 0
            # one question in every file in turn: each prompt shares the instructions, question and gold
            # with the previous call, so llama.cpp evaluates only the answer (no RAM state cache needed)
            for name, run_id in runs.items():
                if stop and dt.datetime.now(dt.UTC) >= stop:
                    status = f"stopped at {until} UTC"
                    break
                rep = judge_run(store, run_id, spec, {q: golds[name][q]} if q in golds[name] else {},
                                llm=llms[name], workers=1)
                judged += rep.judged
                done["judged"] += rep.judged
                done["judge_s"] += rep.wall_s
            if judged:
                write("running")
            if status != "complete":
                break
        if status != "complete":
            break
        print(f"{dt.datetime.now(dt.UTC):%H:%M:%S} {min(i + chunk, len(order))} of {len(order)} per file; this pass "
              f"{done['judged']} judged in {done['judge_s']:.0f} s", flush=True)
    figures = write(status)
    store.close()
    return figures


def suspect_figures(store: Store, qids: list[str], findings: dict[str, str]) -> dict[str, Any]:
    """The suspect-key flags against the audit (development figures: the audit of conversations 0-4
    is what the checks were written against): in sample under ``DEFAULT`` (the top level, with each
    grid setting's figures), the in-sample pick, and leave one conversation out (each conversation
    flagged under the setting picked on the other four)."""
    t0 = time.perf_counter()
    sigs = signals(store, "locomo", qids)
    wall = round(time.perf_counter() - t0, 2)
    picked, _ = choose(sigs, findings)
    grid = {}
    for setting in GRID:
        sc = score_flags([f for sg in sigs for f in flags_of(sg, setting)], findings, qids)
        grid[setting.label] = {k: sc[k] for k in ("flagged", "in_findings", "precision_pct", "recall_pct")}
    cv = cross_validate(sigs, findings)
    return {**score_flags([f for sg in sigs for f in flags_of(sg, DEFAULT)], findings, qids),
            "figures": "development: in sample on conversations 0-4, whose audit the checks were written against",
            "setting": DEFAULT.label, "in_sample_pick": picked.label, "default_is_in_sample_pick": picked == DEFAULT,
            "grid": grid, "leave_one_conversation_out": cv, "wall_s": wall}


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

    from bfr_core.evaluation.overlay import covered_ceiling, retrieval_under

    copy = tmp / "retrieval.duckdb"
    shutil.copy(db, copy)
    store = Store(copy)
    try:
        ingest_overlay(store, AUDIT / "errors.json", dataset_id="locomo", name="audit", replace=True)
        qids = sorted({r["question_id"] for r in load_results(store, run_id)})
        return {"run": run_id, "questions": len(qids),
                **{key: retrieval_under(store, run_id, key) for key in ("original", "audit")},
                "ceiling_under_original_key": covered_ceiling(store, "locomo", "audit", qids)}
    finally:
        store.close()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(ROOT / "bench" / "out" / "audit_judges.json"))
    ap.add_argument("--seed", type=int, default=2026, help="the local sample's seed")
    ap.add_argument("--retrieval-db", default=None, help="a store holding a LoCoMo retrieval run (copied, not changed)")
    ap.add_argument("--retrieval-run", default=None, help="that run's id")
    ap.add_argument("--local-pass", type=int, default=0,
                    help="only run the local judge on N answers per file in its own resumable store, write "
                         "audit_judges_local.json (merged into the report by a later plain run) and exit")
    ap.add_argument("--until", default=None, help="HH:MM UTC: the local pass stops starting rounds then")
    args = ap.parse_args(argv)
    if args.local_pass:
        figures = local_pass(args.local_pass, args.seed, args.until)
        print(json.dumps({k: figures[k] for k in ("status", "this_pass_wall_s")}))
        return 0
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
        report = judge_report(store, list(runs.values()), ["original", "audit"], known_wrong=wrong)
        out["report"] = report
        out["reproduced"] = {}
        for p in files:
            want, n = file_accuracy(p)
            got = report["keys"]["original"]["judges"][IMPORTED]["by_system"][p.stem]["accept_pct"]
            out["reproduced"][p.stem] = {"file_pct": want, "report_pct": got, "equal": want == got, "n": n}
        out["rules"] = {"per_file": rules_figures(report, [p.stem for p in files], "rules"),
                        "agreement_with_imported": agreement_by_file(store, runs, "rules")}
        if LOCAL_OUT.is_file():  # the local pass's figures (its own store, see local_pass)
            out["local"] = json.loads(LOCAL_OUT.read_text())
        qids = sorted({row[0] for run in runs.values() for row in store.cursor().execute(
            "SELECT question_id FROM results WHERE run_id = ?", [run]).fetchall()})
        findings = {q: f.error_type for q, f in load_overlay(store, "locomo", "audit").items()}
        out["suspect_keys"] = suspect_figures(store, qids, findings)
        store.close()
        if args.retrieval_db and args.retrieval_run:
            out["retrieval"] = retrieval_both_keys(Path(args.retrieval_db), args.retrieval_run, Path(tmp))
    real = [p.stem for p in files if p.stem not in wrong]
    per = out["rules"]["per_file"]
    v1 = next(w for w in wrong if "v1" in w)
    v2 = next(w for w in wrong if "v2" in w)
    held = out["suspect_keys"]["leave_one_conversation_out"]["held_out"]
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
        "suspect_keys_held_out": (held["recall_pct"] or 0) >= TARGETS["suspect_recall_min_pct"]
        and (held["precision_pct"] or 0) >= TARGETS["suspect_precision_min_pct"],
        "local_sample": bool(out.get("local")) and all(
            f["n"] >= TARGETS["local_answers_per_file_min"] for f in out["local"]["per_file"].values()),
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(out, indent=2) + "\n")
    print(json.dumps({"met": out["met"], "rejudge": out["rejudge"], "rules": out["rules"], "reproduced": out["reproduced"],
                      "suspect": {k: out["suspect_keys"][k] for k in ("precision_pct", "recall_pct", "flagged")},
                      "suspect_held_out": {k: held[k] for k in ("precision_pct", "recall_pct", "flagged")},
                      "local": {k: out.get("local", {}).get(k) for k in ("status", "this_pass_wall_s")}}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
