"""How much text the fold of ``bfr_core/text.py`` touches, per benchmark, and what tokenising costs.

Before the fold every word comparison read ``[a-z0-9]+`` of the lower-cased text ("Zürich" -> "z",
"rich"; other scripts dropped). Per benchmark, over the turns and questions in the stores the other
benches build (``bench/out/cache/ours.duckdb``: LoCoMo, dev50, LoCoMo-Plus dev, BEAM 100K;
``byo_beam_500k.duckdb`` and ``byo_beam_1m.duckdb``: BEAM's held-out tiers), this counts the texts
holding a non-ASCII letter and the texts whose words (``text.words``) differ from what the ASCII rule
gave. It also times ``text.words`` against the ASCII rule over dev50's turns (best of 3; the load is
recorded beside it). Nothing is chosen here.

Writes ``bench/out/text_fold.json``. Run: ``.venv/bin/python -m bench.quality.bench_text_fold``.
Does not cover: what the fold changed in rankings (``bench_arm_rows.py``) or figures (the other benches).
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from bench.lib.text_fold import ascii_words, counts
from bfr_core.store import Store
from bfr_core.text import words

ROOT = Path(__file__).resolve().parents[2]

CACHE = ROOT / "bench" / "out" / "cache"
# (label, store file, the datasets it counts: a name, or "" for every dataset of the store)
SOURCES = (("locomo", "ours.duckdb", "locomo"), ("longmemeval dev50", "ours.duckdb", "longmemeval"),
           ("locomo-plus dev", "ours.duckdb", "locomo-plus"), ("beam 100K", "ours.duckdb", "beam-100k"),
           ("beam 500K", "byo_beam_500k.duckdb", ""), ("beam 1M", "byo_beam_1m.duckdb", ""))


def best_of(fn: Callable[[str], list[str]], texts: Sequence[str], runs: int = 3) -> float:
    best = float("inf")
    for _ in range(runs):
        start = time.perf_counter()
        for t in texts:
            fn(t)
        best = min(best, time.perf_counter() - start)
    return round(best, 3)


def texts_of(store: Store, table: str, dataset: str) -> list[str]:
    where, args = ("WHERE dataset_id = ?", [dataset]) if dataset else ("", [])
    return [r[0] or "" for r in store.cursor().execute(f"SELECT text FROM {table} {where}", args).fetchall()]


def main() -> int:
    out: dict[str, object] = {"benchmark": "text_fold", "load_at_start": list(os.getloadavg()), "sources": {}}
    stores: dict[str, Store] = {}
    for label, name, dataset in SOURCES:
        path = CACHE / name
        if not path.exists():
            out["sources"][label] = f"not measured: {path.name} missing (built by the bench that uses it)"
            continue
        store = stores.setdefault(name, Store(path, read_only=True))
        if dataset and store.dataset(dataset) is None:
            out["sources"][label] = f"not measured: {path.name} holds no {dataset}"
            continue
        out["sources"][label] = {"turns": counts(texts_of(store, "turns", dataset)),
                                 "questions": counts(texts_of(store, "questions", dataset))}
        print(label, json.dumps(out["sources"][label]), file=sys.stderr)
    if "ours.duckdb" in stores:
        dev50 = texts_of(stores["ours.duckdb"], "turns", "longmemeval")
        out["tokenise_dev50_turns_s"] = {"texts": len(dev50), "ascii_rule": best_of(ascii_words, dev50),
                                         "text.words": best_of(words, dev50)}
    for store in stores.values():
        store.close()
    out["load_at_end"] = list(os.getloadavg())
    dest = ROOT / "bench" / "out" / "text_fold.json"
    dest.write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {dest}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
