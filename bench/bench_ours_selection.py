"""How ``bfr``'s weights are chosen: leave-one-benchmark-out and conversation-level cross-validation.

Ranking-only and fast: each question's score parts (``turn_scores.score_parts``) are computed once,
then every grid setting re-weights them (``turn_scores.combine``) and is scored by the top-k of the
ranking alone (no Stage I cover; the shipped arm's pipeline figures are in ``ours.json``).

The objective on a benchmark is the mean of hit@10, hit@40, CER@40 and session recall_any@5; on
LongMemEval dev50 the session recall is LongMemEval's official convention (user turns only,
abstention skipped, as ``bfr eval --official-corpus``), on LoCoMo it ranks all turns.

Writes ``bench/out/ours_selection.json``:

* ``tune on A, report B`` (both directions): the grid's best on one benchmark, scored on the other.
  A knob one benchmark cannot see (the role prior never fires on LoCoMo's symmetric chats) ties
  there, and ties go to the earlier grid value, i.e. the knob off.
* ``cross_validation``: the conversations of both benchmarks (LoCoMo's 10 chats, dev50's 50
  haystacks) in ``FOLDS`` folds, each fold holding conversations of both. For each fold the setting
  with the best mean of the two benchmarks' objectives on the other folds is scored on the held-out
  fold; the held-out rows pooled give the cross-validated figures. ``chosen on all folds`` is the same
  rule over every conversation: the setting ``turn_scores.DEFAULT`` ships (its figures there are
  development figures; the cross-validated ones are what to expect of data nobody tuned on).
* ``fragile questions``: the dev50 questions whose official session recall_any@5 some settings miss,
  with how many settings miss each, among the settings without and with an advice-request weight.
* ``shipped default``: ``turn_scores.DEFAULT``'s row; ``rows``: every setting on both benchmarks, as a
  table (``columns``: the knobs, then ``benchmark.figure``; ``values``: one list per setting, grid order).

Run: ``.venv/bin/python bench/bench_ours_selection.py [--db bench/out/cache/ours.duckdb]`` (~15 min).
Does not cover: the 449 held-back LongMemEval-S questions (scored independently of this repository).
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import numpy as np
from bench_ours import OUT, Views, open_store, questions

from bfr_core.evaluation.metrics import strip_turn_id
from bfr_core.evaluation.stats import wilson_interval
from bfr_core.method import turn_scores
from bfr_core.store import Store

# The knobs issue 16 added (plus the context weights), each a few values; every other setting as
# turn_scores.DEFAULT. "near" sets (near1, near2) together. doc_bm25 / doc_dense: the session-document
# score, doc_view the vectors of its topic; session_top: how many of a session's best turns make its relevance;
# request_topic: the topic's weight on advice requests (None: doc_dense, as on any question).
GRID: dict[str, tuple] = {
    "dense_view": (False, True),
    "session": (0.0, 0.5, 1.0),
    "session_top": (1, 2, 3),
    "role": (0.0, 0.5),
    "near": ((0.6, 0.4),),
    "recency": (0.0, 0.3),
    "doc_bm25": (0.0, 0.5),
    "doc_dense": (0.0, 0.5, 0.75, 1.0),
    "doc_view": ("static", "short"),
    "request_topic": (None, 1.5, 2.0, 3.0, 4.0, 6.0),
}
RANK_KS = (10, 40)
SESSION_K = 5
FOLDS = 5
BENCHMARKS = ("locomo", "longmemeval")
# score_parts computes the session-document parts only when their weights are set: on, for the grid.
PARTS_SETTINGS = replace(turn_scores.DEFAULT, doc_bm25=1.0, doc_dense=1.0)
# Columns of a per-question row (0/1 each); "gold" marks questions with gold turns (CER and session
# recall are over those; hit is over every question, unannotated ones counting as misses).
COLS = ("gold", *(f"hit@{k}" for k in RANK_KS), *(f"cer@{k}" for k in RANK_KS), "srec")


def grid_settings() -> list[tuple[dict, turn_scores.OursSettings]]:
    out = []
    for combo in itertools.product(*GRID.values()):
        knobs = dict(zip(GRID, combo, strict=True))
        near1, near2 = knobs["near"]
        st = replace(turn_scores.DEFAULT, **{k: v for k, v in knobs.items() if k != "near"}, near1=near1, near2=near2)
        out.append((knobs, st))
    return out


@dataclass(frozen=True)
class RankCase:
    """One question's ranking inputs: its id and scope, gold, the corpus's turn and session ids, the parts."""

    question_id: str
    scope_id: str
    gold: frozenset[str]
    ids: tuple[str, ...]
    sessions: tuple[str, ...]
    parts: turn_scores.ScoreParts


def rank_cases(store: Store, dataset: str, official: bool = False, doc_view: str = "static") -> list[RankCase]:
    """Every scoreable question over its whole scope, or (``official``) LongMemEval's user-turn corpus
    without the abstention questions, as ``bfr eval --official-corpus`` scores it; the session topic
    read from ``doc_view``'s vectors."""
    parts_settings = replace(PARTS_SETTINGS, doc_view=doc_view)
    from bfr_core.evaluation.official import user_views

    views = Views(store, dataset)
    users: dict[str, object] = {}
    out = []
    for q in questions(store, dataset):
        v = views(q.scope_id, q.text)
        if official:
            if q.is_abstention or q.question_id.endswith("_abs"):
                continue
            v = users.setdefault(q.scope_id, user_views(v))
        out.append(RankCase(q.question_id, q.scope_id, frozenset(q.gold), tuple(t.turn_id for t in v.turns),
                            tuple(t.session_id for t in v.turns),
                            turn_scores.score_parts(v, q.query(), parts_settings)))
    return out


def session_recall_any(order: Sequence[int], sessions: Sequence[str], gold_sessions: frozenset[str], k: int) -> bool:
    """LongMemEval's session recall_any@k from a turn ranking: a gold session among its first k distinct sessions."""
    seen: list[str] = []
    for i in order:
        sid = sessions[int(i)]
        if sid not in seen:
            seen.append(sid)
            if sid in gold_sessions:
                return True
            if len(seen) >= k:
                break
    return False


def case_row(c: RankCase, st: turn_scores.OursSettings) -> np.ndarray:
    """One question's 0/1 row over :data:`COLS` under setting ``st``."""
    row = np.zeros(len(COLS), dtype=np.int8)
    if not c.gold:
        return row
    order = turn_scores.ranking(turn_scores.combine(c.parts, st).final)
    row[0] = 1
    for j, k in enumerate(RANK_KS):
        top = {c.ids[int(i)] for i in order[:k]}
        row[1 + j] = bool(top & c.gold)
        row[1 + len(RANK_KS) + j] = c.gold <= top
    # a gold turn outside the corpus (an assistant turn under the official convention): its session by id
    in_corpus = set(c.ids)
    gold_sessions = frozenset(s for t, s in zip(c.ids, c.sessions, strict=True) if t in c.gold)
    gold_sessions |= frozenset(strip_turn_id(g) for g in c.gold if g not in in_corpus)
    row[-1] = session_recall_any(order, c.sessions, gold_sessions, SESSION_K)
    return row


def counts(rows: np.ndarray) -> dict[str, tuple[int, int]]:
    """Each figure as (questions that count, questions it is over) from per-question rows: hit over
    every row, CER and session recall over rows with gold."""
    n, with_gold = len(rows), int(rows[:, 0].sum()) if len(rows) else 0
    out: dict[str, tuple[int, int]] = {}
    for k in RANK_KS:
        out[f"hit@{k}"] = (int(rows[:, COLS.index(f"hit@{k}")].sum()), n)
        out[f"cer@{k}"] = (int(rows[:, COLS.index(f"cer@{k}")].sum()), with_gold)
    out[f"session_recall_any@{SESSION_K}"] = (int(rows[:, -1].sum()), with_gold)
    return out


def summarize(rows: np.ndarray) -> dict[str, float]:
    """:func:`counts` as percentages (0.0 over no questions)."""
    return {f: round(100 * k / over, 2) if over else 0.0 for f, (k, over) in counts(rows).items()}


def intervals(rows: np.ndarray) -> dict[str, list[float]]:
    """95% Wilson intervals (percent) of :func:`counts` (empty over no questions)."""
    return {f: [round(100 * b, 2) for b in wilson_interval(k, over)] if over else []
            for f, (k, over) in counts(rows).items()}


def rank_quality(cases: Sequence[RankCase], st: turn_scores.OursSettings) -> dict[str, float]:
    """Top-k of the ranking alone: hit over all questions, CER and session recall_any@5 over those with gold."""
    return summarize(np.array([case_row(c, st) for c in cases]).reshape(-1, len(COLS)))


def objective(r: dict[str, float]) -> float:
    """What selection maximises on a benchmark: the mean of hit@10, hit@40, CER@40 and session
    recall_any@5 (on LongMemEval: over the official user-turn corpus)."""
    srec = r.get(f"official_session_recall_any@{SESSION_K}", r[f"session_recall_any@{SESSION_K}"])
    return (r["hit@10"] + r["hit@40"] + r["cer@40"] + srec) / 4


@dataclass(frozen=True)
class Scored:
    """Every setting's per-question rows: ``rows[d]`` has shape (settings, questions of d, COLS)."""

    rows: dict[str, np.ndarray]
    scopes: dict[str, tuple[str, ...]]  # per benchmark, each question's scope (conversation)
    official: np.ndarray | None  # (settings, official questions, COLS): dev50 over user turns only
    official_scopes: tuple[str, ...]


def score_grid(cases: dict[str, dict[str, list[RankCase]]], official: dict[str, list[RankCase]],
               settings: Sequence[turn_scores.OursSettings]) -> Scored:
    """Every setting's rows; ``cases`` / ``official`` are keyed by ``doc_view`` (the parts differ by it).

    ``request_topic`` only weighs advice requests, so a setting's other rows are its ``request_topic=None``
    twin's, computed once and shared.
    """
    def table(cs: dict[str, list[RankCase]]) -> np.ndarray:
        n = len(next(iter(cs.values())))
        out = np.zeros((len(settings), n, len(COLS)), dtype=np.int8)
        base_rows: dict[turn_scores.OursSettings, np.ndarray] = {}
        for j, st in enumerate(settings):
            base = replace(st, request_topic=None)
            if base not in base_rows:
                base_rows[base] = np.array([case_row(c, base) for c in cs[st.doc_view]], dtype=np.int8).reshape(
                    n, len(COLS))
            out[j] = base_rows[base]
            if st.request_topic is not None:
                for q, c in enumerate(cs[st.doc_view]):
                    if c.parts.request:
                        out[j, q] = case_row(c, st)
        return out

    first = next(iter(cases.values()))
    benchmarks = {d: {v: cases[v][d] for v in cases} for d in first}
    scopes = {d: tuple(c.scope_id for c in cs) for d, cs in first.items()}
    first_official = next(iter(official.values()), [])
    return Scored({d: table(cs) for d, cs in benchmarks.items()}, scopes, table(official) if first_official else None,
                  tuple(c.scope_id for c in first_official))


def masks(sc: Scored, keep: dict[str, frozenset[str]]) -> dict[str, np.ndarray]:
    """Per benchmark (and ``official``, dev50 over user turns), which questions lie in ``keep``'s conversations."""
    out = {d: np.array([s in keep[d] for s in sc.scopes[d]], dtype=bool) for d in sc.rows}
    if sc.official is not None:
        out["official"] = np.array([s in keep["longmemeval"] for s in sc.official_scopes], dtype=bool)
    return out


def quality(sc: Scored, i: int, mask: dict[str, np.ndarray] | None = None) -> dict[str, dict[str, float]]:
    """Setting ``i``'s figures per benchmark over the questions ``mask`` keeps (all when None; see :func:`masks`)."""
    def pick(rows: np.ndarray, d: str) -> np.ndarray:
        return rows[i] if mask is None else rows[i][mask[d]]

    out = {d: summarize(pick(r, d)) for d, r in sc.rows.items()}
    if sc.official is not None and "longmemeval" in out:
        key = f"official_session_recall_any@{SESSION_K}"
        out["longmemeval"][key] = summarize(pick(sc.official, "official"))[f"session_recall_any@{SESSION_K}"]
    return out


def pooled(q: dict[str, dict[str, float]]) -> float:
    """The cross-validation objective: the mean of the benchmarks' objectives (each benchmark counts once)."""
    return float(np.mean([objective(r) for r in q.values()]))


def folds_of(scopes: Sequence[str], k: int = FOLDS) -> dict[str, int]:
    """Conversation -> fold: sorted ids dealt round-robin (deterministic, no seed needed)."""
    return {s: j % k for j, s in enumerate(sorted(set(scopes)))}


def cross_validation(sc: Scored, knobs: Sequence[dict]) -> dict:
    """Conversation-level k-fold over both benchmarks at once (see the module docstring)."""
    fold = {d: folds_of(s) for d, s in sc.scopes.items()}
    n_settings = next(iter(sc.rows.values())).shape[0]

    def conversations(pred) -> dict[str, frozenset[str]]:
        return {d: frozenset(s for s, f in fold[d].items() if pred(f)) for d in fold}

    def best(mask: dict[str, np.ndarray] | None) -> int:  # masks built once per fold, not once per setting
        return max(range(n_settings), key=lambda i: (round(pooled(quality(sc, i, mask)), 6), -i))

    held: dict[str, list[np.ndarray]] = {d: [] for d in sc.rows}
    held_official: list[np.ndarray] = []
    per_fold = []
    for f in range(FOLDS):
        test = conversations(lambda g, f=f: g == f)
        test_mask = masks(sc, test)
        i = best(masks(sc, conversations(lambda g, f=f: g != f)))
        for d, rows in sc.rows.items():
            held[d].append(rows[i][test_mask[d]])
        if sc.official is not None:
            held_official.append(sc.official[i][test_mask["official"]])
        per_fold.append({"fold": f, "held_out": {d: sorted(v) if d == "locomo" else len(v) for d, v in test.items()},
                         "knobs": _json_knobs(knobs[i]), "held_out_figures": quality(sc, i, test_mask)})
    key = f"session_recall_any@{SESSION_K}"
    cv = {d: summarize(np.concatenate(v)) for d, v in held.items()}
    ci = {d: intervals(np.concatenate(v)) for d, v in held.items()}
    if held_official:
        cv["longmemeval"][f"official_{key}"] = summarize(np.concatenate(held_official))[key]
        ci["longmemeval"][f"official_{key}"] = intervals(np.concatenate(held_official))[key]
    i_all = best(None)
    return {"folds": FOLDS, "objective": "mean over the two benchmarks of each one's objective",
            "assignment": "each benchmark's conversation ids sorted and dealt round-robin",
            "cross-validated (held-out folds pooled)": cv,
            "cross-validated 95% intervals": {
                "method": "Wilson score interval of each pooled count (bfr_core.evaluation.stats.wilson_interval); "
                          "it treats questions as independent, true of dev50 (one haystack each) but not of "
                          "LoCoMo, whose 1,536 questions share 10 conversations: its intervals are too narrow",
                **ci},
            "per_fold": per_fold,
            "chosen on all folds": {"knobs": _json_knobs(knobs[i_all]),
                                    "figures (development: chosen on these questions)": quality(sc, i_all)}}


def fragile(sc: Scored, knobs: Sequence[dict], ids: Sequence[str]) -> dict:
    """Per dev50 question (official corpus) that some setting misses: how many settings miss it,
    among those without (``request_topic`` None) and with an advice-request weight."""
    if sc.official is None:
        return {}
    with_request = np.array([k.get("request_topic") is not None for k in knobs])
    miss = sc.official[:, :, -1] == 0  # (settings, questions)
    out = {}
    for q, qid in enumerate(ids):
        if miss[:, q].any():
            out[qid] = {"missed by (without request weight)": int(miss[~with_request, q].sum()),
                        "missed by (with request weight)": int(miss[with_request, q].sum())}
    return {"settings without / with a request weight": [int((~with_request).sum()), int(with_request.sum())],
            "questions": out}


def _json_knobs(k: dict) -> dict:
    return {a: list(v) if isinstance(v, tuple) else v for a, v in k.items()}


def selection(store: Store) -> dict:
    """Every grid setting scored on both benchmarks; both leave-one-benchmark-out directions; the CV."""
    present = [d for d in BENCHMARKS if store.dataset(d) is not None]
    views = GRID["doc_view"]
    cases = {v: {d: rank_cases(store, d, doc_view=v) for d in present} for v in views}
    official = {v: rank_cases(store, "longmemeval", official=True, doc_view=v) for v in views} if "longmemeval" in present else {}
    grid = grid_settings()
    sc = score_grid(cases, official, [st for _, st in grid])
    rows = [{"knobs": _json_knobs(k), **quality(sc, i)} for i, (k, _) in enumerate(grid)]
    key = f"official_session_recall_any@{SESSION_K}"
    out: dict[str, object] = {
        "grid": {k: [list(x) if isinstance(x, tuple) else x for x in v] for k, v in GRID.items()},
        "n_settings": len(rows),
        "objective": f"mean(hit@10, hit@40, cer@40, session_recall_any@{SESSION_K}), ranking top-k; on longmemeval "
                     f"the session recall is {key} (user turns only, abstention skipped, as bfr eval --official-corpus)",
        "note": "ranking-only top-k (no Stage I cover); the shipped arm's pipeline figures are in ours.json. "
                "Figures on the questions a setting was chosen on are development figures. LoCoMo's "
                "session_recall_any@5 ranks all turns (sessions = its dia-id sessions)."}
    for tune, other in itertools.permutations(BENCHMARKS, 2):
        if tune in present and other in present:
            best = max(range(len(rows)), key=lambda i: (round(objective(rows[i][tune]), 6), -i))
            out[f"tune on {tune}, report {other}"] = {
                "knobs": rows[best]["knobs"], f"{tune} (tuned, development)": rows[best][tune],
                f"{other} (held out)": rows[best][other]}
    if len(present) == len(BENCHMARKS):
        out["cross_validation"] = cross_validation(sc, [k for k, _ in grid])
    if official:
        out["fragile questions"] = fragile(sc, [k for k, _ in grid],
                                           [c.question_id for c in next(iter(official.values()))])
    default = next((r for (_, st), r in zip(grid, rows, strict=True) if st == turn_scores.DEFAULT), None)
    out["shipped default"] = default or {"settings": asdict(turn_scores.DEFAULT), "note": "not a grid point"}
    out["rows"] = row_table(rows)
    return out


def row_table(rows: Sequence[dict]) -> dict:
    """Rows of :func:`selection` (knobs, then one dict of figures per benchmark) as columns and value lists."""
    if not rows:
        return {"columns": [], "values": []}
    knobs = list(rows[0]["knobs"])
    figures = [(d, f) for d, fs in rows[0].items() if d != "knobs" for f in fs]
    return {"columns": knobs + [f"{d}.{f}" for d, f in figures],
            "values": [[r["knobs"][k] for k in knobs] + [r[d][f] for d, f in figures] for r in rows]}


def dump(sel: dict) -> str:
    """The JSON, indented, except the rows' values (thousands of settings): one compact line per setting."""
    if "rows" not in sel:
        return json.dumps(sel, indent=1) + "\n"
    table = sel["rows"]
    head = json.dumps({**{k: v for k, v in sel.items() if k != "rows"}, "rows": {"columns": table["columns"]}},
                      indent=1)
    values = ",\n".join("   " + json.dumps(v, separators=(",", ":")) for v in table["values"])
    return head[:-4] + ',\n  "values": [\n' + values + "\n  ]\n }\n}\n"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--db", default=str(OUT / "cache" / "ours.duckdb"))
    args = ap.parse_args()
    t0 = time.time()
    sel = {"benchmark": "ours_selection", **selection(open_store(Path(args.db)))}
    sel["elapsed_s"] = round(time.time() - t0, 1)
    (OUT / "ours_selection.json").write_text(dump(sel), encoding="utf-8")
    print(f"wrote {OUT / 'ours_selection.json'} in {sel['elapsed_s']} s", file=sys.stderr)


if __name__ == "__main__":
    main()
