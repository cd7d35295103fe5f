"""Does a method find LoCoMo-Plus's cue by what it says, or by where the benchmark put it?

LoCoMo-Plus's construction (``build_conv.py``, as ``bfr_core.ingest.locomo_plus`` stitches it) makes
each cue a session of its own, of one or two turns. A score that reads sessions (a session's mean
vector, its best turn, its size) can find that session by its shape, whatever the trigger says; the
held-back half is built the same way, so a gain of that kind shows there too, and on no real chat.
This bench runs every arm and the four reference rankings over the dev half's triggers in both
stitchings, the benchmark's (``locomo-plus``) and the cue embedded inside the session before it
(``locomo-plus-embedded``: ``bfr ingest locomo-plus ... --stitch embedded``), and one session-level
ranking that ``bfr`` does not ship, ``ref:dense+session-topic`` (z(dense) + z(cosine of the trigger with
the turn's session's mean MiniLM vector), ``variants.session_topic``), as the probe: the signal
the selection protocol would buy if offered it in the remark regime.

Writes ``bench/out/plus_stitching.json``: per stitching, every system's Turn Hit and recall_all at 10
and 40 turns (by relation type), the paired comparison of ``bfr`` with each reference, and per system
the change from the benchmark's stitching to the embedded one. Offline rules, no model.

    .venv/bin/python -m bench.quality.bench_plus_stitching --cached-ner-only
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from bench.lib.byo_common import PAIRED, machine, paired, plus_arguments, run_rows, summary
from bench.lib.git_commit import commit
from bench.lib.stitching import PROBE, change, probe_rows
from bfr_core.ingest import ingest
from bfr_core.store import Store

ROOT = Path(__file__).resolve().parents[2]

STITCHINGS = {"session": "locomo-plus", "embedded": "locomo-plus-embedded"}  # stitch -> dataset id


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    plus_arguments(ap)
    ap.add_argument("--out", default=str(ROOT / "bench" / "out" / "plus_stitching.json"))
    args = ap.parse_args()
    arms, ks = args.arms.split(","), [int(k) for k in args.ks.split(",")]
    store = Store(args.db)
    out: dict[str, Any] = {"command": "bench/quality/bench_plus_stitching.py " + " ".join(sys.argv[1:]),
                           "source": args.plus, "commit": commit(), "provider": "offline rules",
                           "cached_ner_only": args.cached_ner_only, "machine_before": machine(),
                           "probe": f"{PROBE}: z(dense view) + z(cosine of the trigger with its turn's session's "
                                    "mean MiniLM vector); not a bfr setting", "ingest_s": {}, "stitchings": {}}
    t0 = time.perf_counter()
    for stitch, name in STITCHINGS.items():
        if store.dataset(name) is None:
            t = time.perf_counter()
            ingest(store, "locomo-plus", args.plus, name=name, entities=not args.cached_ner_only,
                   options={"locomo": args.locomo, "locomo_questions": True, "stitch": stitch})
            out["ingest_s"][name] = round(time.perf_counter() - t, 1)
        triggers = [q for q in store.questions(name) if not q.qtype.startswith("locomo/")]
        rows = run_rows(store, name, triggers, arms, ks, lambda q: {"relation": q.qtype}, log=lambda m: None,
                        cached_ner_only=args.cached_ner_only)
        rows += probe_rows(store, name, triggers, ks)
        out["stitchings"][stitch] = {"dataset": name, "n": len(triggers), "systems": summary(rows, ["relation"]),
                                     PAIRED: paired(rows)}
        print(f"{stitch}: {len(rows)} rows, {time.perf_counter() - t0:.0f} s", flush=True)
    s = out["stitchings"]
    out["turn hit change, embedded minus the benchmark's stitching (points)"] = change(
        s["session"]["systems"], s["embedded"]["systems"])
    out["eval_s"] = round(time.perf_counter() - t0, 1)
    out["machine_after"] = machine()
    store.close()
    Path(args.out).write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
