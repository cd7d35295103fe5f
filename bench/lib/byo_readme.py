"""The README's BEAM and LoCoMo-Plus tables, generated from the JSON they cite (nothing typed by hand).

Reads, per column group named on the command line, ``bench/out/beam_<tier>.json`` (``bench/quality/bench_beam.py
--tier TIER``) or ``locomo_plus.json`` (``bench/quality/bench_locomo_plus.py``, its trigger items) and prints one
markdown table: a row per system (arms, then the reference rankings), per source the cells
``Turn Hit / recall_all`` at k = 10 and at k = 40 with the mean set size at 40, then a line per
source with what it covers and the machine's load. Our arm is shown as ``conv-fusion`` whether a JSON keys
it so or by its alias ``bfr`` (``bfr_core.arm_names``). Where the source's rerun of our arm exists
(``beam_<tier>_bfr.json``, ``locomo_plus_bfr.json``: the arm at the shipped setting), its row and its
reference rankings (computed beside it, by the same code) are the ones shown and the source's own row,
unless both recorded the same ``bfr_setting``, becomes "conv-fusion (earlier setting)"; where
``<rerun>_local.json`` exists (``bench_locomo_plus.py --provider local``), a row "conv-fusion (local
model)" shows the arm with the local model.

    .venv/bin/python -m bench.lib.byo_readme 100K 500K 1M
    .venv/bin/python -m bench.lib.byo_readme plus
    .venv/bin/python -m bench.lib.byo_readme stitching     # plus_stitching.json: both stitchings side by side
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from bfr_core.arm_names import CONV_FUSION, canonical_arm

OUT = Path(__file__).resolve().parents[2] / "bench" / "out"
REFS = {"ref:bm25": "BM25 top-k", "ref:dense": "dense top-k", "ref:rrf": "RRF top-k", "ref:z-fusion": "z-fusion top-k"}


def source(name: str) -> tuple[str, dict[str, Any], str]:
    """(column label, its systems' figures, what it covers) for ``name``: a BEAM tier or ``plus``."""
    if name == "plus":
        data = json.loads((OUT / "locomo_plus.json").read_text(encoding="utf-8"))
        systems, rerun = data["triggers"]["systems"], OUT / "locomo_plus_bfr.json"
        about = f"LoCoMo-Plus dev: {data['triggers']['n']} trigger items, `locomo_plus.json`"
        label = "LoCoMo-Plus dev"
    else:
        data = json.loads((OUT / f"beam_{name.lower()}.json").read_text(encoding="utf-8"))
        systems, rerun = data["systems"], OUT / f"beam_{name.lower()}_bfr.json"
        about = (f"{name}: {data['conversations_done']} of {data['conversations']} conversations, "
                 f"{systems['mem0']['10']['overall']['n']} scoreable questions, {loads(data)}, `beam_{name.lower()}.json`")
        label = f"BEAM {name}"
    systems = named(systems)
    if rerun.is_file():  # our arm and the reference rankings of the rerun: one run, one code
        run = json.loads(rerun.read_text(encoding="utf-8"))
        again = named((run.get("triggers") or run)["systems"])
        if data.get("bfr_setting") is None or data["bfr_setting"] != run.get("bfr_setting"):  # another (or unknown)
            systems = {**systems, f"{CONV_FUSION} (earlier setting)": systems[CONV_FUSION]}
        systems = {**systems, CONV_FUSION: again[CONV_FUSION], **{r: again[r] for r in REFS if r in again}}
        about += f" (`{CONV_FUSION}` and the reference rankings: `{rerun.name}`)"
    model = rerun.with_name(rerun.stem + "_local.json")  # our arm with the local model (its associative step)
    if model.is_file():
        run = json.loads(model.read_text(encoding="utf-8"))
        systems = {**systems, f"{CONV_FUSION} (local model)": named((run.get("triggers") or run)["systems"])[CONV_FUSION]}
        about += f"; `{CONV_FUSION} (local model)`: `{model.name}`, {run.get('provider', 'a model')}, development"
    return label, systems, about


def named(systems: dict[str, Any]) -> dict[str, Any]:
    """A JSON's systems under their registered names (an arm keyed by its alias, ``arm_names``, as its arm)."""
    return {canonical_arm(name): figures for name, figures in systems.items()}


def cell(fig: dict[str, Any], size: bool = False) -> str:
    text = f"{fig['turn_hit']:g} / {fig['recall_all']:g}"
    return text + (f" ({fig['mean_set_size']:g})" if size else "")


def loads(data: dict[str, Any]) -> str:
    seen = [c[k]["loadavg"][0] for c in data.get("chunks", []) for k in ("machine_before", "machine_after") if k in c]
    return f"load {min(seen):g}-{max(seen):g}" if seen else "load not recorded"


def table(names: list[str]) -> str:
    cols = [source(n) for n in names]
    systems = sorted({s for _, sy, _ in cols for s in sy}, key=lambda s: (s in REFS, s))
    lines = ["| system | " + " | ".join(f"{label}, k = 10 | {label}, k = 40" for label, _, _ in cols) + " |",
             "|---" * (1 + 2 * len(cols)) + "|"]
    for s in systems:
        cells = []
        for _, sy, _ in cols:
            got = sy.get(s, {})
            cells += [cell(got["10"]["overall"]) if "10" in got else "-",
                      cell(got["40"]["overall"], size=True) if "40" in got else "-"]
        lines.append(f"| {REFS.get(s, s)} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n\n" + "; ".join(about for _, _, about in cols) + "."


def stitching_table() -> str:
    """``plus_stitching.json`` (bench/quality/bench_plus_stitching.py): every system's Turn Hit @10 / @40 on LoCoMo-Plus dev
    in the benchmark's stitching and with each cue embedded, and the change."""
    data = json.loads((OUT / "plus_stitching.json").read_text(encoding="utf-8"))
    st = data["stitchings"]
    names = {**REFS, "ref:dense+session-topic": "dense + session topic (a probe, not shipped)"}

    def hits(stitch: str, system: str) -> list[float | None]:
        got = st[stitch]["systems"].get(system, {})
        return [got[k]["overall"]["turn_hit"] if k in got else None for k in ("10", "40")]

    def pair(xs: list[float | None]) -> str:
        return " / ".join("-" if x is None else f"{x:.2f}" for x in xs)

    systems = sorted(st["session"]["systems"], key=lambda s: (s.startswith("ref:"), s))
    lines = ["| system | the benchmark's stitching | cue embedded | change |", "|---|---:|---:|---:|"]
    for s in systems:
        a, b = hits("session", s), hits("embedded", s)
        change = [None if x is None or y is None else round(y - x, 2) for x, y in zip(a, b, strict=True)]
        lines.append(f"| {names.get(s, canonical_arm(s))} | {pair(a)} | {pair(b)} | {' / '.join('-' if c is None else f'{c:+.2f}' for c in change)} |")
    return "\n".join(lines) + (f"\n\nLoCoMo-Plus dev: {st['session']['n']} trigger items, Turn Hit @10 / @40, "
                                f"`plus_stitching.json` ({data['provider']}, commit {data['commit']}).")


if __name__ == "__main__":
    if sys.argv[1:] == ["stitching"]:
        print(stitching_table())
    else:
        print(table(sys.argv[1:] or ["100K", "500K", "1M"]))
