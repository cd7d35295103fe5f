"""The offline requirements before and after a change to the decomposer, on every question.

Two modes, as ``bench_arm_rows.py``:

* ``dump``: for every question of each dataset file found under ``$BFR_DATA`` (LoCoMo, LongMemEval S
  dev50 and dev200, LoCoMo-Plus dev, every BEAM tier present), write Stage I's offline requirements
  (``method.requirements.decompose`` without a model: id, text, kind, terms, constraint date) and the
  offline rules' decompose role's reply (``llm.rules.decompose``). Run it once with the old code and
  once with the new (``git worktree add ../old REV``; ``python -P`` with ``PYTHONPATH=../old:.`` takes
  ``bfr_core`` from there and this package from here).
* ``compare``: per dataset, the questions whose Stage I requirements differ (the arms' offline input:
  equal requirements leave every offline arm's rows as they were) and those whose rules role reply
  differs (the offline stand-in's input to select, tool, answer and suff); writes
  ``bench/out/decomposer_equivalence.json`` (counts and question ids, no benchmark text).

    PYTHONPATH=../old:. .venv/bin/python -P -m bench.checks.bench_decomposer_equivalence dump --out old.json
    .venv/bin/python -m bench.checks.bench_decomposer_equivalence dump --out new.json
    .venv/bin/python -m bench.checks.bench_decomposer_equivalence compare old.json new.json --label "..."

Offline, no model, no store. Does not cover: the answers (``bench_rules_answers.py``), the arms' rows
under other changes (``bench_arm_rows.py``).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from bench.lib.data_files import benchmark_files
from bfr_core.ingest import load
from bfr_core.llm import rules
from bfr_core.method import requirements
from bfr_core.records import Query

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "bench" / "out" / "decomposer_equivalence.json"


def questions() -> dict[str, list[tuple[str, str]]]:
    """(question id, text) pairs per dataset file found under the data folder."""
    return {name: [(q.question_id, q.text) for q in load(kind, path, **options).questions]
            for name, (kind, path, options) in benchmark_files().items()}


def dump(out: str) -> None:
    rows = {name: {qid: {"stage1": [[r.rid, r.text, r.kind, list(r.terms), r.when]
                                    for r in requirements.decompose(Query(qid, "", text))],
                         "rules": rules.decompose(text)} for qid, text in qs}
            for name, qs in questions().items()}
    Path(out).write_text(json.dumps(rows), encoding="utf-8")
    print({name: len(r) for name, r in rows.items()}, "->", out)


def compare(first: str, second: str, label: str, out: str) -> dict:
    old, new = json.loads(Path(first).read_text()), json.loads(Path(second).read_text())
    result: dict = {"benchmark": "decomposer_equivalence", "label": label, "datasets": {}}
    for name in sorted(set(old) & set(new)):
        shared = sorted(set(old[name]) & set(new[name]))
        stage1 = [q for q in shared if old[name][q]["stage1"] != new[name][q]["stage1"]]
        role = [q for q in shared if old[name][q]["rules"] != new[name][q]["rules"]]
        result["datasets"][name] = {"questions": len(shared), "stage1_differ": len(stage1), "stage1_ids": stage1[:20],
                                    "rules_role_differ": len(role)}
    runs = json.loads(Path(out).read_text()) if Path(out).is_file() else {"comparisons": []}
    runs["comparisons"] = [c for c in runs["comparisons"] if c.get("label") != label] + [result]
    Path(out).write_text(json.dumps(runs, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(result, indent=2))
    return result


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="mode", required=True)
    d = sub.add_parser("dump")
    d.add_argument("--out", required=True)
    c = sub.add_parser("compare")
    c.add_argument("first")
    c.add_argument("second")
    c.add_argument("--label", required=True)
    c.add_argument("--out", default=str(OUT))
    args = ap.parse_args(argv)
    if args.mode == "dump":
        dump(args.out)
    else:
        compare(args.first, args.second, args.label, args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
