"""bfr_core.roles.decomposer.Replay: the recorded decompositions served offline, and the demo's
camera-strap case under them (the paper's point: two requirements, no gold turn satisfying both,
a Stage I cover of both gold turns)."""

from __future__ import annotations

import json

import pytest

from bfr_core.ingest.demo import ensure_demo_store
from bfr_core.llm.base import LLMCallFailed
from bfr_core.roles import decomposer as D
from bfr_core.roles import selector


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    s = ensure_demo_store(tmp_path_factory.mktemp("replay") / "demo.duckdb", embed=False)
    yield s
    s.close()


def test_replay_serves_the_recorded_reply_and_names_it(store):
    q1 = store.question("demo", "q1").text
    rec = D.recorded(store, q1)
    replay = D.Replay(store)
    assert replay.label == "recorded decomposition"  # nothing served yet
    assert D.decompose(replay, q1) == list(rec.requirements)
    assert replay.label == f"recorded decomposition ({rec.model} on {rec.date})"


def test_replay_answers_no_other_role_and_no_unrecorded_question(store):
    replay = D.Replay(store)
    with pytest.raises(LLMCallFailed, match="decompose only"):
        selector.select_subset(replay, "q?", [("t1", "text")], requirements=["r"])
    with pytest.raises(LLMCallFailed, match="no recorded decomposition"):
        D.decompose(replay, "What is the name of my neighbour's cat?")
    assert "select" not in replay.roles


def test_the_demo_case_under_the_recorded_decomposition(store):
    from bfr_core import pipeline

    q = store.question("demo", "q1")
    trace = pipeline.run(store, "demo", "q1", "bfr-mv", llm=D.Replay(store))
    steps = {s.kind: s for s in trace.steps}
    reqs = [r["id"] for r in steps["requirements"].data["requirements"]]
    assert len(reqs) >= 2 and steps["requirements"].data["source"].startswith("recorded decomposition (local:")
    ctx = steps["context"].data
    rows = dict(zip(ctx["objects"], ctx["incidence"], strict=True))
    for g in q.gold:  # each gold turn is in the pool and covers some requirement, never all of them
        assert 0 < sum(rows[g]) < len(reqs), (g, rows[g])
    assert set(q.gold) <= set(steps["selection"].data["selected"])  # the cover needs both
    assert steps["selection"].data["method"] == "exact"
    intents = [tuple(c["intent"]) for c in steps["lattice"].data["concepts"]]
    assert len(set(intents)) == len(intents) >= 4
    assert json.loads(json.dumps(trace.to_dict()))  # the trace stays serialisable
