"""The README's tables about ``conv-fusion`` (our arm), generated from the JSON they cite (nothing typed by hand).

Reads ``bench/out/ours_selection.json`` (held-out and development figures of the selection protocol,
over LoCoMo, dev50, the LoCoMo-Plus dev half and, when it was run with ``--beam``, BEAM 100K), and for the table against the simple baselines
``ours.json`` (LoCoMo and dev50 curves, ``--baselines``), ``locomo_plus_bfr.json`` (``bench_locomo_plus.py --arms bfr``) and
``beam_100k_bfr.json`` (``bench_beam.py --tier 100K --arms bfr``: the shipped pipeline beside BM25 / dense / RRF / z-fusion top-k),
``beam_500k_bfr.json`` and ``beam_1m_bfr.json`` (``--arms bfr`` at the shipped setting; ``beam_500k.json`` /
``beam_1m.json``, every arm at an earlier setting, where those are missing) and, when the shipped setting names a
head model, ``head_model.json`` (the shipped pipeline held out twice, set weights and trees chosen without each
fold, stands in the held-out columns, beside the baselines of the selection run that chose the weights). Prints
markdown; paste it into README's ``conv-fusion`` section. The JSON may key our arm by its alias
``bfr``; :func:`ours_key` finds it under either name (``bfr_core.arm_names``).

Run: ``.venv/bin/python -m bench.lib.ours_readme``. Does not cover: any figure not in those files.
"""

from __future__ import annotations

import json
from pathlib import Path

from bench.lib.byo_common import PAIRED  # the BEAM / LoCoMo-Plus JSON's
from bench.lib.head_training import BY_FILE, TWICE
from bench.lib.ours_runs import PAIRED as CURVE_PAIRED
from bench.lib.selection import CHOSEN as SHIPPED
from bench.lib.selection import HELD_OUT as CV  # ours.json's paired key
from bfr_core.arm_names import CONV_FUSION, stored_names

OUT = Path(__file__).resolve().parents[2] / "bench" / "out"
ZF = "z-fusion baseline (no weight chosen: held out everywhere)"
DEV = "figures (development: chosen on these questions)"
DENSE = "dense top-k, the store's dense view (no weight chosen: held out everywhere)"
PLUS = "locomo-plus"
BEAM = "beam-100k"  # in the selection only when it was run with --beam
VERSUS = "bench/out/head_model.json (held out twice) and the selection run it names"
NAMES = {"locomo": "LoCoMo", "longmemeval": "dev50", PLUS: "LoCoMo-Plus dev", BEAM: "BEAM 100K"}

# (label, benchmark, figure key, target); figures are ranking top-k of the selection protocol
TARGETS = (
    ("LoCoMo @40 Gold Hit", "locomo", "hit@40", 93.0),
    ("LoCoMo @40 CER", "locomo", "cer@40", 82.0),
    ("dev50 @40 Turn Hit", "longmemeval", "hit@40", 94.0),
    ("dev50 @40 recall_all (CER)", "longmemeval", "cer@40", 93.8),
    ("dev50 @10 Turn Hit", "longmemeval", "hit@10", 86.0),
    ("dev50 official session recall_any@5", "longmemeval", "official_session_recall_any@5", 97.0),
    ("dev50 official session recall_all@5", "longmemeval", "official_session_recall_all@5", 92.0),
)


def _f(x: object) -> str:
    return f"{x:.2f}" if isinstance(x, int | float) else str(x)


def targets(sel: dict) -> list[str]:
    cv = sel["cross_validation"][CV]
    dev = sel[SHIPPED][DEV]
    rows = ["| target (offline rules, ranking top-k) | held out (5-fold CV) | development (shipped setting) | target | met (held out) |",
            "| --- | ---: | ---: | ---: | --- |"]
    plus = [(f"LoCoMo-Plus dev @{k} Turn Hit (target: dense top-{k})", PLUS, f"hit@{k}", sel[DENSE][PLUS][f"hit@{k}"])
            for k in (10, 40)] if PLUS in cv else []
    for label, d, key, t in (*TARGETS, *plus):
        h = cv[d][key]
        rows.append(f"| {label} | **{_f(h)}** | {_f(dev[d][key])} | >= {t:g} | {'met' if h >= t else 'missed'} |")
    return rows


def twice() -> tuple[dict, dict]:
    """The shipped pipeline held out twice (``head_model.json``: set weights chosen and trees trained without
    each fold), benchmark -> figures, and the selection run it took the weights from; both empty when absent."""
    t = _read("head_model.json").get(TWICE, {})
    if not t:
        return {}, {}
    return {d: v["head model"] for d, v in t["benchmarks"].items()}, _read(t["selection"])


def versus_baseline(sel: dict) -> list[str]:
    """conv-fusion held out against z-fusion and dense top-k on the same questions: the shipped pipeline held out
    twice (:func:`twice`) beside the baselines of the selection run that chose its weights, else ``sel``'s
    ranking-only cross-validation."""
    held, shipped = twice()
    cv, base = (held, shipped) if held else (sel["cross_validation"][CV], sel)
    zf, dn = base[ZF], base[DENSE]
    what = "its set weights and head model chosen without the fold" if held else "ranking top-k"
    rows = [f"| benchmark, figure | `conv-fusion` held out ({what}) | z-fusion top-k | dense top-k | "
            "`conv-fusion` strictly above both |", "| --- | ---: | ---: | ---: | --- |"]
    for d, name in NAMES.items():
        if d not in cv:
            continue
        name = "dev50 + dev200" if held and d == "longmemeval" else name
        for k in (10, 40):
            for f, label in (("hit", "Gold Hit" if d == "locomo" else "Turn Hit"), ("cer", "CER / recall_all")):
                a, b, c = cv[d][f"{f}@{k}"], zf[d][f"{f}@{k}"], dn[d][f"{f}@{k}"]
                rows.append(f"| {name} @{k} {label} | {_f(a)} | {_f(b)} | {_f(c)} | {'yes' if a > max(b, c) else 'no'} |")
    return rows


def by_type(sel: dict) -> list[str]:
    cv, zf, dn = sel["cross_validation"]["held out by type"], sel[ZF]["by type"], sel[DENSE]["by type"]
    rows = ["| benchmark, type | n | `conv-fusion` held out hit@10 / hit@40 / CER@40 | z-fusion hit@10 / hit@40 / CER@40 | "
            "dense hit@10 / hit@40 / CER@40 |", "| --- | ---: | --- | --- | --- |"]

    def cell(v: dict) -> str:
        return f"{_f(v['hit@10'])} / {_f(v['hit@40'])} / {_f(v['cer@40'])}"

    for d in NAMES:
        for t, v in cv.get(d, {}).items():
            rows.append(f"| {NAMES[d]}, {t} | {v['n']} | {cell(v)} | {cell(zf[d][t])} | {cell(dn[d][t])} |")
    return rows


def lobo(sel: dict) -> list[str]:
    present = [d for d in NAMES if d in sel["cross_validation"][CV]]
    heads = {"locomo": "LoCoMo hit@10 / hit@40 / CER@40", "longmemeval": "dev50 hit@10 / hit@40 / CER@40 / official "
             "session any@5 / all@5", PLUS: "LoCoMo-Plus dev hit@10 / hit@40 / CER@40",
             BEAM: "BEAM 100K hit@10 / hit@40 / CER@40"}
    rows = ["| chosen on | " + " | ".join(heads[d] for d in present) + " |", "| --- |" + " --- |" * len(present)]

    def fig(r: dict, d: str) -> str:
        keys = ("hit@10", "hit@40", "cer@40") + (("official_session_recall_any@5", "official_session_recall_all@5")
                                                   if d == "longmemeval" else ())
        return " / ".join(_f(r[k]) for k in keys)

    for other in present:
        tune = [d for d in present if d != other]
        r = sel[f"tune on {' + '.join(tune)}, report {other}"]
        cells = {d: fig(r[f"{d} (tuned: development)"], d) + " (development)" for d in tune}
        cells[other] = "**" + fig(r[f"{other} (held out)"], other) + "** (held out)"
        rows.append(f"| {' + '.join(NAMES[d] for d in tune)} | " + " | ".join(cells[d] for d in present) + " |")
    cv = sel["cross_validation"][CV]
    rows.append("| **5-fold CV over all** | " + " | ".join(f"**{fig(cv[d], d)}** (held out)" for d in present) + " |")
    dev = sel[SHIPPED][DEV]
    rows.append("| every conversation (shipped) | " + " | ".join(f"{fig(dev[d], d)} (development)" for d in present)
                + " |")
    return rows


# The pipeline's figures beside the simple baselines: (benchmark, JSON, our arm's labels) per row group. LoCoMo and dev50
# from ours.json's curves (--baselines), LoCoMo-Plus and BEAM from byo_common's rows (ref:* = the reference rankings).
CURVE_REFS = {"BM25": "bm25 top-k (mem0)", "dense": "dense top-k (amem)", "RRF": "rrf top-k (hybrid view)",
              "z-fusion": "z-fusion top-k (stemmed bm25 + static dense, z-scores, no priors, no context)"}
BYO_REFS = {"BM25": "ref:bm25", "dense": "ref:dense", "RRF": "ref:rrf", "z-fusion": "ref:z-fusion"}


def against_baselines(sel: dict) -> list[str]:
    """conv-fusion's shipped pipeline at 10 and 40 turns beside the best of BM25, dense, RRF and z-fusion top-k."""
    rows = ["| benchmark (figure) | k | `conv-fusion` pipeline | label | `conv-fusion` held out (CV) | "
            "best simple baseline | `conv-fusion` >= best | paired: `conv-fusion` only / best only (exact McNemar p) | "
            "source |",
            "| --- | ---: | ---: | --- | ---: | --- | --- | --- | --- |"]
    cv = sel["cross_validation"][CV]
    # with a head model shipped, the pipeline held out twice (weights and trees chosen without the fold) gives the
    # held-out figures, dev50's over dev50's own questions (the pipeline row's); the selection's are those of the
    # set order without it
    heads = twice()[0] if _read("ours.json").get("settings", {}).get("head_model") else {}
    dev50 = _read("head_model.json").get(TWICE, {}).get(BY_FILE, {}).get("head model", {}).get("longmemeval")
    if heads and dev50:
        heads["longmemeval"] = dev50
    groups = []
    ours = _read("ours.json")
    for d, key, fig in (("locomo", "curve", "gold_hit"), ("longmemeval", "curve_longmemeval", "turn_hit")):
        c = ours.get(key, {})
        for k in (10, 40):
            refs = {n: c[v][str(k)][fig] for n, v in CURVE_REFS.items() if v in c and str(k) in c[v]}
            pairs = c.get(CURVE_PAIRED, {}).get(str(k), {})
            by_name = {n: pairs[v] for n, v in CURVE_REFS.items() if v in pairs}
            if ours_key(c) and refs:
                groups.append((d, fig, k, c[ours_key(c)][str(k)][fig], _trained(ours.get("settings", {})), refs,
                               "ours.json", by_name))
    held_out = "held out (not in the selection)"
    beam_100k = (BEAM, _trained(_read("beam_100k_bfr.json").get("bfr_setting", {}))) if BEAM in cv else \
        ("BEAM 100K", held_out)
    rerun = {t: f"beam_{t}_bfr.json" if (OUT / f"beam_{t}_bfr.json").exists() else f"beam_{t}.json" for t in ("500k", "1m")}
    for d, f, label in ((PLUS, "locomo_plus_bfr.json", "development"), (beam_100k[0], "beam_100k_bfr.json", beam_100k[1]),
                        ("BEAM 500K", rerun["500k"], held_out), ("BEAM 1M", rerun["1m"], held_out)):
        j = _read(f)
        sy = (j.get("triggers") or j).get("systems", {})
        pairs = (j.get("triggers") or j).get(PAIRED, {})
        for k in (10, 40):
            if ours_key(sy):
                refs = {n: sy[v][str(k)]["overall"]["turn_hit"] for n, v in BYO_REFS.items() if v in sy}
                by_name = {n: pairs[str(k)][v] for n, v in BYO_REFS.items() if v in pairs.get(str(k), {})}
                groups.append((d, "turn_hit", k, sy[ours_key(sy)][str(k)]["overall"]["turn_hit"], label, refs, f,
                               by_name))
    for d, fig, k, b, label, refs, src, pair in groups:
        best = max(refs, key=lambda n: (refs[n], n))
        held = heads.get(d, {}).get(f"hit@{k}", cv.get(d, {}).get(f"hit@{k}"))
        p = pair.get(best)
        test = (f"{p['bfr_only']} / {p['reference_only']} ({_p(p['mcnemar_p'])})" if p else
                "not recorded (no per-question rows in the JSON)")
        rows.append(f"| {NAMES.get(d, d)} ({fig.replace('_', ' ')}) | {k} | {_f(b)} | {label} | "
                    f"{_f(held) if held is not None else 'not in the CV'} | {best} {_f(refs[best])} | "
                    f"{'yes' if b >= refs[best] else 'no'} | {test} | `{src}`, "
                    f"`{'head_model.json' if d in heads else 'ours_selection.json'}` |")
    return rows


def _trained(setting: dict) -> str:
    """The label of a development figure whose run's setting may name a head model trained on the same questions
    (LoCoMo, dev50 + dev200 and BEAM 100K: ``bench.lib.head_training.TRAIN``)."""
    return "development; its head model trained on these questions" if setting.get("head_model") else "development"


def ours_key(systems: dict) -> str | None:
    """The key our arm has in a bench JSON's systems: its registered name or an alias; None when absent."""
    return next((k for k in stored_names(CONV_FUSION) if k in systems), None)


def _p(p: float) -> str:
    """A McNemar p as the JSON rounds it (4 decimals): "p < 0.0001" below that."""
    return "p < 0.0001" if p < 0.0001 else f"p = {p:g}"


def _read(name: str) -> dict:
    p = OUT / name
    return json.loads(p.read_text(encoding="utf-8")) if p.exists() else {}


def main() -> None:
    sel = json.loads((OUT / "ours_selection.json").read_text(encoding="utf-8"))
    held = twice()[0]
    for title, rows, source in (
            ("targets", targets(sel), ""), ("versus z-fusion and dense", versus_baseline(sel), VERSUS if held else ""),
            ("leave-one-benchmark-out", lobo(sel), ""), ("by type", by_type(sel), ""),
            ("against the simple baselines", against_baselines(sel), "")):
        print(f"<!-- {title}: generated by bench/lib/ours_readme.py from {source or 'bench/out/ours_selection.json'} -->")
        print("\n".join(rows))
        print()


if __name__ == "__main__":
    main()
