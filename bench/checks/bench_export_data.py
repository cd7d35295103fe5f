"""``bfr export-data`` on the real datasets: how long it takes, whether the file is what the arms search,
and whether an outside system's run over it comes back through ``bfr import-run``.

For every dataset of ``--db`` (default: the selection's store: LoCoMo, dev50, LoCoMo-Plus dev, BEAM 100K):

* **time and size** of the export, full and ``--blind`` (``ingest.corpus.corpus_lines``, as the command);
* **integrity**, read back from the file only (split at "\n" as ``jsonl.split_lines`` does; no line may
  break elsewhere): per scope, the turn ids in order equal the store's ``scope_turns`` (in the blind
  file: their ``corpus.blind_id``, and no store id of any kind appears), every question of the store is
  there once, every gold id is a turn of its own line, the blind file carries no label key
  (``corpus.LABELS``) and no ``local_id``;
* **round trip** (``--round-trip``, default LoCoMo and the LoCoMo-Plus dev half): an outside system that reads the
  blind file alone (no ``bfr_core`` import: word overlap of the question with each turn, ties by file
  order, top 10) writes a TREC run over the blind ids, ``bfr import-run`` scores it into a copy of the store, and its Turn
  Hit is recomputed here from the full file's gold over its scoreable questions: the two must agree.

Writes ``bench/out/export_data.json``.

    .venv/bin/python -m bench.checks.bench_export_data
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.lib.byo_common import machine
from bench.lib.export_check import K, integrity, outside_run
from bench.lib.git_commit import commit
from bfr_core.cli import main as bfr
from bfr_core.ingest.corpus import blind_id, corpus_lines
from bfr_core.jsonl import split_lines
from bfr_core.store import Store

ROOT = Path(__file__).resolve().parents[2]


def round_trip(db: Path, dataset_id: str, blind: list[dict], full: list[dict]) -> dict[str, Any]:
    """The outside run as TREC through ``bfr import-run`` on a copy of the store, beside its hit recomputed here."""
    run = outside_run(blind)
    gold = {blind_id(dataset_id, "question", q["question_id"]): {blind_id(dataset_id, "turn", g) for g in q["gold"]}
            for r in full for q in r["questions"] if q["scoreable"]}  # as a run scores, in the blind file's ids
    scored = [qid for qid, _ in run if qid in gold]
    here = sum(bool(set(ids) & gold[qid]) for qid, ids in run if qid in gold)
    with tempfile.TemporaryDirectory() as tmp:
        copy, trec = Path(tmp) / "copy.duckdb", Path(tmp) / "run.trec"
        shutil.copy(db, copy)
        trec.write_text("".join(f"{qid} Q0 {tid} {i + 1} {K - i} outside\n" for qid, ids in run
                                for i, tid in enumerate(ids)), encoding="utf-8")
        t0 = time.perf_counter()
        out = Path(tmp) / "out.json"
        with out.open("w", encoding="utf-8") as fh:
            stdout, sys.stdout = sys.stdout, fh
            try:
                rc = bfr(["import-run", str(trec), "--db", str(copy), "--dataset", dataset_id, "--name", "outside",
                          "--allow-missing", "--json"])
            finally:
                sys.stdout = stdout
        took = round(time.perf_counter() - t0, 1)
        reply = json.loads(out.read_text(encoding="utf-8")) if rc == 0 else {}
    imported = reply.get("summary", {}).get("turn_hit")
    return {"questions": len(run), "scoreable": len(scored), "import_run_exit": rc, "import_s": took,
            "turn_hit_imported": imported, "turn_hit_from_the_file": round(100 * here / len(scored), 2) if scored else None}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--db", default=str(ROOT / "bench" / "out" / "cache" / "ours.duckdb"))
    ap.add_argument("--round-trip", default="locomo,locomo-plus", help="the datasets whose outside run is imported")
    ap.add_argument("--out", default=str(ROOT / "bench" / "out" / "export_data.json"))
    args = ap.parse_args()
    store = Store(args.db, read_only=True)
    result: dict[str, Any] = {"command": "bench/checks/bench_export_data.py " + " ".join(sys.argv[1:]), "db": args.db,
                              "commit": commit(), "machine_before": machine(), "datasets": {}}
    kept: dict[str, tuple[list[dict], list[dict]]] = {}
    for d in store.datasets():
        name, row = d["dataset_id"], {}
        texts = {}
        for blind in (False, True):
            t0 = time.perf_counter()
            texts[blind] = "".join(corpus_lines(store, name, blind))
            row["export_s" + ("_blind" if blind else "")] = round(time.perf_counter() - t0, 2)
            row["bytes" + ("_blind" if blind else "")] = len(texts[blind].encode("utf-8"))
        full, blind_rows = ([json.loads(x) for x in split_lines(texts[b]) if x] for b in (False, True))
        row["integrity"] = integrity(store, name, full, blind_rows)
        result["datasets"][name] = row
        if name in args.round_trip.split(","):
            kept[name] = (full, blind_rows)
        print(f"{name}: {row['export_s']} s, {row['bytes'] / 1e6:.1f} MB", flush=True)
    store.close()
    result["round_trip"] = {name: round_trip(Path(args.db), name, blind_rows, full) for name, (full, blind_rows) in kept.items()}
    result["machine_after"] = machine()
    Path(args.out).write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
