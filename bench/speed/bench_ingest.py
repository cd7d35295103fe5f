"""Ingest speed per stage, cold and warm, beside the encode-only limit; writes ``bench/out/ingest.json``.

Each measurement runs in a fresh process (what ``bfr ingest`` costs a user: imports and model
loading included) on a new store in a temp folder:

* ``cold``: ``ingest(store, kind, path)`` on an empty store, as the first ingest on a machine (a cache
  folder without MiniLM's remembered calibration, ``embed.remembered``; ``cold_calibration_remembered``:
  the same on another empty store, the first run's calibration remembered, as every later ingest);
  the time of each stage is read from the progress labels it reports (read, plan, static, MiniLM,
  write, NER, other), in wall and CPU seconds (this process and its spaCy workers), with the peak memory (max RSS) and the ETA the
  bar printed at 25/50/75 % of the wall time against the time that actually remained (issue 29:
  the ETA of ``progress.eta_seconds`` over the stage, as ``ui.ingesting.bar_text`` shows it);
* ``warm``: the same file again into that store, ``replace=True`` (every text cached), and the
  plain rerun (the same command again: finishes any cache stage left undone, else does nothing);
* ``limit``: the default dense model(s) encoding exactly the texts the cold ingest had to encode
  (``embed.plan_encoding`` on an empty store), each model in one ``encode`` call: no store, no
  progress; model loading timed apart. ``overhead`` = cold wall / limit wall (target <= 1.5).
  ``pace_rates``: the cold ingest's seconds per unit of each progress part (static characters,
  MiniLM cost units) beside ``embed.PRIOR_S``, the priors the ETA starts from.

Inputs: LoCoMo and the LongMemEval dev50 sample (``--only`` picks), a LongMemEval file by path
(``--path``), and with ``--full-s`` a full-S-sized input built from dev50 (``full_s_sized``: dev50's
haystacks copied until >= 180,000 unique turn texts, each copy's texts made distinct by a suffix, so
the length mix is dev50's). The machine is shared: the load average at the start and end of every
measurement and the CPU seconds are recorded beside the wall time, and the commit measured.

    .venv/bin/python -m bench.speed.bench_ingest [--only locomo,longmemeval] [--full-s] [--path FILE]
    .venv/bin/python -m bench.speed.bench_ingest --code OLD_CODE --out before.json
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.lib.git_commit import commit
from bench.lib.ingest_cache import first_machine_cache

ROOT = Path(__file__).resolve().parents[2]
STAGES = ("read", "plan", "static", "minilm", "write", "ner", "other")
FULL_S_TEXTS = 180_000


def stage_of(label: str) -> str:
    """The stage group of a progress label."""
    low = label.lower()
    if low.startswith("reading"):
        return "read"
    if "minilm" in low:
        return "minilm"
    if "static" in low:
        return "static"
    if low.startswith("writing"):
        return "write"
    if "names" in low or "entit" in low:
        return "ner"
    if low.startswith("checking"):
        return "plan"
    return "other"


def cpu_now() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


class StageClock:
    """A Progress callback keeping (wall, cpu, done, total, label) per update."""

    def __init__(self) -> None:
        self.start, self.cpu0 = time.perf_counter(), cpu_now()
        self.updates: list[tuple[float, float, int, int, str]] = []

    def __call__(self, done: int, total: int, label: str) -> None:
        self.updates.append((time.perf_counter() - self.start, cpu_now() - self.cpu0, done, total, label))


def per_stage(updates: list[tuple[float, float, int, int, str]], end_wall: float, end_cpu: float) -> dict[str, Any]:
    """Wall and CPU seconds per stage group: each update's stage lasts until the next update's."""
    wall = dict.fromkeys(STAGES, 0.0)
    cpu = dict.fromkeys(STAGES, 0.0)
    marks = [(0.0, 0.0, "other")] + [(w, c, stage_of(lab)) for w, c, _d, _t, lab in updates]
    marks.append((end_wall, end_cpu, "other"))
    for (w0, c0, stage), (w1, c1, _) in zip(marks, marks[1:], strict=False):
        wall[stage] += w1 - w0
        cpu[stage] += c1 - c0
    return {"stage_wall_s": {k: round(v, 2) for k, v in wall.items()},
            "stage_cpu_s": {k: round(v, 2) for k, v in cpu.items()}}


def eta_truth(updates: list[tuple[float, float, int, int, str]], end_wall: float) -> list[dict[str, Any]]:
    """At 25/50/75 % of the wall time: the ETA the bar showed (``eta_seconds`` over the current bar,
    a bar restarting when its total changes or its count goes back, as the CLI and the app draw it)
    and the time that actually remained."""
    from bfr_core.progress import eta_seconds

    try:
        from bfr_core.progress import restarts
    except ImportError:  # code from before restarts(): the same rule as the CLI's bars then
        def restarts(prev: tuple[int, int] | None, done: int, total: int) -> bool:
            return prev is None or total != prev[1] or done < prev[0]
    out = []
    for frac in (0.25, 0.5, 0.75):
        at = end_wall * frac
        bar_start, prev, shown = 0.0, None, None
        for w, _c, done, total, _label in updates:
            if w > at:
                break
            if restarts(prev, done, total):
                bar_start = w
            prev = (done, total)
            shown = eta_seconds(w - bar_start, done, total) if total > 1 else None
        actual = end_wall - at
        err = None if shown is None else round(abs(shown - actual) / actual * 100, 1)
        out.append({"at_fraction": frac, "at_s": round(at, 1), "eta_shown_s": None if shown is None else round(shown, 1),
                    "actually_left_s": round(actual, 1), "error_pct": err, "within_30pct": err is not None and err <= 30})
    return out


# -- child measurements (each in its own process) ---------------------------------------------------
def child_cold(kind: str, path: str, db: str, entities: str) -> dict[str, Any]:
    from bfr_core.ingest import ingest
    from bfr_core.store import Store

    load0 = os.getloadavg()
    clock = StageClock()
    store = Store(db)
    report = ingest(store, kind, path, progress=clock, **({"entities": False} if entities == "off" else {}))
    store.close()
    wall, cpu = time.perf_counter() - clock.start, cpu_now() - clock.cpu0
    return {"wall_s": round(wall, 2), "cpu_s": round(cpu, 2), **per_stage(clock.updates, wall, cpu),
            "peak_rss_mb": round(max(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
                                     resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss) / 1024),
            "eta": eta_truth(clock.updates, wall), "updates": len(clock.updates),
            "turns": report.turns, "questions": report.questions, "scopes": report.scopes, "notes": list(report.notes),
            "loadavg_start": [round(x, 2) for x in load0], "loadavg_end": [round(x, 2) for x in os.getloadavg()]}


def child_warm(kind: str, path: str, db: str, replace: bool) -> dict[str, Any]:
    from bfr_core.ingest import ingest
    from bfr_core.store import Store

    load0 = os.getloadavg()
    start, cpu0 = time.perf_counter(), cpu_now()
    store = Store(db)
    try:
        report = ingest(store, kind, path, replace=replace)
        note = list(report.notes)
    except Exception as exc:  # noqa: BLE001 - the old code refuses a plain rerun: recorded as such
        note = [f"refused: {type(exc).__name__}: {str(exc)[:160]}"]
    store.close()
    return {"wall_s": round(time.perf_counter() - start, 2), "cpu_s": round(cpu_now() - cpu0, 2), "notes": note,
            "loadavg_start": [round(x, 2) for x in load0], "loadavg_end": [round(x, 2) for x in os.getloadavg()]}


def child_ner(kind: str, path: str, sample: int) -> dict[str, Any]:
    """spaCy NER as a full-map ingest step ran it (``run_ner``, 2 processes) on a seeded sample of the
    unique turn texts, extrapolated to all of them: the NER stage of code that parsed every turn."""
    import random

    from bfr_core.ingest import load
    from bfr_core.retrieval.views.entity import run_ner

    texts = sorted({t.text for t in load(kind, path).turns})
    picked = random.Random(20261202).sample(texts, min(sample, len(texts)))
    run_ner(picked[:8])  # the pipeline loaded first
    load0 = os.getloadavg()
    t0, c0 = time.perf_counter(), cpu_now()
    run_ner(picked, processes=2)
    wall, cpu = time.perf_counter() - t0, cpu_now() - c0
    return {"unique_texts": len(texts), "sample": len(picked), "wall_s": round(wall, 2), "cpu_s": round(cpu, 2),
            "all_texts_wall_s_extrapolated": round(wall * len(texts) / len(picked), 1),
            "all_texts_cpu_s_extrapolated": round(cpu * len(texts) / len(picked), 1),
            "loadavg_start": [round(x, 2) for x in load0], "loadavg_end": [round(x, 2) for x in os.getloadavg()]}


def child_limit(kind: str, path: str) -> dict[str, Any]:
    """The default dense model(s) on exactly the texts a cold ingest encodes, one encode call each."""
    from bfr_core.ingest import load
    from bfr_core.retrieval.embed import encode_queries, plan_encoding
    from bfr_core.retrieval.encoders import get_model
    from bfr_core.retrieval.views.common import index_text
    from bfr_core.store import Store

    bundle = load(kind, path)
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(Path(tmp) / "empty.duckdb")
        tasks = plan_encoding(store, [index_text(t) for t in bundle.turns], [q.text for q in bundle.questions])
        store.close()
    load0 = os.getloadavg()
    out: dict[str, Any] = {"models": {}, "pace_units": pace_units(tasks)}
    wall_all = cpu_all = 0.0
    for task in (t for t in tasks if not t.zeros):
        enc = get_model(task.encoder_id)
        t0 = time.perf_counter()
        getattr(enc, "_load", lambda: None)()
        loaded = time.perf_counter() - t0
        t0, c0 = time.perf_counter(), cpu_now()
        if task.queries:
            encode_queries(enc, task.texts)
        else:
            enc.encode(list(task.texts))
        wall, cpu = time.perf_counter() - t0, cpu_now() - c0
        wall_all += wall
        cpu_all += cpu
        out["models"][f"{task.encoder_id}{' (questions)' if task.queries else ''}"] = {
            "texts": len(task.texts), "wall_s": round(wall, 2), "cpu_s": round(cpu, 2), "load_s": round(loaded, 2)}
    out |= {"wall_s": round(wall_all, 2), "cpu_s": round(cpu_all, 2),
            "loadavg_start": [round(x, 2) for x in load0], "loadavg_end": [round(x, 2) for x in os.getloadavg()]}
    # after the limit, so it does not touch its time: what the ETA's MiniLM prior is read from (embed.calibrate;
    # absent in code before it, --code)
    from bfr_core.retrieval import embed

    minilm = [enc for enc in (get_model(t.encoder_id) for t in tasks if not t.zeros) if embed._part(enc) == "minilm"]
    if minilm and hasattr(embed, "calibrate"):
        out["calibration_s_per_unit"] = embed.calibrate(minilm[0])
    return out


def pace_units(tasks: list) -> dict[str, float]:
    """The units of each ``progress.Pace`` part an ingest of ``tasks`` counts (static: characters;
    MiniLM: ``embed.text_costs``), so the measured seconds per unit can be set beside ``PRIOR_S``."""
    from bfr_core.retrieval.embed import _part, text_costs
    from bfr_core.retrieval.encoders import get_model

    units: dict[str, float] = {}
    for task in (t for t in tasks if not t.zeros):
        enc = get_model(task.encoder_id)
        part = _part(enc)
        units[part] = units.get(part, 0.0) + float(text_costs(enc, task.texts, task.tokens).sum())
    return units


def pace_rates(cold: dict[str, Any], limit: dict[str, Any]) -> dict[str, Any]:
    """Seconds per unit of each Pace part in this cold ingest, beside the prior the bar starts from:
    what ``embed.PRIOR_S`` is calibrated from (a quiet machine's run)."""
    from bfr_core.retrieval.embed import PRIOR_S

    walls, units = cold.get("stage_wall_s", {}), limit.get("pace_units", {})
    loads = [m["load_s"] for name, m in limit.get("models", {}).items() if name.startswith("minilm")]
    out = {part: {"measured_s_per_unit": walls[part] / units[part], "prior_s_per_unit": PRIOR_S[part]}
           for part in ("static", "minilm") if units.get(part) and walls.get(part)}
    if loads:
        out["load"] = {"measured_s": loads[0], "prior_s": PRIOR_S["load"]}
    if "minilm" in out and limit.get("calibration_s_per_unit"):  # what embed.CALIBRATION_RATIO is set from
        cal = limit["calibration_s_per_unit"]
        out["minilm"] |= {"calibration_s_per_unit": cal, "measured_over_calibration": out["minilm"]["measured_s_per_unit"] / cal}
    return out


def run_child(args: list[str], code: Path, cache: Path | None = None) -> dict[str, Any]:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join((str(code), str(ROOT))), **({"BFR_CACHE_DIR": str(cache)} if cache else {}))
    done = subprocess.run([sys.executable, "-P", "-m", "bench.speed.bench_ingest", "--code", str(code), "--child", *args],
                          capture_output=True, text=True, env=env)
    if done.returncode != 0:
        return {"failed": done.stderr[-600:]}
    return json.loads(done.stdout.strip().splitlines()[-1])


# -- inputs ---------------------------------------------------------------------------------------
def full_s_sized(dev50: Path, out: Path, min_texts: int = FULL_S_TEXTS) -> dict[str, Any]:
    """dev50's items copied until the unique turn texts reach ``min_texts``; copy ``c`` > 0 suffixes
    every turn text with `` (c)`` and every id with ``~c``, so each copy's texts are new to the cache
    and the length mix stays dev50's. Written as a plain LongMemEval ``.json``."""
    with gzip.open(dev50, "rt", encoding="utf-8") as fh:
        data = json.load(fh)
    unique = len({t["content"] for item in data for s in item["haystack_sessions"] for t in s})
    copies = -(-min_texts // unique)
    items = []
    for c in range(copies):
        for item in data:
            if c == 0:
                items.append(item)
                continue
            sessions = [[{**t, "content": f"{t['content']} ({c})"} for t in s] for s in item["haystack_sessions"]]
            items.append({**item, "question_id": f"{item['question_id']}~{c}", "haystack_sessions": sessions,
                          "haystack_session_ids": [f"{s}~{c}" for s in item["haystack_session_ids"]],
                          "answer_session_ids": [f"{s}~{c}" for s in item["answer_session_ids"]]})
    out.write_text(json.dumps(items), encoding="utf-8")
    return {"copies": copies, "questions": len(items), "unique_texts_estimate": unique * copies,
            "bytes": out.stat().st_size}


def bench_input(name: str, kind: str, path: Path, code: Path, tmp: Path, opts: argparse.Namespace) -> dict[str, Any]:
    db = (opts.keep or tmp) / f"{name}.duckdb"
    row: dict[str, Any] = {"input": name, "kind": kind, "file": path.name, "bytes": path.stat().st_size}
    cache = first_machine_cache(tmp / f"{name}-cache")
    row["cold"] = run_child(["cold", kind, str(path), str(db), opts.entities], code, cache)
    print(f"{name}: cold {row['cold'].get('wall_s')} s", file=sys.stderr)
    if opts.remembered:  # the same ingest again on a new store, the first one's calibration remembered
        again = db.with_name(f"{name}-remembered.duckdb")
        row["cold_calibration_remembered"] = run_child(["cold", kind, str(path), str(again), opts.entities], code, cache)
        again.unlink(missing_ok=True)
        print(f"{name}: cold, calibration remembered {row['cold_calibration_remembered'].get('wall_s')} s",
              file=sys.stderr)
    if opts.ner_sample:
        row["ner_full_map"] = run_child(["ner", kind, str(path), str(opts.ner_sample)], code)
        print(f"{name}: NER of every turn ~{row['ner_full_map'].get('all_texts_wall_s_extrapolated')} s", file=sys.stderr)
    if opts.warm:
        row["warm_replace"] = run_child(["warm", kind, str(path), str(db), "replace"], code)
        row["warm_rerun"] = run_child(["warm", kind, str(path), str(db), "rerun"], code)
        print(f"{name}: warm {row['warm_replace'].get('wall_s')} s / rerun {row['warm_rerun'].get('wall_s')} s",
              file=sys.stderr)
    if opts.limit:
        row["limit"] = run_child(["limit", kind, str(path)], code)
        if "wall_s" in row["cold"] and row["limit"].get("wall_s"):
            row["overhead_ratio"] = round(row["cold"]["wall_s"] / row["limit"]["wall_s"], 2)
            row["overhead_ratio_cpu"] = round(row["cold"]["cpu_s"] / row["limit"]["cpu_s"], 2)
            row["pace_rates"] = pace_rates(row["cold"], row["limit"])
        print(f"{name}: limit {row['limit'].get('wall_s')} s, overhead {row.get('overhead_ratio')}", file=sys.stderr)
    if opts.keep is None:
        db.unlink(missing_ok=True)
    return row


def cpu_model() -> str:
    """The CPU's model name and whether MiniLM runs in bf16 there (native bf16, or ``$BFR_BF16``): the limit and
    every time here depend on it, and sessions run on different machines (the limit was 27.97 s for LoCoMo's
    MiniLM texts at 28374d0 and 16.32 s at c1e5c16)."""
    from bfr_core.retrieval.encoders import cpu_has_bf16, cpu_name

    return f"{cpu_name()} ({'bf16 autocast' if cpu_has_bf16() else 'fp32, no native bf16'})"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", default="locomo,longmemeval", help="comma list of locomo, longmemeval ('' for none)")
    ap.add_argument("--path", type=Path, default=None, help="a LongMemEval file to ingest too (e.g. full S)")
    ap.add_argument("--full-s", action="store_true", help="also the full-S-sized input built from dev50")
    ap.add_argument("--no-warm", dest="warm", action="store_false")
    ap.add_argument("--no-limit", dest="limit", action="store_false")
    ap.add_argument("--no-remembered", dest="remembered", action="store_false",
                    help="skip the second cold ingest (a new store, MiniLM's calibration remembered from the first)")
    ap.add_argument("--entities", choices=("default", "off"), default="default",
                    help="off: ingest(entities=False), for code whose ingest parsed every turn (its NER then "
                         "measured apart by --ner-sample)")
    ap.add_argument("--ner-sample", type=int, default=0, help="time run_ner on this many unique turn texts")
    ap.add_argument("--keep", type=Path, default=None, help="keep each cold store in this folder (rows compared later)")
    ap.add_argument("--code", type=Path, default=ROOT, help="the bfr_core to measure (default: this checkout); its children run with PYTHONPATH=CODE:ROOT, so "
                    "a CODE whose bench/ is a package lends them its bench code too")
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "out" / "ingest.json")
    ap.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        what, kind, path, *rest = args.child
        result = (child_cold(kind, path, rest[0], rest[1]) if what == "cold" else
                  child_warm(kind, path, rest[0], rest[1] == "replace") if what == "warm" else
                  child_ner(kind, path, int(rest[0])) if what == "ner" else child_limit(kind, path))
        print(json.dumps(result))
        return 0
    from bfr_core.ingest.sources import benchmark_file

    code = args.code.resolve()
    rows = []
    start_load = [round(x, 2) for x in os.getloadavg()]
    measured = commit() if code == ROOT else f"code at {code}"  # at the start: the code the children import
    with tempfile.TemporaryDirectory(prefix="bfr-bench-ingest-") as tmp:
        inputs = [(k, k, benchmark_file(k)) for k in filter(None, args.only.split(","))]
        if args.path:
            inputs.append(("path", "longmemeval", args.path))
        built = None
        if args.full_s:
            target = Path(tmp) / "full_s_sized.json"
            built = full_s_sized(benchmark_file("longmemeval"), target)
            inputs.append(("full_s_sized", "longmemeval", target))
        for name, kind, path in inputs:
            rows.append(bench_input(name, kind, path, code, Path(tmp), args)
                        | ({"built": built} if name == "full_s_sized" else {}))
            write_out(args, measured, start_load, rows)  # after each input: a long run killed keeps the rest
    return 0


def write_out(args: argparse.Namespace, measured: str, start_load: list[float], rows: list[dict[str, Any]]) -> None:
    out = {
        "benchmark": "ingest", "commit": measured,
        "python": platform.python_version(), "machine": platform.machine(), "cpu_model": cpu_model(), "cpus": os.cpu_count(),
        "options": {"only": args.only, "full_s": args.full_s, "entities": args.entities,
                    "ner_sample": args.ner_sample, "warm": args.warm, "limit": args.limit,
                    "remembered": args.remembered},
        "loadavg_start": start_load, "loadavg_end": [round(x, 2) for x in os.getloadavg()],
        "targets": {"dev50_cold_s": 120, "locomo_cold_s": 30, "warm_s": 5, "overhead_ratio": 1.5,
                    "full_s_cold_s": 900, "peak_rss_mb": 6144, "eta_error_pct": 30},
        "eta_within_target": {f"{r['input']}{label}": [e["within_30pct"] for e in r[part].get("eta", [])]
                              for r in rows for part, label in (("cold", " (first on this machine)"),
                                                                 ("cold_calibration_remembered", " (calibration remembered)"))
                              if part in r},
        "results": rows,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {args.out}", file=sys.stderr)


if __name__ == "__main__":
    raise SystemExit(main())
