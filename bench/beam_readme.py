"""The README's BEAM tables, generated from the JSON they cite (nothing typed by hand).

Reads ``bench/out/beam_<tier>.json`` (``bench/bench_beam.py --tier TIER``) for each tier given and
prints one markdown table: a row per system (arms, then the reference rankings), per tier the cells
``Turn Hit / recall_all`` at k = 10 and at k = 40 with the mean set size at 40, and a last line with
each tier's conversations done, scoreable questions run and the machine's load range. Where
``beam_<tier>_bfr.json`` exists (``bench_beam.py --arms bfr --out ...``: ``bfr`` rerun at the shipped
setting), its ``bfr`` row is the one shown and the tier file's own becomes "bfr (earlier setting)".

    .venv/bin/python bench/beam_readme.py 100K 500K 1M
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

OUT = Path(__file__).resolve().parents[1] / "bench" / "out"
REFS = {"ref:bm25": "BM25 top-k", "ref:dense": "dense top-k", "ref:rrf": "RRF top-k", "ref:z-fusion": "z-fusion top-k"}


def cell(fig: dict[str, Any], size: bool = False) -> str:
    text = f"{fig['turn_hit']:g} / {fig['recall_all']:g}"
    return text + (f" ({fig['mean_set_size']:g})" if size else "")


def loads(data: dict[str, Any]) -> str:
    seen = [c[k]["loadavg"][0] for c in data.get("chunks", []) for k in ("machine_before", "machine_after") if k in c]
    return f"load {min(seen):g}-{max(seen):g}" if seen else "load not recorded"


def table(tiers: list[str]) -> str:
    data = {t: json.loads((OUT / f"beam_{t.lower()}.json").read_text(encoding="utf-8")) for t in tiers}
    for t, d in data.items():
        rerun = OUT / f"beam_{t.lower()}_bfr.json"
        if rerun.is_file():
            d["systems"]["bfr (earlier setting)"] = d["systems"].pop("bfr")
            d["systems"]["bfr"] = json.loads(rerun.read_text(encoding="utf-8"))["systems"]["bfr"]
    systems = sorted({s for d in data.values() for s in d["systems"]}, key=lambda s: (s in REFS, s))
    head = "| system | " + " | ".join(f"{t}, k = 10 | {t}, k = 40" for t in tiers) + " |"
    lines = [head, "|---" * (1 + 2 * len(tiers)) + "|"]
    for s in systems:
        cells = []
        for t in tiers:
            got = data[t]["systems"].get(s, {})
            cells += [cell(got["10"]["overall"]) if "10" in got else "-",
                      cell(got["40"]["overall"], size=True) if "40" in got else "-"]
        lines.append(f"| {REFS.get(s, s)} | " + " | ".join(cells) + " |")
    done = "; ".join(f"{t}: {d['conversations_done']} of {d['conversations']} conversations, "
                     f"{d['systems']['mem0']['10']['overall']['n']} scoreable questions, {loads(d)}"
                     for t, d in data.items())
    return "\n".join(lines) + f"\n\n({done}; `beam_<tier>.json`.)"


if __name__ == "__main__":
    print(table(sys.argv[1:] or ["100K", "500K", "1M"]))
