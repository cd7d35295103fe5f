"""The offline rules judge against itself: every benchmark answer as a prediction for its own question
and for another question's.

Issue 18's target: with the default offline provider, ``rules.judge`` says WRONG on >= 95% of the
answers given for another question (a seeded derangement within the same LoCoMo conversation; every dev50 question has its own haystack,
so there the other answer comes from a question of the same type). Pairs whose two answers normalise
to the same text are not "another answer" and are counted apart (``same_text_pairs``), outside the
WRONG rate. The answer judged against itself is an identity check, not a measured rate (a string
against itself is CORRECT by construction): ``identity_check`` counts the exceptions, which must be
0, and carries no target. The committed JSON holds only counts and rates (no question or answer text).

    .venv/bin/python -m bench.quality.bench_rules_judge          # ~20 s on 2 cores
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Sequence
from pathlib import Path

from bfr_core.ingest.locomo import load_locomo
from bfr_core.ingest.longmemeval import load_longmemeval
from bfr_core.ingest.sources import benchmark_file
from bfr_core.llm import rules, rules_judges
from bfr_core.records import Question

ROOT = Path(__file__).resolve().parents[2]

SOURCES = {"locomo": (load_locomo, benchmark_file("locomo"), "scope_id"),
           "longmemeval_dev50": (load_longmemeval, benchmark_file("longmemeval"), "qtype")}
TARGETS = {"other_wrong_min": 95.0}


def derangement(questions: Sequence[Question], group_by: str, seed: int) -> list[tuple[Question, Question]]:
    """(question, the question whose answer it is given) for every question in a group of two or more:
    each group (sorted by id) is shuffled with ``seed`` and each question takes the next one's answer
    (a cycle, so nobody keeps their own)."""
    groups: dict[str, list[Question]] = defaultdict(list)
    for q in sorted(questions, key=lambda q: q.question_id):
        groups[getattr(q, group_by)].append(q)
    rng = random.Random(seed)
    pairs = []
    for key in sorted(groups):
        members = groups[key]
        if len(members) < 2:
            continue
        rng.shuffle(members)
        pairs += [(members[i], members[(i + 1) % len(members)]) for i in range(len(members))]
    return pairs


def reason_kind(reason: str) -> str:
    """A reason without anything it quotes or dates (so no benchmark text reaches the JSON)."""
    head = re.split(r"\s\(|:", reason, maxsplit=1)[0]
    return re.sub(r"'[^']*'", "'...'", head).rstrip(".") + "."


def rate(counts: Counter[str], label: str, n: int) -> float | None:
    return round(100.0 * counts[label] / n, 2) if n else None


def measure(questions: Sequence[Question], group_by: str, seed: int) -> dict:
    qs = [q for q in questions if q.answer.strip()]
    own = Counter(rules.judge(q.text, q.answer, q.answer)[0] for q in qs)
    other, same = Counter(), 0
    reasons: Counter[str] = Counter()
    for q, donor in derangement(qs, group_by, seed):
        if rules_judges._norm(q.answer) == rules_judges._norm(donor.answer):
            same += 1
            continue
        label, reason = rules.judge(q.text, q.answer, donor.answer)
        other[label] += 1
        reasons[f"{label}: {reason_kind(reason)}"] += 1
    n_own, n_other = sum(own.values()), sum(other.values())
    return {
        "n_answers": n_own,
        "identity_check": {"n": n_own, "not_correct": n_own - own["CORRECT"],
                           "note": "each answer judged against itself; CORRECT by construction, so a check, not a rate"},
        "other": {"n": n_other, "grouped_by": group_by, "same_text_pairs": same,
                  "counts": dict(sorted(other.items())), "wrong_pct": rate(other, "WRONG", n_other),
                  "undecided_pct": rate(other, rules_judges.UNDECIDED, n_other),
                  "correct_pct": rate(other, "CORRECT", n_other),
                  # the rules' fixed reason sentences (no benchmark text), most frequent first
                  "by_reason": dict(reasons.most_common())},
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--out", default=str(ROOT / "bench" / "out" / "rules_judge.json"))
    args = ap.parse_args(argv)
    out: dict = {"judge": f"rules.judge ({rules.NAME}, model {rules.RulesLLM.model})", "seed": args.seed,
                 "targets": TARGETS, "datasets": {}}
    start = time.perf_counter()
    for name, (load, path, group_by) in SOURCES.items():
        if not path.exists():
            print(f"skip {name}: {path} missing", file=sys.stderr)
            continue
        out["datasets"][name] = measure(load(path).questions, group_by, args.seed)
    ds = list(out["datasets"].values())
    other = Counter()
    for d in ds:
        other.update(d["other"]["counts"])
    n_own, n_other = sum(d["identity_check"]["n"] for d in ds), sum(other.values())
    out["all"] = {"identity_check_not_correct": sum(d["identity_check"]["not_correct"] for d in ds),
                  "other_wrong_pct": rate(other, "WRONG", n_other),
                  "other_undecided_pct": rate(other, rules_judges.UNDECIDED, n_other),
                  "other_correct_pct": rate(other, "CORRECT", n_other), "n_own": n_own, "n_other": n_other}
    out["met"] = {name: {"other_wrong": d["other"]["wrong_pct"] >= TARGETS["other_wrong_min"]}
                  for name, d in out["datasets"].items()}
    out["met"]["all"] = {"other_wrong": out["all"]["other_wrong_pct"] >= TARGETS["other_wrong_min"]}
    out["wall_s"] = round(time.perf_counter() - start, 1)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(out, indent=2) + "\n")
    print(json.dumps(out["all"], indent=2), json.dumps(out["met"]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
