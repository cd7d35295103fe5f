"""LongMemEval-M-sized haystacks built from dev50: :func:`padded` pads each of a seeded sample of
dev50 items to a number of sessions with filler sessions drawn (seeded) from the other haystacks. A
filler is renamed ``m_<id>`` and its ``has_answer`` flags dropped (it holds no gold for its new
question); a session already in the haystack is never drawn; the padded haystack is ordered by session
date, as LongMemEval's are. The question, its date, its answer and its own sessions are untouched.

Does not cover: timing what is built (``bench.speed.bench_msize``, ``bench.speed.bench_stream``).
"""

from __future__ import annotations

import random
from typing import Any


def padded(data: list[dict[str, Any]], n_questions: int, sessions: int, seed: int) -> list[dict[str, Any]]:
    """``n_questions`` dev50 items, each haystack padded to ``sessions`` sessions (see module doc)."""
    rng = random.Random(seed)
    chosen = rng.sample(sorted(range(len(data))), n_questions)
    out = []
    for i in sorted(chosen):
        item = data[i]
        own = set(item["haystack_session_ids"])
        pool = sorted({(sid, j, k) for j, other in enumerate(data) if j != i
                       for k, sid in enumerate(other["haystack_session_ids"]) if sid not in own},
                      key=lambda x: (x[0], x[1]))
        seen: set[str] = set()
        unique = []
        for sid, j, k in pool:  # one copy of each session id (shared sessions occur in many haystacks)
            if sid not in seen:
                seen.add(sid)
                unique.append((sid, j, k))
        need = max(0, sessions - len(own))
        fill = rng.sample(unique, min(need, len(unique)))
        rows = list(zip(item["haystack_session_ids"], item["haystack_dates"], item["haystack_sessions"], strict=True))
        for sid, j, k in fill:
            turns = [{"role": t["role"], "content": t["content"]} for t in data[j]["haystack_sessions"][k]]
            rows.append((f"m_{sid}", data[j]["haystack_dates"][k], turns))
        rows.sort(key=lambda r: r[1])  # "2023/05/20 (Sat) 02:21" orders as text
        out.append({**item, "haystack_session_ids": [r[0] for r in rows], "haystack_dates": [r[1] for r in rows],
                    "haystack_sessions": [r[2] for r in rows]})
    return out
