"""A ranking re-ordered round-robin over sessions (one turn per session first) and the figures the
session-spread bench reports for it.

Does not cover: reading the cases (``bench.lib.selection``).
"""

from __future__ import annotations

import numpy as np

from bench.lib.selection import COLS, RankCase, order_row, summarize
from bfr_core.method import turn_scores
from bfr_core.method.variants import Variant, combine


def round_robin(order: np.ndarray, session: np.ndarray) -> np.ndarray:
    """``order`` (positions, best first) re-ordered by (rank within its session, position in ``order``)."""
    if not len(order):
        return order
    s = session[order]
    seen: dict[int, int] = {}
    within = np.empty(len(order), dtype=np.int64)
    for j, code in enumerate(s.tolist()):
        within[j] = seen.get(code, 0)
        seen[code] = within[j] + 1
    return order[np.lexsort((np.arange(len(order)), within))]


def figures(cases: list[RankCase], variant: Variant) -> dict[str, dict[str, float]]:
    """Each question's ranking as it is, round-robin over its sessions, and round-robin only where the
    ranking is in the remark regime (``word_trust``): hit and CER at 10 and 40 (``order_row``)."""
    plain, spread, remark = [], [], []
    for c in cases:
        sc = combine(c.parts, variant)
        order = turn_scores.ranking(sc.final)
        rr = order_row(c, round_robin(order, c.parts.core.session))
        plain.append(order_row(c, order))
        spread.append(rr)
        remark.append(rr if sc.regime == "remark" else plain[-1])
    keep = ("hit@10", "cer@10", "hit@40", "cer@40")
    return {name: {f: v for f, v in summarize(np.array(rows).reshape(-1, len(COLS))).items() if f in keep}
            for name, rows in (("as ranked", plain), ("sessions round-robin", spread),
                               ("sessions round-robin in the remark regime only", remark))}
