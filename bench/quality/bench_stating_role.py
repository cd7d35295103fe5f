"""Where `bfr`'s stating-role prior fires: every scope of every benchmark the workbench loads.

The prior (``turn_scores.stating_role``) lifts the turns of the speaker who states facts when a store
shows a user beside an assistant: two speakers, one whose median turn is ``ROLE_RATIO`` times the
other's. ``ROLE_WORDS`` (added after the selection run, fixed by argument) also asks that median to be
a paragraph, so that a terse person beside a chatty one is not taken for a user beside an assistant.
This bench reads turn lengths only (no question, no gold) and writes, per benchmark, how many scopes
fire with the ratio alone and with both conditions, the scopes whose decision differs, and the range
of each side's median turn: the evidence that the added condition changes no development store's
decision, so every figure measured before it stands.

    .venv/bin/python -m bench.quality.bench_stating_role [--out bench/out/stating_role.json]

Does not cover: stores with more than two speakers (the prior never fires there).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from bench.lib import git_commit  # the code this bench measured
from bfr_core.ingest.beam import load_beam
from bfr_core.ingest.locomo import load_locomo
from bfr_core.ingest.locomo_plus import load_locomo_plus
from bfr_core.ingest.longmemeval import load_longmemeval
from bfr_core.ingest.sources import benchmark_file, data_dir
from bfr_core.method import turn_scores
from bfr_core.outfile import write_output

ROOT = Path(__file__).resolve().parents[2]


def scope_turns(bundle: Any) -> dict[str, list[Any]]:
    """Each scope's turns, in the order of its sessions."""
    by_session: dict[str, list[Any]] = defaultdict(list)
    for t in bundle.turns:
        by_session[t.session_id].append(t)
    return {sc.scope_id: [t for s in sc.session_ids for t in by_session[s]] for sc in bundle.scopes}


def benchmark_row(bundle: Any) -> dict[str, Any]:
    """Per benchmark: scopes, decisions with the ratio alone and with the paragraph condition too."""
    rows = []
    for scope_id, turns in scope_turns(bundle).items():
        m = turn_scores.speaker_medians(turns)
        ratio_only = turn_scores.stating_role(turns, words=0)
        shipped = turn_scores.stating_role(turns)
        rows.append({"scope": scope_id, "speakers": len(m), "long": max(m.values(), default=0.0),
                     "short": min(m.values(), default=0.0), "ratio_only": ratio_only, "shipped": shipped})
    two = [r for r in rows if r["speakers"] == 2]
    return {
        "scopes": len(rows),
        "two_speakers": len(two),
        "fires_ratio_only": sum(bool(r["ratio_only"]) for r in rows),
        "fires_shipped": sum(bool(r["shipped"]) for r in rows),
        "decision_differs": [r["scope"] for r in rows if r["ratio_only"] != r["shipped"]],
        "long_side_median_range": [min((r["long"] for r in two), default=None), max((r["long"] for r in two), default=None)],
        "short_side_median_range": [min((r["short"] for r in two), default=None), max((r["short"] for r in two), default=None)],
    }


def bundles() -> dict[str, Any]:
    out = {"locomo": load_locomo(benchmark_file("locomo")), "longmemeval dev50": load_longmemeval(benchmark_file("longmemeval")),
           "locomo-plus dev": load_locomo_plus(data_dir() / "locomo_plus_dev.json")}
    for tier in ("100K", "500K", "1M"):
        if (data_dir() / "beam" / tier).is_dir():
            out[f"beam {tier}"] = load_beam(data_dir() / "beam" / tier)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(ROOT / "bench" / "out" / "stating_role.json"))
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    result = {"command": "bench/quality/bench_stating_role.py", "commit": git_commit.commit(),
              "role_ratio": turn_scores.ROLE_RATIO, "role_words": turn_scores.ROLE_WORDS,
              "benchmarks": {name: benchmark_row(b) for name, b in bundles().items()}}
    result["no_decision_differs"] = not any(r["decision_differs"] for r in result["benchmarks"].values())
    result["elapsed_s"] = round(time.perf_counter() - t0, 1)
    write_output(Path(args.out), json.dumps(result, indent=1) + "\n", option="--out", force=True)
    print(json.dumps({k: v for k, v in result.items() if k != "benchmarks"}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
