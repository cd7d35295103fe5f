"""CoM*: one dense call, ~k turns, anchors first, chains, blocking, determinism."""

from __future__ import annotations

import json

from fakes_views import SHUTTER_ROWS, big_rows, make_views

from bfr_core.baselines import com
from bfr_core.pipeline import run_query
from bfr_core.records import Query

Q = Query("q", "s", "How many days did it take for me to receive the new remote shutter release after I ordered it?")


def test_com_shape_and_size():
    views = make_views(big_rows())
    tr = run_query(views, Query("q", "s", "What did Caroline say about the camera and the tripod?"), "com",
                   dataset_id="fake")
    assert tr.calls == 1 and len(tr.evidence) == 10 and len(set(tr.evidence)) == 10
    kinds = [s.kind for s in tr.steps]
    assert kinds == ["pool", "anchors", "chains"]
    chains = tr.steps[-1].data["chains"]
    assert [c[0] for c in chains] == tr.steps[1].data["anchors"]
    assert [t for c in chains for t in c] == list(tr.evidence)
    json.dumps(tr.to_dict())


def test_com_blocks_near_duplicates():
    rows = list(SHUTTER_ROWS) + [("S9", "Alice", SHUTTER_ROWS[2][2])]  # an exact repeat of the order turn
    views = make_views(rows)
    tr = run_query(views, Q, "com", dataset_id="fake")
    texts = [views.by_id[t].text for t in tr.evidence]
    assert len(texts) == len(set(texts))
    assert tr.steps[-1].data["blocked"] or tr.steps[1].data["anchors"]


def test_com_deterministic():
    views = make_views(SHUTTER_ROWS)
    a = run_query(views, Q, "com", dataset_id="fake").to_dict()
    b = run_query(views, Q, "com", dataset_id="fake").to_dict()
    a.pop("elapsed_ms"), b.pop("elapsed_ms")
    assert a == b and a["steps"][-1]["data"]["weights"]["relevance"] == com.ALPHA
