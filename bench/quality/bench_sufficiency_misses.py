"""Why ``conv-fusion`` (``bfr`` is its alias; a dump stores it as ``bfr``) returns relevant but insufficient sets
at 10 turns: the anatomy of its all-gold misses, with ``bfr-mv`` beside it, on one benchmark per run.

Over the scoreable questions with at least two gold turns, from a ``bench.checks.bench_arm_rows dump`` of the
store's code (each arm's evidence in the order it built it, up to 40 turns), at k = 10: any gold, all gold and
relevant but insufficient (any, not all); for every gold turn an insufficient set misses, its rank band in the
arm's 40 turns, whether it shares a session with a found gold turn, lies within one or two positions of one,
or sits in a session none of the first 10 turns come from; the first 10 turns' concentration on the found
gold's sessions; and two oracle swaps that read gold (upper bounds, not methods): every missing gold turn
ranked 11-40 put in over the lowest-ranked non-gold turn, and only the missing gold turns next to a found gold
turn put in. The anatomy itself is ``bench.lib.sufficiency_misses``. Over every question with gold, two
re-selections of ``conv-fusion``'s 40 that read no gold: a session cap, and places given to later turns that
bring a question word the first 10 lack (with how often gold and other turns bring one).

A development diagnostic: it reads gold, as a bench may; no method reads these figures. The store is opened
read-only. Writes one benchmark's entry (by ``--key``) into ``bench/out/sufficiency_misses.json``.

Run (one benchmark per run): ``nice -n 10 .venv/bin/python -m bench.quality.bench_sufficiency_misses --db STORE
--dataset locomo --dump DUMP.json --key locomo``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from bench.lib.git_commit import commit
from bench.lib.ours_runs import OUT, ROOT
from bench.lib.sufficiency_misses import anatomy, brings, session_cap, summarize, uncovered, word_swap
from bfr_core.arm_names import CONV_FUSION, canonical_arm
from bfr_core.evaluation.metrics import complete_evidence_recall, turn_hit
from bfr_core.records import Turn
from bfr_core.store import Store

K, HEAD, MIN_GOLD = 10, 40, 2
CAPS = (1, 2, 3, 4)  # turns a session may hold in the session-cap re-selection
SWAPS = (1, 2, 3)  # places of the first K the question-word swap may give to later turns
ARMS = ("bfr", "bfr-mv")  # as a dump names them
LABEL = "development diagnostic (reads gold); oracles are upper bounds, not methods"
FIGURES = {
    "any / all": "% of the questions with a gold turn / every gold turn among the arm's first 10 turns",
    "insufficient": "any but not all; pct of the questions, pct_of_any of the questions with any gold",
    "missing": "gold turns absent from the first 10 of an insufficient set (pct of those turns): rank band in the "
               "arm's order (11-20, 21-40, not among its 40); same_session: in the session of a gold turn found in "
               "the first 10; within_1 / within_2: at most 1 / 2 positions from a found gold turn in its session "
               "(within_2 includes within_1); unseen_session: in a session none of the first 10 turns come from; "
               "unplaced: not found in the store",
    "first_k_of_insufficient": "the first 10 turns of the insufficient sets: how many come from the found gold "
                               "turns' sessions, their distinct sessions against the gold's distinct sessions",
    "oracle_head": "oracle, not a method: all gold at 10 when every missing gold turn the arm ranked 11-40 takes "
                   "the place of the lowest-ranked non-gold turn (the ceiling of re-selecting within the 40)",
    "oracle_adjacent": "oracle, not a method: all gold at 10 when only missing gold turns within one position of "
                       "a found gold turn in its session (wherever the arm ranked them) are swapped in that way",
    "session_cap": "conv-fusion over every question with gold: any / all gold among its first 10 turns, and among the "
                   "10 a session cap picks from its 40 (at most c turns a session, the rest in rank order; reads no "
                   "gold): whether session diversity alone closes the gap",
    "question_words": "conv-fusion over every question with gold: of its turns ranked 11-40 on questions whose first 10 "
                      "miss a gold turn, the share of gold and of other turns that bring a question word (stemmed, stop "
                      "words out) none of the first 10 holds; and any / all gold at 10 when 1, 2 or 3 of the 10 places go, "
                      "in rank order, to later turns that bring such a word (reads no gold)",
}


def scope_turns(store: Store, dataset: str, scope_id: str, cache: dict) -> dict[str, Turn]:
    """Turn id -> turn for the scope's turns, read once per scope."""
    if scope_id not in cache:
        cache[scope_id] = {t.turn_id: t for t in store.scope_turns(dataset, scope_id)}
    return cache[scope_id]


def placements(store: Store, dataset: str, scope_id: str, ids: list[str], cache: dict) -> dict[str, tuple[str, int]]:
    """Turn id -> (session id, position in the session) for ``ids``: the scope's turns (:func:`scope_turns`),
    and any id outside them looked up by id."""
    turns = scope_turns(store, dataset, scope_id, cache)
    rest = [t for t in ids if t not in turns]
    if rest:
        turns = {**turns, **store.turns_by_id(dataset, rest)}
    return {i: (t.session_id, t.idx) for i, t in turns.items()}


def any_all(pairs: list[tuple[list[str], frozenset[str]]]) -> dict[str, float]:
    """Any gold and all gold, percent of the (set, gold) pairs (``metrics.turn_hit`` and
    ``metrics.complete_evidence_recall``)."""
    n = len(pairs)
    if not n:
        return {"any_pct": 0.0, "all_pct": 0.0}
    return {"any_pct": round(100 * sum(bool(turn_hit(s, g)) for s, g in pairs) / n, 2),
            "all_pct": round(100 * sum(bool(complete_evidence_recall(s, g)) for s, g in pairs) / n, 2)}


def session_caps(rows: dict, store: Store, dataset: str, qs: list, cache: dict) -> dict:
    """``conv-fusion``'s any / all gold at :data:`K` over every question with gold: its first K turns, and
    :func:`session_cap` over its first :data:`HEAD` at each cap of :data:`CAPS`."""
    sets: dict[str, list[tuple[list[str], frozenset[str]]]] = {"first_k": [], **{f"cap_{c}": [] for c in CAPS}}
    for q in qs:
        ranked = rows[f"bfr:{q.question_id}"][0][:HEAD]
        where = placements(store, dataset, q.scope_id, ranked, cache)
        gold = frozenset(q.gold)
        sets["first_k"].append((ranked[:K], gold))
        for c in CAPS:
            sets[f"cap_{c}"].append((session_cap(ranked, where, c, K), gold))
    return {"questions": len(qs), **{name: any_all(pairs) for name, pairs in sets.items()}}


def word_coverage(rows: dict, store: Store, dataset: str, qs: list, cache: dict) -> dict:
    """``conv-fusion`` over every question with gold: how well "brings a question word the first K lack" tells
    its gold turns ranked K+1..HEAD from the non-gold ones there (on the questions whose first K miss a gold
    turn), and any / all gold at K when :func:`word_swap` gives 1, 2 or 3 places to such turns."""
    signal = {"gold": [0, 0], "other": [0, 0]}  # [turns bringing a missing question word, turns]
    sets: dict[str, list[tuple[list[str], frozenset[str]]]] = {f"swap_{m}": [] for m in SWAPS}
    for q in qs:
        ranked = rows[f"bfr:{q.question_id}"][0][:HEAD]
        texts = {i: t.text for i, t in scope_turns(store, dataset, q.scope_id, cache).items()}
        gold = frozenset(q.gold)
        for m in SWAPS:
            sets[f"swap_{m}"].append((word_swap(ranked, texts, q.text, m, K), gold))
        if gold <= set(ranked[:K]):
            continue
        missing = uncovered(q.text, [texts.get(t, "") for t in ranked[:K]])
        for t in ranked[K:]:
            side = signal["gold" if t in gold else "other"]
            side[0] += brings(texts.get(t, ""), missing)
            side[1] += 1
    share = {name: round(100 * a / b, 2) if b else 0.0 for name, (a, b) in signal.items()}
    return {"turns_ranked_11_40_gold": signal["gold"][1], "turns_ranked_11_40_other": signal["other"][1],
            "gold_bringing_pct": share["gold"], "other_bringing_pct": share["other"],
            **{name: any_all(pairs) for name, pairs in sets.items()}}


def measure(db: str, dataset: str, dump: str) -> dict:
    """Both arms' :func:`summarize` figures on one benchmark, with the questions counted by gold size."""
    rows = json.loads(Path(dump).read_text(encoding="utf-8"))
    store = Store(db, read_only=True)
    try:
        qs = store.questions(dataset, scoreable_only=True)
        multi = [q for q in qs if len(set(q.gold)) >= MIN_GOLD]
        cache: dict = {}
        arms: dict[str, dict] = {}
        for arm in ARMS:
            records = []
            for q in multi:
                ranked = rows[f"{arm}:{q.question_id}"][0]
                where = placements(store, dataset, q.scope_id, [*ranked[:HEAD], *q.gold], cache)
                records.append(anatomy(ranked, q.gold, where, K, HEAD))
            arms[canonical_arm(arm)] = summarize(records)
        caps = session_caps(rows, store, dataset, [q for q in qs if q.gold], cache)
        words = word_coverage(rows, store, dataset, [q for q in qs if q.gold], cache)
    finally:
        store.close()
    return {"dataset": dataset, "store": db, "dump": dump, "scoreable": len(qs),
            "scoreable_with_gold": sum(1 for q in qs if q.gold), "questions_2plus_gold": len(multi), "arms": arms,
            "session_cap": caps, "question_words": words}


def reading(entry: dict) -> str:
    """One or two sentences saying what the figures show for ``conv-fusion``."""
    a = entry["arms"][CONV_FUSION]
    m = a["missing"]
    head = 100 * (m["rank_11_20"]["count"] + m["rank_21_40"]["count"]) / max(m["missing_gold_turns"], 1)
    f = a["first_k_of_insufficient"]
    return (f"{CONV_FUSION} finds a gold turn in {a['any']['pct']}% of the {a['questions']} multi-gold questions but "
            f"all of them in {a['all']['pct']}%; of the gold turns its insufficient sets miss, {round(head, 2)}% sit "
            f"in its own turns 11-40 and {m['not_in_40']['pct']}% are not among its 40, {m['same_session']['pct']}% "
            f"share a session with a found gold turn ({m['within_1']['pct']}% within one position) and "
            f"{m['unseen_session']['pct']}% lie in a session its first 10 never reach (those 10 span "
            f"{f['mean_distinct_sessions']} sessions on average, {f['mean_from_found_sessions']} of the turns from the "
            f"found gold's sessions, against {f['mean_gold_sessions']} gold sessions). Swapping in from its own 40 "
            f"would lift all gold to at most {a['oracle_head']['pct']}%, adding found turns' neighbours to at "
            f"most {a['oracle_adjacent']['pct']}% (oracles, not methods).")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--db", required=True, help="the store the dump was made from (opened read-only)")
    ap.add_argument("--dataset", required=True, help="the dataset id in the store")
    ap.add_argument("--dump", required=True, help="a bench.checks.bench_arm_rows dump of this store")
    ap.add_argument("--key", default="", help="the benchmark's key in the JSON (default: --dataset)")
    ap.add_argument("--out", default=str(OUT / "sufficiency_misses.json"))
    args = ap.parse_args()
    key = args.key or args.dataset
    code = commit(ROOT)
    entry = measure(args.db, args.dataset, args.dump)
    entry["reading"] = reading(entry)
    entry["commit"] = code
    path = Path(args.out)
    result = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    result.update({"benchmark": "sufficiency_misses", "label": LABEL, "commit": code, "k": K, "head": HEAD,
                   "min_gold": MIN_GOLD, "arms": [canonical_arm(a) for a in ARMS], "figures": FIGURES})
    result.setdefault("benchmarks", {})[key] = entry
    path.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    print(json.dumps({key: entry}, indent=1))
    print(f"wrote {key} into {path}", file=sys.stderr)


if __name__ == "__main__":
    main()
