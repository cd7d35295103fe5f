"""MRAgent-Flat*: tool policy (rules and LLM), caps, determinism."""

from __future__ import annotations

from fakes_views import SHUTTER_ROWS, big_rows, make_views

from bfr_core.baselines import mragent
from bfr_core.method.requirements import Requirement
from bfr_core.pipeline import run_query
from bfr_core.records import Query

BIG = make_views(big_rows())
Q = Query("q", "s", "When did Caroline talk about the camera and the tripod?")


def test_first_call_is_text_then_confirmation_tools():
    tr = run_query(BIG, Q, "mragent-flat", dataset_id="fake")
    tools = [s.data["tool"] for s in tr.steps if s.kind == "tool"]
    assert tools[0] == "text" and tr.calls == len(tools) <= mragent.MAX_CALLS
    assert len(tr.evidence) <= mragent.MAX_SIZE and len(set(tr.evidence)) == len(tr.evidence)
    assert "entity" in tools  # the question names Caroline
    ent = next(s for s in tr.steps if s.kind == "tool" and s.data["tool"] == "entity")
    assert ent.data["cue"] == "Caroline"


def test_rule_choice():
    reqs = [Requirement("r1", "camera", "fact", ("camera",)), Requirement("r2", "Sam", "entity", ("sam",))]
    assert mragent.rule_choice(reqs, {"r1"}, set(), ["t1"])[:2] == ("entity", "Sam")
    assert mragent.rule_choice(reqs, {"r2"}, set(), ["t1"])[:2] == ("text", "camera")
    assert mragent.rule_choice(reqs, {"r1", "r2"}, {("text", "q")}, ["t1"], None)[0] == "stop"
    assert mragent.rule_choice(reqs, {"r1", "r2"}, {("text", "q")}, ["t1"], "Ann")[:2] == ("entity", "Ann")
    temporal = [Requirement("r1", "x", "temporal", ("x",))]
    assert mragent.rule_choice(temporal, {"r1"}, {("text", "q"), ("entity", "Ann")}, ["t1"], "Ann")[:2] == \
        ("session", "t1")


def test_llm_chooses_the_tool(monkeypatch):
    from bfr_core.roles import decomposer, tool_chooser

    class LLM:
        label = "fake:m"

    picks = iter(["session", "stop"])
    monkeypatch.setattr(tool_chooser, "choose_tool", lambda llm, q, ev, tools: next(picks))
    monkeypatch.setattr(decomposer, "decompose", lambda llm, q: ["camera", "tripod"])
    tr = run_query(make_views(SHUTTER_ROWS), Q, "mragent-flat", dataset_id="fake", llm=LLM())
    tools = [s.data["tool"] for s in tr.steps if s.kind == "tool"]
    assert tools == ["text", "session"] and tr.steps[-1].kind == "stop"


def test_deterministic():
    a = run_query(BIG, Q, "mragent-flat", dataset_id="fake").to_dict()
    b = run_query(BIG, Q, "mragent-flat", dataset_id="fake").to_dict()
    a.pop("elapsed_ms"), b.pop("elapsed_ms")
    assert a == b
