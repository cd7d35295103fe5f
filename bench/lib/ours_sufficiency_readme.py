"""The README's table for the set at each budget, generated from the JSON it cites (nothing typed by hand).

Reads ``bench/out/ours_selection.json`` (this run), the same file as committed at ``BEFORE_COMMIT`` (the run
before the set at each budget joined the grid: the "before" column), ``bench/out/beam_500k_bfr.json`` /
``beam_1m_bfr.json`` (now) beside ``bench/out/cache/beam_<tier>_before.json`` (the same bench at the previous
setting, when it was run) and ``bench/out/ours_sufficiency_latency.json`` (latency). Prints markdown.
With ``budgets``: docs/results.md's section on the sufficiency gap by budget instead, per benchmark its plot and
a table of any gold / all gold at 5, 10, 20 and 40 turns, from ``bench/out/sufficiency_budgets.json``
(``bench.quality.bench_ours_sufficiency``).

Run: ``.venv/bin/python -m bench.lib.ours_sufficiency_readme [budgets]``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from bench.lib.selection import HELD_OUT as CV
from bfr_core.arm_names import CONV_FUSION, canonical_arm, stored_names

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "bench" / "out"
BEFORE_COMMIT = "ce3392a"
FILES = "held out, longmemeval by file (dev50, dev200)"
PREV = "previous shipped setting (ours.toml at ce3392a; development where it was chosen, held out on dev200)"
BASELINES = {"z-fusion": "z-fusion baseline (no weight chosen: held out everywhere)",
             "dense": "dense top-k, the store's dense view (no weight chosen: held out everywhere)",
             "BM25": "bm25 top-k, stemmed (no weight chosen: held out everywhere)",
             "RRF": "rrf top-k, stemmed BM25 + dense view (no weight chosen: held out everywhere)"}
NAMES = {"locomo": "LoCoMo", "longmemeval": "LongMemEval dev50 + dev200", "locomo-plus": "LoCoMo-Plus dev",
         "beam-100k": "BEAM 100K"}


def _old_selection() -> dict:
    text = subprocess.run(["git", "show", f"{BEFORE_COMMIT}:bench/out/ours_selection.json"], cwd=ROOT,
                          capture_output=True, text=True, check=True).stdout
    return json.loads(text)


def _read(name: str) -> dict | None:
    p = OUT / name
    return json.loads(p.read_text(encoding="utf-8")) if p.exists() else None


def _f(x: object) -> str:
    return f"{x:.2f}" if isinstance(x, int | float) else "-"


def targets(new: dict, old: dict) -> list[str]:
    cv, was = new["cross_validation"][CV], old["cross_validation"][CV]
    files = new["cross_validation"].get(FILES, {})
    rows = ["| figure (ranking, held out in 5-fold CV) | before (CV of the previous run) | now | target | met |",
            "| --- | ---: | ---: | --- | --- |"]

    def row(label: str, now: float | None, before: float | None, target: str, ok: bool | None) -> None:
        rows.append(f"| {label} | {_f(before)} | **{_f(now)}** | {target} | "
                    f"{'-' if ok is None else 'met' if ok else 'missed'} |")

    row("LoCoMo all gold @10 (CER)", cv["locomo"]["cer@10"], was["locomo"]["cer@10"], ">= 75",
        cv["locomo"]["cer@10"] >= 75)
    row("BEAM 100K all gold @10 (recall_all)", cv["beam-100k"]["cer@10"], was["beam-100k"]["cer@10"], ">= 52",
        cv["beam-100k"]["cer@10"] >= 52)
    lme = cv["longmemeval"]
    row("dev50 + dev200 official session recall_all@5", lme["official_session_recall_all@5"], None, ">= 90",
        lme["official_session_recall_all@5"] >= 90)
    row("dev50 + dev200 official session recall_all@10", lme["official_session_recall_all@10"], None, "reported", None)
    for part, fig in files.items():
        name = "dev200" if part.endswith("dev200") else "dev50"
        before = was["longmemeval"] if name == "dev50" else {}
        row(f"{name} alone, official session recall_all@5", fig.get("official_session_recall_all@5"),
            before.get("official_session_recall_all@5"), "", None)
    for d in ("locomo", "longmemeval", "locomo-plus", "beam-100k"):
        if d not in cv:
            continue
        for k in (10, 40):
            for f, label in (("hit", "any gold"), ("cer", "all gold")):
                if f == "cer" and k == 10 and d in ("locomo", "beam-100k"):
                    continue  # above
                before = was[d][f"{f}@{k}"] if d != "longmemeval" else None
                now = cv[d][f"{f}@{k}"]
                row(f"{NAMES[d]} {label} @{k}", now, before, "not lower" if before is not None else "",
                    None if before is None else now >= before)
    return rows


def baselines(new: dict) -> list[str]:
    cv = new["cross_validation"][CV]
    rows = ["| benchmark, figure | `conv-fusion` held out | BM25 | dense | RRF | z-fusion | at or above all |",
            "| --- | ---: | ---: | ---: | ---: | ---: | --- |"]
    for d, name in NAMES.items():
        if d not in cv:
            continue
        for k in (10, 40):
            for f, label in (("hit", "any gold"), ("cer", "all gold")):
                refs = [new[BASELINES[b]][d][f"{f}@{k}"] for b in ("BM25", "dense", "RRF", "z-fusion")]
                a = cv[d][f"{f}@{k}"]
                rows.append(f"| {name} {label} @{k} | {_f(a)} | " + " | ".join(_f(r) for r in refs)
                            + f" | {'yes' if a >= max(refs) else 'no'} |")
    return rows


def beam(tier: str) -> str | None:
    now, before = _read(f"beam_{tier}_bfr.json"), _read(f"cache/beam_{tier}_before.json")
    if now is None or before is None:
        return None
    a, b = (ours(j["systems"])["10"]["overall"] for j in (now, before))
    c, d = (ours(j["systems"])["40"]["overall"] for j in (now, before))
    return (f"| BEAM {tier.upper()} (held out) | {_f(b['turn_hit'])} / {_f(b['recall_all'])} | "
            f"**{_f(a['turn_hit'])} / {_f(a['recall_all'])}** | {_f(d['turn_hit'])} / {_f(d['recall_all'])} | "
            f"{_f(c['turn_hit'])} / {_f(c['recall_all'])} | {'met' if a['recall_all'] - b['recall_all'] >= 3 else 'missed'} |")


def ours(systems: dict) -> dict:
    """Our arm's figures in a JSON's systems, keyed by its registered name or an alias (``arm_names``)."""
    return next(systems[k] for k in stored_names(CONV_FUSION) if k in systems)


def _cell(p: dict) -> str:
    if p.get("reached", 1.0) < 0.5:  # ui.sufficiency.REACH: past its set size the cut holds the whole set
        return f"- (its whole set, {p['set_size']:.1f} turns)"
    return f"{p['any']:.1f} / {p['all']:.1f}"


def _kind(label: str) -> str:
    """A system's figures in a word or two: development (cross-fitted where its head model's trees were) or not."""
    if not label.startswith("development"):
        return "no weight chosen here"
    return "development; its head model cross-fitted" if "cross-fitted" in label else "development"


def budgets() -> list[str]:
    """Per measured benchmark: its plot and a table of any / all gold at each budget, gap at 10, the figures' kind."""
    data = _read("sufficiency_budgets.json")
    if not data:
        return ["Not measured yet: run `bench/quality/bench_ours_sufficiency.py` (its docstring gives the line)."]
    sizes = [str(k) for k in data["budgets"]]
    out = [f"Commit `{data['commit']}`, `ours.toml` sha256 `{data['ours_toml_sha256'][:12]}`; model calls: {data['llm']}. "
           f"{data['figures']}. {data['development']}.", ""]
    for entry in data["benchmarks"].values():
        out += [f"**{entry['name']}** ({entry['n']:,} questions with gold turns)", ""]
        png = (entry.get("figure") or {}).get("png")
        if png:
            out += [f"![any gold against all gold by budget: {entry['name']}]({png.removeprefix('docs/')})", ""]
        out += ["| system | " + " | ".join(f"@{k} any / all" for k in sizes) + " | gap @10 | figures |",
                "| --- | " + " | ".join("---:" for _ in sizes) + " | ---: | --- |"]
        for system, row in entry["systems"].items():
            b = row["budgets"]
            gap = f"{b['10']['gap']:.1f}" if "10" in b and b["10"].get("reached", 1.0) >= 0.5 else "-"
            out.append(f"| `{canonical_arm(system)}` | " + " | ".join(_cell(b[k]) for k in sizes if k in b)
                       + f" | {gap} | {_kind(row['label'])} |")
            if canonical_arm(system) == CONV_FUSION and "in_sample" in entry:
                b = entry["in_sample"]
                out.append(f"| `{CONV_FUSION}`, in-sample | " + " | ".join(_cell(b[k]) for k in sizes if k in b)
                           + f" | {b['10']['gap']:.1f} | development; its head model trained on these questions |")
        out.append("")
    return out[:-1]


def main() -> None:
    if sys.argv[1:] == ["budgets"]:
        print("\n".join(budgets()))
        return
    new, old = _read("ours_selection.json"), _old_selection()
    print("\n".join(targets(new, old)))
    print()
    rows = [r for r in (beam("500k"), beam("1m")) if r]
    if rows:
        print("| tier | @10 any / all before | @10 any / all now | @40 before | @40 now | all gold @10 up >= 3 |")
        print("| --- | ---: | ---: | ---: | ---: | --- |")
        print("\n".join(rows))
        print()
    print("\n".join(baselines(new)))
    suff = _read("ours_sufficiency_latency.json")
    if suff:
        print()
        for d in ("locomo", "longmemeval"):
            lat = suff.get(f"latency_{d}")
            if lat:
                print(f"- {d}: warm p50 {lat['shipped']['warm_ms_p50']} ms with the set, "
                      f"{lat['set weights 0']['warm_ms_p50']} ms without (ratio {lat['ratio_p50']}, "
                      f"{lat['questions']} questions, load {lat['load_at_start'][0]:.1f} at start)")


if __name__ == "__main__":
    main()
