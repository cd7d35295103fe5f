"""BEAM: every arm and four reference rankings at 10 and 40 turns; Turn Hit and recall_all per ability
and per tier; the scoreable-question count per ability; warm p50 per question and arm.

One tier per call (``--tier 100K|500K|1M``; ``--path`` overrides the folder, e.g. one conversation).
Each conversation is ingested into ``--db`` (default ``bench/out/cache/byo_beam_<tier>.duckdb``) as its
own dataset ``<name>-<n>`` when missing (a store that already holds the whole tier as ``<name>`` is
used as it is), as ``bfr ingest beam FOLDER`` does by default (vectors at ingest, NER left to the
entity view, which parses only the turns a cue could match, when first searched). Only scoreable
questions (gold message ids in ``source_chat_ids``) are run; the counts per ability of all and of
scoreable questions are reported.

Resumable in chunks: each finished conversation's rows are appended to
``bench/out/cache/beam_rows_<name>.jsonl`` (with the settings and the code they were run with, the
latter as ``byo_common.code_fingerprint``, its ingest and eval seconds and the machine's load; rows of
other settings or code are refused); a rerun skips the conversations done, ``--max-scopes N`` stops
after N new ones, and the JSON (``--out``, default ``bench/out/beam_<tier>.json``) is rewritten after
every conversation from all rows so far (``conversations_done`` of ``conversations``).

    .venv/bin/python -m bench.quality.bench_beam --tier 100K
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from dataclasses import asdict
from pathlib import Path
from typing import Any

from bench.lib import git_commit  # the code this bench measured
from bench.lib.byo_common import PAIRED, all_arms, code_fingerprint, machine, paired, run_rows, summary
from bfr_core.ingest import ingest
from bfr_core.ingest.beam import conversation_dirs, load_beam
from bfr_core.ingest.sources import data_dir
from bfr_core.method import turn_scores
from bfr_core.store import Store

ROOT = Path(__file__).resolve().parents[2]


def _done(rows_file: Path, settings: dict[str, Any]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The rows and per-conversation records already written with these settings (others are refused)."""
    rows: list[dict[str, Any]] = []
    chunks: list[dict[str, Any]] = []
    if not rows_file.exists():
        return rows, chunks
    for line in rows_file.read_text(encoding="utf-8").splitlines():
        rec = json.loads(line)
        if rec["settings"] != settings:
            raise SystemExit(f"{rows_file}: rows of other settings or code ({rec['settings']}); move the file or "
                             "match them")
        chunks.append({k: v for k, v in rec.items() if k not in ("rows", "settings")})  # as a fresh chunk records it
        rows.extend(rec["rows"])
    return rows, chunks


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tier", default="100K", choices=["100K", "500K", "1M"])
    ap.add_argument("--path", default=None, help="default: ../shared/data/beam/<tier>")
    ap.add_argument("--name", default=None, help="dataset name (default beam-<tier>)")
    ap.add_argument("--db", default=None, help="default bench/out/cache/byo_beam_<tier>.duckdb")
    ap.add_argument("--arms", default=",".join(all_arms()))
    ap.add_argument("--ks", default="10,40")
    ap.add_argument("--max-scopes", type=int, default=None, help="stop after N more conversations")
    ap.add_argument("--cached-ner-only", action="store_true",
                    help="entity view: cached NER spans only, parse nothing (see byo_common)")
    ap.add_argument("--out", default=None, help="default bench/out/beam_<tier>.json")
    args = ap.parse_args()
    path = args.path or str(data_dir() / "beam" / args.tier)
    name = args.name or f"beam-{args.tier.lower()}"
    out_file = Path(args.out or ROOT / "bench" / "out" / f"beam_{args.tier.lower()}.json")
    rows_file = ROOT / "bench" / "out" / "cache" / f"beam_rows_{name}.jsonl"
    rows_file.parent.mkdir(parents=True, exist_ok=True)
    arms, ks = args.arms.split(","), [int(k) for k in args.ks.split(",")]
    # bfr's shipped setting and the code too: rows cached under others are refused, not mixed in
    settings = {"arms": arms, "ks": ks, "cached_ner_only": args.cached_ner_only, "source": path,
                "bfr": asdict(turn_scores.DEFAULT), "code": code_fingerprint()}
    store = Store(args.db or ROOT / "bench" / "out" / "cache" / f"byo_beam_{args.tier.lower()}.duckdb")
    whole = store.dataset(name) is not None  # the tier ingested as one dataset (an earlier layout)
    folders = dict(conversation_dirs(path))
    every = store.questions(name) if whole else \
        [q for f in folders.values() for q in load_beam(f, dataset_id="count").questions]  # for the counts only
    scopes = list(folders)
    tier_ingest = rows_file.with_name(rows_file.name + ".ingest.json")  # the whole tier's ingest, when so ingested
    tier_ingest_rec = json.loads(tier_ingest.read_text(encoding="utf-8")) if whole and tier_ingest.exists() else None
    rows, chunks = _done(rows_file, settings)
    done = {c["scope_id"] for c in chunks}
    todo = [s for s in scopes if s not in done][: args.max_scopes]
    log = lambda m: print(m, flush=True)  # noqa: E731
    commit = git_commit.commit()  # the code this process loaded (HEAD at its start)

    def write() -> None:
        finished = {c["scope_id"] for c in chunks}
        qs = [q for q in every if q.scoreable and q.scope_id in finished]
        out = {
            "command": "bench/quality/bench_beam.py " + " ".join(sys.argv[1:]), "dataset": name, "source": path,
            "conversations": len(scopes), "conversations_done": len(finished),
            "cached_ner_only": args.cached_ner_only, "bfr_setting": settings["bfr"], "ingest_s": round(sum(c.get("ingest_s") or 0 for c in chunks), 1),
            "ingest_whole_tier": tier_ingest_rec,
            "questions_run": len(qs), "eval_s": round(sum(c["eval_s"] for c in chunks), 1),
            "questions_by_ability": dict(sorted(Counter(q.qtype for q in every).items())),
            "scoreable_by_ability": dict(sorted(Counter(q.qtype for q in every if q.scoreable).items())),
            "chunks": chunks,
            "systems": summary(rows, ["ability", "tier"]),
            PAIRED: paired(rows),
        }
        out_file.write_text(json.dumps(out, indent=1), encoding="utf-8")

    for scope_id in todo:
        load = machine()
        dataset, took = name, None
        if not whole:
            dataset = f"{name}-{scope_id.split('/')[1]}"
            if store.dataset(dataset) is None:
                t0 = time.perf_counter()
                ingest(store, "beam", folders[scope_id], name=dataset)
                took = round(time.perf_counter() - t0, 1)
        qs = [q for q in store.questions(dataset) if q.scoreable and q.scope_id == scope_id]
        t0 = time.perf_counter()
        new = run_rows(store, dataset, qs, arms, ks, lambda q: {"ability": q.qtype, "tier": q.scope_id.split("/")[0]},
                       log=log, cached_ner_only=args.cached_ner_only)
        chunk = {"scope_id": scope_id, "dataset": dataset, "questions": len(qs), "ingest_s": took,
                 "eval_s": round(time.perf_counter() - t0, 1), "machine_before": load, "machine_after": machine(),
                 "commit": commit}
        with rows_file.open("a", encoding="utf-8") as fh:
            fh.write(json.dumps({**chunk, "settings": settings, "rows": new}) + "\n")
        chunks.append(chunk)
        rows.extend(new)
        write()
        log(f"{scope_id}: ingest {took} s, {len(qs)} questions in {chunk['eval_s']} s; {len(chunks)}/{len(scopes)} done")
    write()
    store.close()
    print(f"wrote {out_file}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
