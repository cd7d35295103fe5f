"""The paired figures of a ranking with and without the model's antecedent, as the associative bench
reports them.

Does not cover: running the model (``bench.quality.bench_associative``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np

from bench.lib.selection import COLS, RankCase, order_row, summarize
from bfr_core.evaluation.stats import mcnemar_by_key
from bfr_core.llm import LLMCallFailed
from bfr_core.method import ours, turn_scores
from bfr_core.roles.antecedent import antecedent

KEEP = ("hit@10", "cer@10", "hit@40", "cer@40")


def compare(llm: Any, cases: Sequence[RankCase], views: Callable[..., Any], text: dict[str, str],
            parts: Iterable[turn_scores.ScoreParts]) -> dict[str, object]:
    """:func:`figures` over the cases the shipped setting ranks in the remark regime (``parts``: each
    case's ``turn_scores.score_parts``, in order), with the counts of what was asked."""
    plain, assoc, failed, said = [], [], 0, 0
    for c, p in zip(cases, parts, strict=True):
        sc = turn_scores.combine(p)
        if sc.regime != "remark":
            continue
        try:
            statement = antecedent(llm, text[c.question_id])
        except LLMCallFailed:
            statement, failed = "", failed + 1
        plain.append(order_row(c, turn_scores.ranking(sc.final)))
        if statement:
            other = np.asarray(views(c.scope_id, text[c.question_id]).dense.scores(statement), dtype=np.float64)
            sc, said = ours.with_antecedent(p, turn_scores.DEFAULT, other), said + 1
        assoc.append(order_row(c, turn_scores.ranking(sc.final)))
    out = figures(np.array(plain).reshape(-1, len(COLS)), np.array(assoc).reshape(-1, len(COLS)))
    out.update({"questions": len(cases), "in the remark regime": len(plain), "with a statement": said,
                "failed calls": failed})
    return out


def _rates(rows: np.ndarray) -> dict[str, float | None]:
    """The KEEP figures in percent; None over no questions (no question in the regime is no 0 %)."""
    if not len(rows):
        return dict.fromkeys(KEEP)
    return {f: v for f, v in summarize(rows).items() if f in KEEP}


def figures(plain: np.ndarray, assoc: np.ndarray) -> dict[str, object]:
    """Both rankings' figures over the same questions and, per k, the paired hit counts and McNemar p."""
    out: dict[str, object] = {"without the step": _rates(plain), "with the antecedent": _rates(assoc)}
    for k in (10, 40):
        j = COLS.index(f"hit@{k}")
        m = mcnemar_by_key(dict(enumerate(assoc[:, j].tolist())), dict(enumerate(plain[:, j].tolist())))
        out[f"hit@{k} paired"] = {"only with the antecedent": m.x_only, "only without": m.y_only,
                                  "mcnemar_p": round(m.p_value, 4)}
    return out
