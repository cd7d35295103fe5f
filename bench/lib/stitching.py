"""LoCoMo-Plus stitched two ways, compared: the change between the stitchings' figures and the probe
ranking's rows.

Does not cover: running the arms (``bench.quality.bench_plus_stitching``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from bench.lib.byo_common import result_row
from bfr_core.fusion import zscore
from bfr_core.method.turn_scores import ranking
from bfr_core.method.variants import session_topic
from bfr_core.records import Question
from bfr_core.retrieval.scope import scope_views
from bfr_core.store import Store

PROBE = "ref:dense+session-topic"


def probe_rows(store: Store, dataset_id: str, questions: Sequence[Question], ks: Sequence[int]) -> list[dict[str, Any]]:
    """:data:`PROBE`'s rows: z(dense view) + z(session topic over the MiniLM vectors), top k."""
    rows = []
    for q in questions:
        views = scope_views(store, dataset_id, q.scope_id)
        codes: dict[str, int] = {}
        session = np.array([codes.setdefault(t.session_id, len(codes)) for t in views.turns], dtype=np.int64)
        score = zscore(np.asarray(views.dense.scores(q.text), dtype=np.float64)) + zscore(
            session_topic(views, q.text, session, "short"))
        order = ranking(score)
        base = {"question_id": q.question_id, "relation": q.qtype}
        rows += [result_row(base, PROBE, k, [views.turns[int(i)].turn_id for i in order[:k]], q, 0.0, "ok") for k in ks]
    return rows


def change(a: dict[str, Any], b: dict[str, Any]) -> dict[str, dict[str, float | None]]:
    """system -> k -> Turn Hit embedded minus Turn Hit in the benchmark's stitching (points)."""
    out: dict[str, dict[str, float | None]] = {}
    for system, by_k in a.items():
        for k, entry in by_k.items():
            x, y = entry["overall"]["turn_hit"], b.get(system, {}).get(k, {}).get("overall", {}).get("turn_hit")
            out.setdefault(system, {})[k] = None if x is None or y is None else round(y - x, 2)
    return out
