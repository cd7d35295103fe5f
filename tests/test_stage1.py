"""Stage I (FCA-MS, Algorithm 1) on the fake views: step contract, minimality, fallback, determinism."""

from __future__ import annotations

import json

import numpy as np
import pytest
from fakes_views import SHUTTER_ROWS, make_views

from bfr_core.config import Budget, Config
from bfr_core.method import fca, stage1
from bfr_core.pipeline import ArmContext, run_query
from bfr_core.records import Query

SHUTTER = "How many days did it take for me to receive the new remote shutter release after I ordered it?"


@pytest.fixture(scope="module")
def views():
    return make_views(SHUTTER_ROWS)


def ctx(views, llm=None):
    return ArmContext(views, Config(), Budget(0, 0, 0, 0), "C0", llm, 10)


def steps_by_kind(steps):
    return {s.kind: s for s in steps}


def test_step_contract(views):
    steps = stage1.fca_ms(ctx(views), Query("q", "s", SHUTTER))
    assert [s.kind for s in steps] == ["pool", "requirements", "context", "lattice", "prefilter", "selection",
                                       "grounding"]
    json.dumps([s.data for s in steps])  # JSON-serialisable
    k = steps_by_kind(steps)
    assert all(s.calls == 0 for s in steps)
    assert all(s.evidence == () for s in steps[:-1])
    pool = [c["turn_id"] for c in k["pool"].data["candidates"]]
    assert k["pool"].data["view"] == "dense" and len(pool) <= 50
    assert [c["rank"] for c in k["pool"].data["candidates"]] == list(range(len(pool)))
    reqs = k["requirements"].data["requirements"]
    assert [r["id"] for r in reqs] == ["r1", "r2"] and k["requirements"].data["source"] == "offline rules"
    ctxd = k["context"].data
    assert ctxd["objects"] == pool and ctxd["attributes"] == ["r1", "r2"]
    assert len(ctxd["incidence"]) == len(pool) and all(len(r) == 2 for r in ctxd["incidence"])
    lat = k["lattice"].data
    assert {c["id"] for c in lat["concepts"]} == set(range(len(lat["concepts"])))
    assert set(lat["used"]) <= {c["id"] for c in lat["concepts"]}
    pre = k["prefilter"].data
    assert len(pre["kept"]) <= 20 and set(pre["kept"]) | set(pre["dropped"]) == set(pool)
    assert not set(pre["kept"]) & set(pre["dropped"])
    sel = k["selection"].data
    assert set(sel["selected"]) <= set(pre["kept"]) and len(set(sel["selected"])) == len(sel["selected"])
    assert sel["method"] == "exact" and sel["fallback"] is False and sel["uncovered"] == []
    e0 = k["grounding"].data["e0"]
    assert e0[: len(sel["selected"])] == sel["selected"]  # selected notes ground to themselves, first
    assert len(e0) <= 10 and len(set(e0)) == len(e0) and k["grounding"].evidence == tuple(e0)
    assert all(k["grounding"].data["scores"][t] > 0 for t in e0)


def test_order_turn_covers_both_endpoints(views):
    k = steps_by_kind(stage1.fca_ms(ctx(views), Query("q", "s", SHUTTER)))
    # the order turn mentions the item and "ordered"; the arrival turn ("arrived") is grounded by overlap
    assert "S1:3" in k["selection"].data["selected"]
    assert "S3:2" in k["grounding"].data["e0"]


def test_lattice_matches_fca_of_the_context(views):
    k = steps_by_kind(stage1.fca_ms(ctx(views), Query("q", "s", SHUTTER)))
    c = k["context"].data
    fctx = fca.context_from_matrix(c["objects"], c["attributes"], c["incidence"])
    assert len(fca.concepts(fctx)) == len(k["lattice"].data["concepts"])
    assert [tuple(e) for e in k["lattice"].data["edges"]] == fca.covering(fca.concepts(fctx))


def test_prefilter_keeps_each_requirement_and_drops_near_duplicates():
    # 30 objects: 25 cover r1 only and rank first; one late object alone covers r2
    rows = [0b01] * 25 + [0, 0, 0, 0, 0b10]
    vecs = np.eye(30, dtype=np.float32)
    vecs[1] = vecs[0]  # object 1 repeats object 0
    texts = [f"t{i}" for i in range(30)]
    fctx = fca.FormalContext(tuple(texts), ("r1", "r2"), tuple(rows))
    kept, used = stage1.prefilter(fca.concepts(fctx), rows, vecs, texts, 20)
    assert len(kept) == 20 and 29 in kept and 1 not in kept


def test_fallback_when_nothing_is_covered(views):
    q = Query("q", "s", "Zyxxy qwertz plomb?")
    k = steps_by_kind(stage1.fca_ms(ctx(views), q))
    sel = k["selection"].data
    assert sel["fallback"] is True and sel["selected"] == k["prefilter"].data["kept"][:3]


def test_llm_selection_is_sanitised(views, monkeypatch):
    from bfr_core.roles import decomposer, selector

    class LLM:
        label = "fake:m"

    def fake_select(llm, question, pool, requirements=None):
        ids = [p[0] for p in pool]
        return selector.Selection(["bogus", ids[2], ids[2], ids[0]], {})

    monkeypatch.setattr(selector, "select_subset", fake_select)
    monkeypatch.setattr(decomposer, "decompose", lambda llm, q: ["date ordered", "date arrived"])
    k = steps_by_kind(stage1.fca_ms(ctx(views, LLM()), Query("q", "s", SHUTTER)))
    kept = k["prefilter"].data["kept"]
    sel = k["selection"].data
    assert sel["method"] == "llm" and set(sel["selected"]) == {kept[2], kept[0]}
    assert k["requirements"].data["source"] == "fake:m"


def test_a_failed_model_call_falls_back_to_the_rules_and_says_so(views, monkeypatch):
    """Issue 5: a question whose call finally fails goes on; here Stage I keeps going on the rules."""
    from bfr_core.llm.base import LLMCallFailed
    from bfr_core.roles import decomposer, selector

    class LLM:
        label = "fake:m"

    def fail(*args, **kwargs):
        raise LLMCallFailed("select: unusable reply after one re-ask (expected an 'ids' list)")

    monkeypatch.setattr(selector, "select_subset", fail)
    monkeypatch.setattr(decomposer, "decompose", fail)
    k = steps_by_kind(stage1.fca_ms(ctx(views, LLM()), Query("q", "s", SHUTTER)))
    assert k["requirements"].data["source"].startswith("offline rules (provider call failed: select")
    sel = k["selection"].data
    assert sel["method"].endswith("after the provider call failed: select: unusable reply after one re-ask "
                                  "(expected an 'ids' list)")
    assert sel["selected"] and not sel["fallback"]


def test_determinism(views):
    q = Query("q", "s", SHUTTER)
    a = run_query(views, q, "fca-ms", dataset_id="fake").to_dict()
    b = run_query(views, q, "fca-ms", dataset_id="fake").to_dict()
    a.pop("elapsed_ms"), b.pop("elapsed_ms")
    assert a == b and a["budget"] == "C0"


def test_newest_only_keeps_a_latest_bit_on_the_newest_session():
    from datetime import datetime

    d1, d2 = datetime(2024, 3, 1), datetime(2024, 4, 1)
    rows = [0b11, 0b11, 0b01, 0b10]
    assert stage1.newest_only(rows, 1, [d1, d2, d2, d1]) == [0b01, 0b11, 0b01, 0b00]
    assert stage1.newest_only(rows, 1, [None] * 4) == rows  # nothing dated: unchanged


def test_an_llm_that_does_not_select_leaves_the_cover_to_the_rules(views, monkeypatch):
    """A replay of recorded decompositions answers role decompose only: Stage I takes its requirements
    and computes the minimum cover itself (no select call, no failure note)."""
    from bfr_core.roles import decomposer, selector

    class Decomposes:
        label = "recorded decomposition (local:m on 2026-01-01)"
        roles = frozenset({"decompose"})

    def no_select(*args, **kwargs):
        raise AssertionError("select must not be asked")

    monkeypatch.setattr(selector, "select_subset", no_select)
    monkeypatch.setattr(decomposer, "decompose", lambda llm, q: ["date ordered", "date arrived"])
    k = steps_by_kind(stage1.fca_ms(ctx(views, Decomposes()), Query("q", "s", SHUTTER)))
    assert k["requirements"].data["source"] == Decomposes.label
    assert k["selection"].data["method"] in ("exact", "greedy")
