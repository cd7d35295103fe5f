"""Which question the Demo page replays: LongMemEval's real shutter-release case when loaded, else
the embedded demo dataset's analogue (the camera strap delivery interval, found by its text)."""

from __future__ import annotations

from dataclasses import dataclass

from bfr_core.store import Store, StoreError

REAL_QID = "b3c15d39"


@dataclass(frozen=True)
class Case:
    dataset_id: str
    question_id: str
    real: bool  # the LongMemEval question itself, not the demo analogue


def find_case(store: Store) -> Case | None:
    sets = store.datasets()
    for d in sets:
        if d["kind"] == "longmemeval":
            try:
                store.question(d["dataset_id"], REAL_QID)
            except StoreError:
                continue
            return Case(d["dataset_id"], REAL_QID, True)
    for d in sorted(sets, key=lambda d: d["dataset_id"] != "demo"):
        for q in store.questions(d["dataset_id"]):
            t = q.text.lower()
            if "camera strap" in t and ("arrive" in t or "receive" in t) and len(q.gold) >= 2:
                return Case(d["dataset_id"], q.question_id, False)
    return None
