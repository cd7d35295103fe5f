"""Exploration (2026-12-02): ideas tried on ``bfr``'s ranking and dropped before the selection protocol,
each at the shipped setting in development (on the selection's cached cases; never a held-out figure).

Ranking-only, as ``bench_ours_selection`` scores (``order_row``: hit and CER at 10 and 40), on LoCoMo,
dev50, the LoCoMo-Plus dev half and BEAM 100K. None moved a figure by more than a few questions where
it did not lose more elsewhere, so none went into the protocol's grid:

* ``soft gate``: the words regime's BM25 part ramped by the top BM25 z-score between z0 and z1
  instead of the gate's hard switch at 3;
* ``gate +disagree`` / ``gate +agreement<=0.2`` / ``gate +terms<0.75``: the shipped gate plus a third
  signal (the lexical and dense top 10 share no turn; share at most 0.2; under 3/4 of the question's
  terms found);
* ``term coverage``: xQuAD over the question's words (each word's BM25 share, covered words discounted
  as the top 40 fills), weight lambda;
* ``name bridge``: turns naming someone or something the top 10 names (capitalised words, not the
  question's, not a speaker's) get beta;
* ``remark context``: the neighbour context (0.3 / 0.2) applied to the remark regime's dense score;
* ``list spread``: for questions the offline decomposer gives a "list" requirement, each further turn of
  a session already in the top 40 pays delta.

Writes ``bench/out/explore_dropped.json``. Run (after bench_ours_selection.py cached its cases):
``.venv/bin/python -m bench.archive.explore_dropped``. Not a product benchmark.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import numpy as np

from bench.lib.ours_runs import OUT, Views, questions
from bench.lib.selection import BENCHMARKS, COLS, RankCase, cached_cases, open_all, order_row, summarize
from bfr_core.fusion import zscore
from bfr_core.method import turn_scores as T
from bfr_core.method.requirements import decompose_rules
from bfr_core.method.word_trust import WEAK_Z
from bfr_core.text import words

ROOT = Path(__file__).resolve().parents[2]

TOP = 300  # the ranking's head a re-ranking reorders (the selection scores its first 300 turns)
NAME = re.compile(r"\b[A-Z][a-z]{2,}\b")
Rerank = Callable[[RankCase, T.TurnScores], np.ndarray]  # a case and its shipped scores -> new final scores


def greedy(final: np.ndarray, gain: Callable[[np.ndarray, list[int]], np.ndarray], k: int = 40) -> np.ndarray:
    """Scores that rank the first ``k`` turns picked greedily by ``final[head] + gain(head, picked)``."""
    head = T.ranking(final)[:TOP]
    picked: list[int] = []
    for _ in range(min(k, len(head))):
        g = final[head] + gain(head, picked)
        g[picked] = -np.inf
        picked.append(int(np.argmax(g)))
    out = final.copy()
    out[head[picked]] = final.max() + 1000 - np.arange(len(picked))
    return out


WORDS = replace(T.DEFAULT, remark="off")  # the shipped setting with every question in the words regime


def words_final(c: RankCase) -> np.ndarray:
    """The words regime's scores at the shipped setting, whatever the gate says."""
    return T.combine(c.parts.core, WORDS).final


def dense_only(c: RankCase) -> np.ndarray:
    """The remark regime's scores at shift 1.0: the dense view alone, in the text score's units."""
    return (T.W_BM25 + T.DEFAULT.w_dense) * zscore(c.parts.core.dense)


def soft_gate(z0: float, z1: float) -> Rerank:
    def f(c: RankCase, sc: T.TurnScores) -> np.ndarray:
        t = sc.trust
        a = 0.0 if t.form == "remark" else min(1.0, max(0.0, (t.bm25_top_z - z0) / (z1 - z0)))
        return a * words_final(c) + (1 - a) * dense_only(c)
    return f


def gate(extra: Callable[[object], bool]) -> Rerank:
    def f(c: RankCase, sc: T.TurnScores) -> np.ndarray:
        t = sc.trust
        remark = t.form == "remark" or t.bm25_top_z < WEAK_Z or extra(t)
        return dense_only(c) if remark else words_final(c)
    return f


def term_coverage(lam: float, per_word: dict[str, np.ndarray]) -> Rerank:
    def f(c: RankCase, sc: T.TurnScores) -> np.ndarray:
        m = per_word.get(c.question_id)
        if sc.regime == "remark" or m is None or not m.shape[1]:
            return sc.final
        top = m.max(axis=0)
        p = np.where(top > 0, m / np.maximum(top, 1e-12), 0.0)
        w = top / top.sum() if top.sum() > 0 else np.full(len(top), 1 / len(top))

        def gain(head: np.ndarray, picked: list[int]) -> np.ndarray:
            left = np.prod(1 - p[head[picked]], axis=0) if picked else np.ones(p.shape[1])
            return lam * (p[head] * (w * left)).sum(axis=1)
        return greedy(sc.final, gain)
    return f


def name_bridge(beta: float, names: dict[str, list[frozenset[str]]], asked: dict[str, frozenset[str]]) -> Rerank:
    def f(c: RankCase, sc: T.TurnScores) -> np.ndarray:
        if sc.regime == "remark":
            return sc.final
        per_turn = names[c.scope_id]
        found = frozenset().union(*(per_turn[int(i)] for i in T.ranking(sc.final)[:10])) - asked[c.question_id]
        return sc.final + beta * np.array([bool(n & found) for n in per_turn], dtype=float) if found else sc.final
    return f


def remark_context(near1: float, near2: float) -> Rerank:
    def f(c: RankCase, sc: T.TurnScores) -> np.ndarray:
        if sc.regime != "remark":
            return sc.final
        z = dense_only(c)
        s = c.parts.core.session
        return z + near1 * T.neighbour_max(z, s, 1) + near2 * T.neighbour_max(z, s, 2)
    return f


def list_spread(delta: float, lists: set[str]) -> Rerank:
    def f(c: RankCase, sc: T.TurnScores) -> np.ndarray:
        if sc.regime == "remark" or c.question_id not in lists:
            return sc.final
        s = c.parts.core.session

        def gain(head: np.ndarray, picked: list[int]) -> np.ndarray:
            seen = s[head[picked]]
            return -delta * np.array([(seen == x).sum() for x in s[head]], dtype=float)
        return greedy(sc.final, gain)
    return f


def main() -> None:
    store = open_all(OUT / "cache" / "ours.duckdb", beam=True)
    cases = {d: c for d, c in cached_cases(store, OUT / "cache" / "selection_cases.pkl", reuse=True, beam=True).items()
             if d in BENCHMARKS}
    text = {q.question_id: q.text for d in cases for q in questions(store, d)}
    per_word: dict[str, np.ndarray] = {}
    names: dict[str, list[frozenset[str]]] = {}
    asked = {qid: frozenset(NAME.findall(t)) for qid, t in text.items()}
    for d, cs in cases.items():
        views = Views(store, d)
        for c in cs:
            v = views(c.scope_id)
            if c.scope_id not in names:
                speakers = {t.speaker.split()[0] for t in v.turns if t.speaker}
                names[c.scope_id] = [frozenset(NAME.findall(t.text)) - speakers for t in v.turns]
            bm = T.stemmed_bm25(v)
            head = T.ranking(T.combine(c.parts.core).final)[:TOP]
            cols = [bm.scores(w)[head] for w in dict.fromkeys(words(text[c.question_id])) if bm.query_tokens(w)]
            full = np.zeros((len(v.turns), len(cols)))
            if cols:
                full[head] = np.array(cols).T
            per_word[c.question_id] = full
    store.close()
    lists = {qid for qid, t in text.items() if any(r.kind == "list" for r in decompose_rules(t))}
    variants: dict[str, Rerank] = {
        "shipped": lambda c, sc: sc.final,
        "soft gate 1-4": soft_gate(1, 4), "soft gate 2-4": soft_gate(2, 4),
        "gate +disagree": gate(lambda t: t.agreement == 0.0), "gate +agreement<=0.2": gate(lambda t: t.agreement <= 0.2),
        "gate +terms<0.75": gate(lambda t: t.term_share < 0.75),
        "term coverage 1": term_coverage(1.0, per_word), "term coverage 2": term_coverage(2.0, per_word),
        "name bridge 0.5": name_bridge(0.5, names, asked), "name bridge 1": name_bridge(1.0, names, asked),
        "remark context 0.3/0.2": remark_context(0.3, 0.2),
        "list spread 0.2": list_spread(0.2, lists), "list spread 0.4": list_spread(0.4, lists),
    }
    out: dict[str, object] = {"benchmark": "explore_dropped", "figures": "development (the shipped setting's own "
                              "questions), ranking-only: hit@10 / hit@40 / cer@40"}
    for name, rerank in variants.items():
        res = {}
        for d, cs in cases.items():
            rows = np.array([order_row(c, T.ranking(rerank(c, T.combine(c.parts.core)))) for c in cs])
            q = summarize(rows.reshape(-1, len(COLS)))
            res[d] = [q["hit@10"], q["hit@40"], q["cer@40"]]
        out[name] = res
        print(name, res, file=sys.stderr, flush=True)
    (OUT / "explore_dropped.json").write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {OUT / 'explore_dropped.json'}", file=sys.stderr)


if __name__ == "__main__":
    main()
