"""LoCoMo with its speakers labelled "Speaker 1" / "Speaker 2": is a speaker named by its label found
as one named by its first name?

Chat exports and crowd-sourced chats often label speakers by role and number rather than by name.
This bench writes a copy of ``locomo10.json`` to a temporary folder (never into the repository) in
which each conversation's ``speaker_a`` and ``speaker_b`` become "Speaker 1" and "Speaker 2" and each
speaker's first name, as a whole word, becomes that label everywhere it is written (turns, captions,
questions, answers; nicknames such as "Mel" stay), ingests it beside the original into a temporary
store, and runs on both, through the real pipeline: ``bfr`` at 10 and 40 turns (``bench_ours.SIZE_PLAN``),
``bfr-mv`` at C6 and ``mragent-flat`` (both read FirstPerson(q)). Same questions, same gold; only the
names differ. A third copy keeps the names and types every question in lower case, as people type
into a search box. Development figures: ``bfr``'s setting was chosen on LoCoMo's questions.

Writes ``bench/out/speaker_labels.json``: one run per commit (a rerun replaces its commit's run), each
with, per copy, the questions that name exactly one speaker (``turn_scores.named_speakers``: what the
speaker prior reads) and Gold Hit / CER per arm and size. Run it at two commits to compare (at the
older one from a worktree, with this file copied into its ``bench/`` and ``--out`` pointing here).

    .venv/bin/python -m bench.quality.bench_speaker_labels [--out bench/out/speaker_labels.json]

Does not cover: more than two speakers, labels that are not numbered ("A" / "B" work the same way).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

from bench.lib import git_commit  # the code this bench measured
from bench.lib.ours_runs import SIZE_PLAN, Views, arm_runner, questions, score
from bench.lib.speaker_labels import LABELS, lowercase_questions, relabel
from bfr_core.ingest import ingest
from bfr_core.ingest.sources import benchmark_file
from bfr_core.method import turn_scores
from bfr_core.store import Store

ROOT = Path(__file__).resolve().parents[2]

SIZES = (10, 40)
OTHER_ARMS = {"bfr-mv": "C6", "mragent-flat": None}


def one_speaker_named(views: Views, qs: list) -> int:
    """Questions that name exactly one of their scope's speakers (the speaker prior fires on them)."""
    return sum(len(turn_scores.named_speakers(q.text, views(q.scope_id).scope.speakers)) == 1 for q in qs)


def run(store: Store, dataset: str) -> dict:
    views = Views(store, dataset)
    qs = questions(store, dataset)
    out: dict = {"questions": len(qs), "one_speaker_named": one_speaker_named(views, qs)}
    for size in SIZES:
        ground, budget = SIZE_PLAN[size]
        r = score(qs, arm_runner(views, dataset, "bfr", budget, ground=ground))
        out[f"bfr@{size}"] = {m: r[m] for m in ("gold_hit", "cer", "set_size")}
    for arm, budget in OTHER_ARMS.items():
        r = score(qs, arm_runner(views, dataset, arm, budget))
        out[arm] = {m: r[m] for m in ("gold_hit", "cer", "set_size")}
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=str(ROOT / "bench" / "out" / "speaker_labels.json"))
    args = ap.parse_args()
    t0 = time.time()
    src = benchmark_file("locomo")
    result: dict = {"commit": git_commit.commit(),
                    "speakers_relabelled_as": list(LABELS), "development": "bfr's setting was chosen on LoCoMo's questions"}
    with tempfile.TemporaryDirectory() as tmp:
        samples = json.loads(src.read_text(encoding="utf-8"))
        copies = {"names": src}
        for name, change in (("labels", relabel), ("lowercase", lowercase_questions)):
            copies[name] = Path(tmp) / f"locomo_{len(copies)}.json"
            copies[name].write_text(json.dumps([change(s) for s in samples]), encoding="utf-8")
        store = Store(str(Path(tmp) / "store.duckdb"))
        for name, path in copies.items():
            ingest(store, "locomo", path, name=name, entities=False)
            result[name] = run(store, name)
            print(name, json.dumps(result[name]), file=sys.stderr, flush=True)
        store.close()
    result["elapsed_s"] = round(time.time() - t0, 1)
    out = Path(args.out)
    runs = json.loads(out.read_text(encoding="utf-8"))["runs"] if out.is_file() else []
    runs = [r for r in runs if r.get("commit") != result["commit"]] + [result]  # one run per commit
    out.write_text(json.dumps({"benchmark": "speaker_labels", "runs": runs}, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {out} in {result['elapsed_s']} s", file=sys.stderr)


if __name__ == "__main__":
    main()
