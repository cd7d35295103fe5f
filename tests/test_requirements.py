"""Offline requirement decomposition, FirstPerson, and the LLM path behind the same function."""

from __future__ import annotations

from datetime import datetime

import pytest

from bfr_core.llm.rules_requirements import decompose_rules
from bfr_core.method import requirements as R
from bfr_core.records import Query, Turn
from bfr_core.text import stem, tokenize

SHUTTER = "How many days did it take for me to receive the new remote shutter release after I ordered it?"


def kinds(reqs):
    return [r.kind for r in reqs]


def test_a_pronoun_endpoint_borrows_the_object_not_the_verb_of_an_infinitive_event():
    arrival, order = decompose_rules("How many days did it take for my new camera strap to arrive after I ordered it?")
    assert "arriv" in arrival.terms and {"order", "new", "camera", "strap"} <= set(order.terms)
    assert "arriv" not in order.terms  # the main event's verb is the other endpoint's, not this one's


def test_temporal_endpoints_order_and_receipt():
    reqs = R.decompose(Query("q", "s", SHUTTER))
    assert kinds(reqs) == ["temporal", "temporal"]
    receipt, order = reqs
    assert "receiv" in receipt.terms and "order" not in receipt.terms
    assert "order" in order.terms
    # the pronoun "it" borrows the object of the main clause
    assert {"remot", "shutter", "releas"} <= set(order.terms)
    assert "day" not in receipt.terms  # the duration unit is not content


def test_between_endpoints_and_double_anchor():
    reqs = decompose_rules("How many weeks passed between the time I sold baked goods at the market and "
                             "the time I joined the Spring Fling fair?")
    assert kinds(reqs)[:2] == ["temporal", "temporal"]
    reqs = decompose_rules("How many days had passed since I started taking ukulele lessons when I "
                             "decided to take my guitar to the tech?")
    assert kinds(reqs) == ["temporal", "temporal"]
    assert "ukulel" in reqs[1].terms and "guitar" in reqs[0].terms


def test_entities_constraints_and_dates():
    reqs = decompose_rules("Which recreational activity was James pursuing on March 16, 2022?")
    assert kinds(reqs) == ["fact", "entity", "constraint"]
    assert reqs[1].text == "James"
    assert reqs[2].when == (2022, 3, 16)
    assert "recreat" in reqs[0].terms and "jame" not in reqs[0].terms
    reqs = decompose_rules("When did Caroline attend a pride parade in August?")
    assert kinds(reqs) == ["temporal", "time", "entity", "constraint"] and reqs[3].when == (None, 8, None)


def test_bridge_and_list():
    reqs = decompose_rules("What is James planning to do after receiving Samantha's phone number?")
    assert kinds(reqs)[:2] == ["fact", "bridge"]
    assert {"James", "Samantha"} <= {r.text for r in reqs if r.kind == "entity"}
    reqs = decompose_rules("What are some foods that Audrey likes eating?")
    assert kinds(reqs) == ["list", "entity"]


def test_one_to_five_unique_ids_and_determinism():
    qs = [SHUTTER, "What?", "", "Who did I meet first, Mark and Sarah or Tom, and when did Alice, Bob, Carol, "
          "Dave and Eve visit Paris in May 2021 after the party?"]
    for q in qs:
        reqs = decompose_rules(q)
        assert 1 <= len(reqs) <= 5
        assert [r.rid for r in reqs] == [f"r{i}" for i in range(1, len(reqs) + 1)]
        assert all(r.kind in R.KINDS and r.terms for r in reqs)
        assert reqs == decompose_rules(q)


def test_long_prompt_keeps_the_ask():
    q = ("I'm planning my trip to Speyer again and I wanted to confirm, what's the phone number of the "
         "Speyer tourism board that you provided me earlier?")
    reqs = decompose_rules(q)
    assert {"phone", "tourism", "board"} <= set(reqs[0].terms)


def test_first_person():
    assert R.first_person("What is a Star Wars book that Tim might enjoy?", ["Tim", "John"]) == "Tim"
    assert R.first_person("What did Caroline's friend tell Melanie?", ["Melanie", "Caroline"]) == "Caroline"
    assert R.first_person("What did José's friend tell Zoë?", ["Zoë", "Jose"]) == "Jose"  # accents fold
    assert R.first_person("Where did Audrey get Pixie from?") == "Audrey"
    assert R.first_person(SHUTTER, ["user", "assistant"]) is None
    assert R.first_person("When did I visit LGBTQ events?") is None


def test_lexical_coverage_rules():
    req = decompose_rules(SHUTTER)[0]  # receipt endpoint
    arrival = Turn("t", "s", 0, "user", "The new remote shutter release arrived on February 10th.")
    other = Turn("u", "s", 1, "user", "I sell my tripod.")
    st = frozenset(tokenize(arrival.text, stemmed=True))
    assert R.covers_lexically(req, arrival, st)  # "arrived" counts for "receive"
    assert not R.covers_lexically(req, other, frozenset(tokenize(other.text, stemmed=True)))
    ent = R.Requirement("r2", "Caroline", "entity", (stem("caroline"),))
    by_speaker = Turn("v", "s", 2, "Caroline", "I went there yesterday.")
    assert R.covers_lexically(ent, by_speaker, frozenset(tokenize(by_speaker.text, stemmed=True)))
    cons = R.Requirement("r3", "May 2023", "constraint", ("may",), (2023, 5, None))
    dated = Turn("w", "s", 3, "Bob", "Nice day.", datetime(2023, 5, 8))
    assert R.covers_lexically(cons, dated, frozenset())
    assert not R.covers_lexically(cons, Turn("x", "s", 4, "Bob", "Nice.", datetime(2023, 6, 8)), frozenset())


class FakeLLM:
    label = "fake:model"


def test_llm_path_goes_through_the_decompose_role(monkeypatch):
    from bfr_core.roles import decomposer

    seen = {}

    def fake_decompose(llm, question):
        seen["q"] = question
        return ["date I ordered the remote shutter release", "date it arrived", "Alice", "May 2023"]

    monkeypatch.setattr(decomposer, "decompose", fake_decompose)
    reqs, source = R.decompose_with_source(Query("q", "s", SHUTTER), FakeLLM())
    assert seen["q"] == SHUTTER and source == "fake:model"
    assert kinds(reqs) == ["temporal", "temporal", "entity", "constraint"]
    assert reqs[3].when == (2023, 5, None)
    monkeypatch.setattr(decomposer, "decompose", lambda llm, q: [])
    reqs, source = R.decompose_with_source(Query("q", "s", SHUTTER), FakeLLM())
    assert source.startswith("offline rules") and len(reqs) == 2


@pytest.mark.parametrize("text", ["", "   ", "???", "a b c"])
def test_degenerate_questions_still_give_one_requirement(text):
    reqs = decompose_rules(text)
    assert len(reqs) == 1 and reqs[0].kind == "fact"


# -- question forms in Stage I (llm.rules_forms) ----------------------------------------------------
def _turn(text: str) -> Turn:
    return Turn("t", "s", 0, "user", text)


def _covers(req: R.Requirement, text: str) -> bool:
    return R.covers_lexically(req, _turn(text), frozenset(tokenize(text, stemmed=True)))


def test_forms_give_structure_offline():
    assert kinds(decompose_rules("What did I cook for the neighbour who fixed my bike?")) == ["fact", "bridge"]
    assert kinds(decompose_rules("Which bike do I ride these days?"))[-1] == "latest"
    assert kinds(decompose_rules("Which came first, the bakery opening or the river flood?")) == [
        "temporal", "temporal"]
    assert kinds(decompose_rules("What are my hobbies and pets?")) == ["list", "list"]


def test_slot_shares_its_facts_terms_yet_stays():
    reqs = decompose_rules("Where did I buy the blue kettle?")
    assert kinds(reqs) == ["fact", "place"]
    assert reqs[0].terms == reqs[1].terms and reqs[1].text.startswith("where: ")


@pytest.mark.parametrize(("question", "with_value", "without_value"), [
    ("Where did I buy the blue kettle?", "I bought the blue kettle at the market downtown.",
     "I bought the blue kettle, it whistles."),
    ("Where did I buy the blue kettle?", "I bought the blue kettle in Lisbon.", "The blue kettle I bought is loud."),
    ("Who did I meet at the bakery?", "At the bakery I met my cousin.", "I met nobody at the bakery, it was empty."),
    ("Who did I meet at the bakery?", "I met an old teacher, Mr Hale, at the bakery.", "Bakery meet ups are fun."),
    ("When did I start the pottery class?", "I started the pottery class last Tuesday.",
     "I started the pottery class, it is hard."),
])
def test_a_slot_needs_a_value_of_its_type(question, with_value, without_value):
    slot = decompose_rules(question)[-1]
    assert slot.kind in ("person", "place", "time")
    assert _covers(slot, with_value)
    assert not _covers(slot, without_value)


def test_states_slot_is_true_for_untyped_kinds():
    assert R.states_slot("fact", "anything") and R.states_slot("latest", "anything")


def test_accented_names_are_names_and_fold_like_the_turns():
    assert R.name_spans("What did José tell Zoë in München?") == ["Jose", "Zoe", "Munchen"]
    assert R.states_slot("place", "We met in München.") and R.states_slot("person", "we saw Émile there")


def test_a_models_temporal_requirement_is_covered_by_its_event_not_the_word_date(monkeypatch):
    from bfr_core.roles import decomposer

    monkeypatch.setattr(decomposer, "decompose", lambda llm, q: ["date I ordered the camera strap", "date it arrived",
                                                                 "date of the move in the notes"])
    reqs, _ = R.decompose_with_source(Query("q", "s", SHUTTER), FakeLLM())
    assert [r.kind for r in reqs] == ["temporal", "temporal", "temporal"]
    assert reqs[1].terms == ("arriv",) and "date" not in reqs[0].terms
    monkeypatch.setattr(decomposer, "decompose", lambda llm, q: [{"text": "date of the move", "kind": "fact"}])
    assert R.decompose_with_source(Query("q", "s", SHUTTER), FakeLLM())[0][0].terms == ("date", "move")  # facts keep it
