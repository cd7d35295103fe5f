"""Two store files hold the same rows: what an ingest change must keep (issue 26, "results kept").

Compares every table of two closed DuckDB store files row by row (sorted; the ``ingested_at`` column
left out, and ``source`` where it names a temp path), vectors bit for bit, and writes which tables
match, with row counts, to ``--out`` (default ``bench/out/store_same.json``). Stores built from the
same input by the old and the new code (``bench/speed/bench_ingest.py --keep DIR``, once with
``--code OLD_CHECKOUT``) with identical contents give every arm identical rows, so every headline
figure is unchanged by construction.

    .venv/bin/python -m bench.checks.bench_store_same OLD.duckdb NEW.duckdb --label "..."
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from bench.lib.store_rows import contents

ROOT = Path(__file__).resolve().parents[2]


def compare(old: Path, new: Path) -> dict[str, Any]:
    a, b = contents(old), contents(new)
    tables = {t: {"old_rows": len(a.get(t, [])), "new_rows": len(b.get(t, [])), "same": a.get(t) == b.get(t)}
              for t in sorted(set(a) | set(b))}
    return {"old": str(old), "new": str(new), "same": all(t["same"] for t in tables.values()), "tables": tables}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("pairs", nargs="+", type=Path, help="OLD NEW [OLD NEW ...]")
    ap.add_argument("--label", default="")
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "out" / "store_same.json")
    args = ap.parse_args(argv)
    if len(args.pairs) % 2:
        ap.error("give the stores in OLD NEW pairs")
    rows = [compare(args.pairs[i], args.pairs[i + 1]) for i in range(0, len(args.pairs), 2)]
    for r in rows:
        counts = ", ".join(f"{t} {v['new_rows']:,}" for t, v in r["tables"].items())
        print(f"{r['new']}: {'same' if r['same'] else 'DIFFERENT'} ({counts})", file=sys.stderr)
    args.out.write_text(json.dumps({"benchmark": "store_same", "label": args.label, "pairs": rows}, indent=1) + "\n",
                        encoding="utf-8")
    return 0 if all(r["same"] for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
