"""How the offline Suff@Set stand-in (``llm.rules.suff``) behaves against the gold turns a set holds.

For each store given, runs ``bfr eval --provider rules --suff`` (the real path) on a copy of the store
over a seeded sample, then counts each verdict (sufficient / insufficient / uncertain) by what the set
holds of the gold turns: all of them, some, none. A stand-in that guesses says "sufficient" for sets
that hold no gold turn; one that knows its limits says "uncertain" there. Writes
``bench/out/rules_suff.json``.

    .venv/bin/python -m bench.quality.bench_rules_suff --db locomo.duckdb:locomo --db beam.duckdb:beam-100k

Does not cover: agreement with human sufficiency labels (Annotate's Agreement panel), LLM judges.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "bench" / "out" / "rules_suff.json"


def held(row: tuple) -> str:
    gold_n, turn_hit, recall_all = row
    if not gold_n:
        return "no gold listed"
    if recall_all and recall_all >= 1.0:
        return "all gold"
    return "some gold" if turn_hit and turn_hit > 0 else "no gold"


def measure(db: Path, dataset: str, arms: str, sample: int, seed: int) -> dict:
    import duckdb

    with tempfile.TemporaryDirectory(prefix="bench-suff-") as tmp:
        copy = Path(tmp) / db.name
        shutil.copy(db, copy)
        wal = db.with_name(db.name + ".wal")
        if wal.exists():
            shutil.copy(wal, copy.with_name(copy.name + ".wal"))
        cmd = [sys.executable, "-m", "bfr_core.cli", "eval", "--db", str(copy), "--benchmark", dataset,
               "--arms", arms, "--sample", str(sample), "--seed", str(seed), "--provider", "rules", "--suff"]
        done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
        if done.returncode:
            raise SystemExit(f"bfr eval failed:\n{done.stderr[-2000:]}")
        con = duckdb.connect(str(copy), read_only=True)
        rows = con.execute("SELECT arm, suff, gold_n, turn_hit, recall_all FROM results WHERE status = 'ok'").fetchall()
        con.close()
    table: dict[str, Counter] = {}
    for _arm, suff, *rest in rows:
        table.setdefault(held(tuple(rest)), Counter())[suff or "none"] += 1
    counts = {k: dict(sorted(v.items())) for k, v in sorted(table.items())}
    none = table.get("no gold", Counter())
    n_none = sum(none.values())
    return {"dataset": dataset, "arms": arms.split(","), "rows": len(rows), "by_gold_held": counts,
            "sufficient_pct_when_no_gold": round(100 * none["sufficient"] / n_none, 2) if n_none else None,
            "sufficient_pct_when_all_gold": round(100 * table.get("all gold", Counter())["sufficient"]
                                                  / max(1, sum(table.get("all gold", Counter()).values())), 2)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--db", action="append", required=True, help="STORE:DATASET, repeatable")
    ap.add_argument("--arms", default="mem0,bfr")
    ap.add_argument("--sample", type=int, default=150)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default=str(OUT))
    args = ap.parse_args(argv)
    results = [measure(Path(spec.rsplit(":", 1)[0]), spec.rsplit(":", 1)[1], args.arms, args.sample, args.seed)
               for spec in args.db]
    Path(args.out).write_text(json.dumps({"sample": args.sample, "seed": args.seed, "results": results},
                                         indent=1) + "\n", encoding="utf-8")
    for r in results:
        print(r["dataset"], r["by_gold_held"], "sufficient when no gold:", r["sufficient_pct_when_no_gold"], "%")
    return 0


if __name__ == "__main__":
    sys.exit(main())
