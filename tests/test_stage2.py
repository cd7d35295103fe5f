"""Stage II (Algorithm 2): invariants under random budgets (hypothesis), schedules, realized cost,
determinism, and the paper's shutter-release case on real LongMemEval data (skipped if absent)."""

from __future__ import annotations

import gzip
import json

import pytest
from fakes_views import SHUTTER_ROWS, big_rows, make_views
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bfr_core.config import Budget, Config
from bfr_core.ingest.sources import benchmark_file
from bfr_core.method import stage2
from bfr_core.method.budgets import budget_for
from bfr_core.pipeline import ArmContext, run_query
from bfr_core.records import Query

BIG = make_views(big_rows())
QUESTIONS = [
    "What did Caroline say about the camera and the tripod?",
    "When did Alice go to the pottery parade?",
    "How many days after the marathon did Bob adopt a puppy?",
    "Which concert did they discuss?",
]


def ctx(budget: Budget, views=BIG) -> ArmContext:
    return ArmContext(views, Config(), budget, "custom", None, 10)


def check_invariants(e0, steps, b: Budget, schedule):
    prev = list(e0)
    calls = 0
    for n, s in enumerate(steps, 1):
        d = s.data
        assert s.kind == "round" and d["round"] == n
        ev = list(s.evidence)
        assert ev[: len(prev)] == prev  # E only grows, order kept
        assert len(set(ev)) == len(ev)  # no duplicates
        kept = d["retained"]
        assert ev[len(prev):] == kept
        assert len(kept) <= b.keep
        cands = {t for a in d["actions"] for t in a["candidates"]}
        assert set(kept) <= cands and not set(kept) & set(prev)  # exclusion rule
        for a in d["actions"]:
            assert not (a["skipped"] and a["candidates"])
        calls += sum(1 for a in d["actions"] if not a["skipped"])
        c = d["counters"]
        assert c == {"rounds": n, "calls": calls, "new": len(ev) - len(e0)}
        assert c["calls"] <= b.calls and c["new"] <= b.new and c["rounds"] <= b.rounds
        assert s.calls == calls
        assert [a["view"] for a in d["actions"]] == list(schedule.actions)
        prev = ev
    # the loop ran until a budget was spent (or rounds ran out)
    if steps:
        c = steps[-1].data["counters"]
        assert c["rounds"] == b.rounds or c["calls"] >= b.calls or c["new"] >= b.new
    else:
        assert b.rounds == 0 or b.calls == 0 or b.new == 0


budgets = st.builds(Budget, rounds=st.integers(0, 5), calls=st.integers(0, 9), new=st.integers(0, 45),
                    keep=st.integers(0, 25))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(b=budgets, qi=st.integers(0, len(QUESTIONS) - 1), sched=st.sampled_from(["text", "mv"]),
       e0n=st.integers(0, 12), start=st.integers(0, 300))
def test_invariants_hold_for_any_budget(b, qi, sched, e0n, start):
    e0 = [BIG.turns[i].turn_id for i in range(start, start + e0n)]
    schedule = stage2.SCHEDULES[sched]
    steps = stage2.complete(ctx(b), Query("q", "s", QUESTIONS[qi]), e0, schedule)
    check_invariants(e0, steps, b, schedule)


def test_text_realized_cost_matches_table16_shape():
    e0 = [t.turn_id for t in BIG.turns[:10]]
    q = Query("q", "s", QUESTIONS[0])
    for name, calls, size in [("C1", 1, 18), ("C2", 2, 26), ("C3", 3, 34), ("C4", 4, 40), ("C6", 4, 40)]:
        steps = stage2.complete(ctx(budget_for("bfr-text", name)), q, e0, stage2.TEXT)
        assert (steps[-1].calls, len(steps[-1].evidence)) == (calls, size), name


def test_mv_realized_cost_and_skipped_entity():
    e0 = [t.turn_id for t in BIG.turns[:10]]
    q = Query("q", "s", QUESTIONS[0])  # names Caroline
    expect = {"C1": (1, 22), "C2": (2, 30), "C3": (3, 30), "C4": (4, 40), "C6": (6, 40), "C9": (9, 60)}
    for name, (calls, size) in expect.items():
        steps = stage2.complete(ctx(budget_for("bfr-mv", name)), q, e0, stage2.MV)
        assert (steps[-1].calls, len(steps[-1].evidence)) == (calls, size), name
    # no person named: the entity action is skipped each round and costs nothing
    q2 = Query("q", "s", QUESTIONS[3])
    steps = stage2.complete(ctx(budget_for("bfr-mv", "C6")), q2, e0, stage2.MV)
    for s in steps:
        ent = s.data["actions"][1]
        assert ent["view"] == "entity" and ent["skipped"] and ent["reason"] == "no cue"
    assert steps[-1].calls == 4 and len(steps[-1].evidence) == 40  # B_new spent after two 2-call rounds


def test_session_cue_is_head_of_latest_batch():
    e0 = [t.turn_id for t in BIG.turns[5:15]]
    steps = stage2.complete(ctx(budget_for("bfr-mv", "C6")), Query("q", "s", QUESTIONS[0]), e0, stage2.MV)
    assert steps[0].data["actions"][2]["cue"] == e0[0]
    assert steps[1].data["actions"][2]["cue"] == steps[0].data["retained"][0]


def test_call_budget_cuts_inside_a_round():
    e0 = [t.turn_id for t in BIG.turns[:10]]
    steps = stage2.complete(ctx(Budget(3, 4, 100, 20)), Query("q", "s", QUESTIONS[0]), e0, stage2.MV)
    last = steps[-1].data["actions"]
    assert [a["skipped"] for a in last] == [False, True, True]
    assert last[1]["reason"] == "call budget spent" and steps[-1].calls == 4


@pytest.mark.parametrize("arm", ["bfr-text", "bfr-mv"])
def test_arms_are_deterministic_and_start_with_stage_one(arm):
    q = Query("q", "s", QUESTIONS[2])
    a = run_query(BIG, q, arm, dataset_id="fake").to_dict()
    b = run_query(BIG, q, arm, dataset_id="fake").to_dict()
    a.pop("elapsed_ms"), b.pop("elapsed_ms")
    assert a == b
    kinds = [s["kind"] for s in a["steps"]]
    assert kinds[:7] == ["pool", "requirements", "context", "lattice", "prefilter", "selection", "grounding"]
    assert set(kinds[7:]) == {"round"}
    json.dumps(a)


def test_shutter_case_on_fake_views():
    views = make_views(SHUTTER_ROWS)
    q = Query("q", "s", "How many days did it take for me to receive the new remote shutter release after "
                        "I ordered it?")
    tr = run_query(views, q, "bfr-mv", dataset_id="fake")
    assert {"S1:3", "S3:2"} <= set(tr.evidence)


# ------------------------------------------------------------------------------------------------
# The paper's Figure 1 / Appendix B case on real data: LongMemEval-S question b3c15d39
# ------------------------------------------------------------------------------------------------

LME = benchmark_file("longmemeval")
ORDER, ARRIVAL = "answer_05d808e6_1_11", "answer_05d808e6_2_1"


@pytest.fixture(scope="module")
def shutter_store(tmp_path_factory):
    if not LME.exists():
        pytest.skip("LongMemEval dev50 file not present")
    from bfr_core.ingest.longmemeval import load_longmemeval
    from bfr_core.records import Bundle
    from bfr_core.store import Store

    with gzip.open(LME, "rt", encoding="utf-8") as fh:
        rows = [x for x in json.load(fh) if x["question_id"] == "b3c15d39"]
    src = tmp_path_factory.mktemp("lme") / "b3c15d39.json"
    src.write_text(json.dumps(rows), encoding="utf-8")
    bundle: Bundle = load_longmemeval(str(src), dataset_id="longmemeval")
    store = Store(tmp_path_factory.mktemp("db") / "s.duckdb")
    store.write_bundle(bundle)
    return store


def test_b3c15d39_bfr_mv_retrieves_order_and_arrival(shutter_store):
    """Appendix B / Table 7: BFR-MV reaches both turns. (The paper's premise that Stage I alone misses
    the arrival held with the static dense view and no longer does with the MiniLM-merged default;
    like the top-10 premise below it is a property of the views, not a target, so it is not asserted.)"""
    from bfr_core.pipeline import run

    q = shutter_store.question("longmemeval", "b3c15d39")
    assert {ORDER, ARRIVAL} <= set(q.gold)
    tr = run(shutter_store, "longmemeval", "b3c15d39", "bfr-mv")
    assert {ORDER, ARRIVAL} <= set(tr.evidence)
    assert tr.budget == "C6" and tr.calls <= 6 and len(tr.evidence) <= 40


def test_b3c15d39_one_shot_top10_already_reach_the_arrival_with_our_views(shutter_store):
    """The paper's Figure 1 premise (one-shot top-10 misses the arrival turn) does not hold with our
    views: BM25 and the dense view both rank it inside their top 10 (measured: ranks 4 and 3)."""
    from bfr_core.retrieval.scope import scope_views

    q = shutter_store.question("longmemeval", "b3c15d39")
    views = scope_views(shutter_store, "longmemeval", q.scope_id)
    mem0 = [h.turn_id for h in views.bm25.search(q.text, 10)]  # Mem0: BM25 top-10
    amem = [h.turn_id for h in views.dense.search(q.text, 10)]  # A-Mem: dense top-10
    assert ARRIVAL in mem0 and ARRIVAL in amem
