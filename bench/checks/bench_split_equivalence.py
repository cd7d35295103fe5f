"""What the one sentence splitter changes against the three it replaced, on every question and turn text.

``bfr_core.sentences.sentences`` is the one splitter: a break at whitespace after ``.``, ``!`` or ``?``,
after a full-width end mark, and at line breaks. Before it, three splitters cut text differently; their
regexes are copied here as references:

* ``form`` / ``clauses`` (a question's form and a remark's clauses: ``word_trust``, ``turn_scores`` and
  the clause texts ingest caches) split at every end mark, "3.5" and "p.m." included;
* the offline decomposer (``llm.rules_requirements``: a long question's last sentence) and ``roles.fit`` (the evidence fitter)
  split at whitespace after an ASCII end mark and at line breaks;
* the offline answerer (``llm.rules``: its evidence units, hence select, answer, span and suff) split
  only where the next sentence opens with a capital or a quote.

For every question of each dataset file found under ``$BFR_DATA`` it counts those whose offline
requirements (``decompose_rules``), form or clauses differ between the reference split and the one
splitter (the arms' offline inputs), and for every distinct turn text those the one splitter cuts
otherwise than the fitter's and the answerer's reference (the outputs that may move: the fitter only
when a model's context is too small, the answerer's on any question, hence a new ``RULES_VERSION``).
Offline, no model, no store. The JSON holds counts and question ids, no benchmark text.

    .venv/bin/python -m bench.checks.bench_split_equivalence [--datasets locomo,locomo_plus_dev]
    # -> bench/out/split_equivalence.json

Does not cover: the arms' rows themselves (``bench_arm_rows.py``), the answers' scores
(``bench_rules_answers.py``).
"""

from __future__ import annotations

import argparse
import json
import re
from collections.abc import Callable
from pathlib import Path

from bench.lib.data_files import benchmark_files
from bfr_core import sentences as one
from bfr_core.ingest import load
from bfr_core.llm import rules_requirements as requirements

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "bench" / "out" / "split_equivalence.json"
# the three splitters the one replaced, as they were
_EVERY_MARK = re.compile(r"[^.!?\u3002\uff01\uff1f\n]+[.!?\u3002\uff01\uff1f]*")
_RUNNING = re.compile(r"(?<=[.!?])\s+|\n+")
_BEFORE_CAPITAL = re.compile(r"(?<=[.!?])\s+(?=[A-Z\"'])|\n+")


def every_mark(text: str) -> list[str]:
    return [s for s in (m.strip() for m in _EVERY_MARK.findall(text)) if s]


def running(text: str) -> list[str]:
    return [s for s in (p.strip() for p in _RUNNING.split(text)) if s]


def before_capital(text: str) -> list[str]:
    return [s.strip() for s in _BEFORE_CAPITAL.split(text) if s and s.strip()]


def datasets(names: set[str] | None) -> dict[str, tuple[list[tuple[str, str]], list[str]]]:
    """((question id, text) pairs, distinct turn texts) per dataset file found under the data folder."""
    out = {}
    for name, (kind, path, options) in benchmark_files().items():
        if names is None or name in names:
            bundle = load(kind, path, **options)
            out[name] = ([(q.question_id, q.text) for q in bundle.questions],
                         list(dict.fromkeys(t.text for t in bundle.turns)))
    return out


def _with(module: object, name: str, fn: Callable, run: Callable[[], list]) -> list:
    """``run()`` with ``module.name`` set to ``fn`` for its duration."""
    kept = getattr(module, name)
    setattr(module, name, fn)
    try:
        return run()
    finally:
        setattr(module, name, kept)


def differing(ids: list[str], old: list, new: list) -> list[str]:
    return [i for i, a, b in zip(ids, old, new, strict=True) if a != b]


def measure(questions: list[tuple[str, str]], turns: list[str]) -> dict:
    ids, texts = [q for q, _ in questions], [t for _, t in questions]

    def decomposed() -> list:
        return [[(r.text, r.kind, r.terms, r.when) for r in requirements.decompose_rules(t)] for t in texts]

    def forms() -> list:
        return [(one.form(t), one.clauses(t)) for t in texts]

    dec = differing(ids, _with(requirements, "sentences", running, decomposed), decomposed())
    old_forms, new_forms = _with(one, "sentences", every_mark, forms), forms()
    form = differing(ids, [f for f, _ in old_forms], [f for f, _ in new_forms])
    clauses = differing(ids, [c for _, c in old_forms], [c for _, c in new_forms])
    new_turns = [one.sentences(t) for t in turns]
    return {"questions": len(ids), "requirements_differ": len(dec), "form_differs": len(form),
            "clauses_differ": len(clauses), "differing_question_ids": sorted(set(dec + form + clauses))[:20],
            "distinct_turn_texts": len(turns),
            "turn_texts_cut_otherwise_than_the_fitter": sum(running(t) != n for t, n in zip(turns, new_turns, strict=True)),
            "turn_texts_cut_otherwise_than_the_answerer": sum(before_capital(t) != n
                                                              for t, n in zip(turns, new_turns, strict=True))}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", help="comma-separated dataset names (default: every file found)")
    args = ap.parse_args(argv)
    names = set(args.datasets.split(",")) if args.datasets else None
    result: dict = {"benchmark": "split_equivalence", "datasets": {}}
    for name, (questions, turns) in datasets(names).items():
        row = measure(questions, turns)
        result["datasets"][name] = row
        print(name, json.dumps(row), flush=True)
    OUT.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
