"""The LLM roles: prompts, parsing, blinding of Suff@Set, adjudication; with scripted fakes and
with the offline rules backend."""

from __future__ import annotations

import json

import pytest

from bfr_core.config import LLMConfig
from bfr_core.llm import LLMCallFailed, LLMRequest, LLMResponse, RulesLLM, make_llm
from bfr_core.roles import answer_judge, answerer, decomposer, prompting, selector, sufficiency, tool_chooser
from bfr_core.store import Store

SHUTTER = "How many days did it take for me to receive the new remote shutter release after I ordered it?"
ORDER = "I ordered a new remote shutter release online on February 5th"
ARRIVAL = "it arrived on February 10th"
ARRIVED = "How long did the remote shutter release take to arrive?"  # a time span, not "how many days"


class Scripted:
    """Answers each request with the next scripted reply; keeps every request it saw."""

    provider, model = "fake", "scripted"

    def __init__(self, *replies: str, name: str = "fake") -> None:
        self.replies, self.requests, self.label = list(replies), [], name

    def complete(self, request: LLMRequest) -> LLMResponse:
        self.requests.append(request)
        return LLMResponse(self.replies.pop(0) if len(self.replies) > 1 else self.replies[0])


@pytest.fixture
def rules():
    return make_llm(LLMConfig(), Store())


def test_rules_end_to_end_on_the_shutter_question(rules):
    reqs = decomposer.decompose(rules, SHUTTER)
    assert len(reqs) >= 2
    pool = [("lme_1", "I love photography"), ("lme_2", ORDER), ("lme_3", ARRIVAL), ("lme_4", "I sold my tripod")]
    sel = selector.select_subset(rules, SHUTTER, pool, requirements=reqs)
    ids, coverage = sel  # unpacks as the (ids, coverage) pair
    assert ids == ["lme_2", "lme_3"] and sel.covered_fraction == 1.0
    assert coverage == {reqs[0]: ["lme_2"], reqs[1]: ["lme_3"]}
    assert tool_chooser.choose_tool(rules, SHUTTER, [ORDER], ["text", "entity", "session"]) == "session"
    assert answerer.answer(rules, SHUTTER, [ORDER, ARRIVAL]) == "5 days"
    assert answer_judge.judge(rules, SHUTTER, "5 days", "5 days") == "CORRECT"
    assert answer_judge.judge(rules, SHUTTER, "5 days", "It took about a week") == "WRONG"
    full = sufficiency.suff_at_set((rules, rules), rules, SHUTTER, "5 days", [ORDER, ARRIVAL])
    assert (full.label, full.judge_labels, full.adjudicated, full.sufficient) == (
        "sufficient", ("sufficient", "sufficient"), False, True)
    half = sufficiency.suff_at_set((rules, rules), rules, SHUTTER, "5 days", [ORDER])
    assert half.label == "insufficient" and half.sufficient is False


def test_decompose_prompt_and_parsing():
    fake = Scripted('{"requirements": ["date ordered", "date ordered", " date received ", "", "a", "b", "c", "d"]}')
    assert decomposer.decompose(fake, SHUTTER) == ["date ordered", "date received", "a", "b", "c"]
    req = fake.requests[0]
    assert req.role == "decompose" and req.json_mode and SHUTTER in req.prompt
    assert '{"requirements": [' in req.prompt  # the worked example survives formatting
    assert json.loads(req.json_schema)["required"] == ["requirements"]
    assert json.loads(req.payload) == {"question": SHUTTER}


def test_decompose_reasks_on_empty_list_then_fails():
    fake = Scripted('{"requirements": []}')
    with pytest.raises(LLMCallFailed, match="no requirements"):
        decomposer.decompose(fake, SHUTTER)
    assert len(fake.requests) == 2


def test_select_maps_aliases_and_drops_invented_ids():
    fake = Scripted('{"ids": ["m3", "m9", "m1", "m3"], "coverage": {"1": ["m1", "m9"], "req 2": ["m3"], "7": ["m1"]}}')
    pool = [("conv-26:D1:3", "order text"), ("conv-26:D1:4", "noise"), ("conv-26:D2:1", "arrival text")]
    sel = selector.select_subset(fake, "Q?", pool, requirements=["order date", "arrival date"])
    assert sel.ids == ["conv-26:D2:1", "conv-26:D1:3"]
    assert sel.coverage == {"order date": ["conv-26:D1:3"], "arrival date": ["conv-26:D2:1"]}
    prompt = fake.requests[0].prompt
    assert "[m1] order text" in prompt and "conv-26" not in prompt  # short aliases only


def test_select_reply_is_coverage_only_and_its_union_is_the_selection():
    """The reply a model is asked for: one list of shown ids per requirement (at most 3, no invented
    ids or requirement numbers, by schema); the selection is their union in requirement order."""
    fake = Scripted('{"coverage": {"1": ["m3", "m1"], "2": ["m1", "m4"]}}')
    pool = [("a", "t1"), ("b", "t2"), ("c", "t3")]
    sel = selector.select_subset(fake, "Q?", pool, requirements=["order date", "arrival date"])
    assert sel.ids == ["c", "a"] and sel.coverage == {"order date": ["c", "a"], "arrival date": ["a"]}
    schema = json.loads(fake.requests[0].json_schema)
    cov = schema["properties"]["coverage"]
    assert cov["required"] == ["1", "2"] and set(cov["properties"]) == {"1", "2"}
    assert cov["properties"]["1"]["items"]["enum"] == ["m1", "m2", "m3"] and cov["properties"]["1"]["maxItems"] == 3
    assert '{"coverage": {"1": ["m1"], "2": ["m3"]}}' in fake.requests[0].prompt


def test_select_with_empty_pool_and_default_requirements(rules):
    assert selector.select_subset(rules, SHUTTER, []).ids == []
    fake = Scripted('{"requirements": ["x"]}', '{"ids": [], "coverage": {}}')
    sel = selector.select_subset(fake, "Q?", [("a", "t")])
    assert sel == ([], {"x": []}) and sel.covered_fraction == 0.0
    assert [r.role for r in fake.requests] == ["decompose", "select"]


def test_choose_tool_validates_against_the_offered_tools():
    fake = Scripted('{"tool": "Session"}')
    assert tool_chooser.choose_tool(fake, "Q?", ["e1"], {"text": "search", "session": "neighbours"}) == "session"
    assert "- session: neighbours" in fake.requests[0].prompt
    bad = Scripted('{"tool": "web_search"}', '{"tool": "text"}')
    assert tool_chooser.choose_tool(bad, "Q?", [], ["text", "entity"]) == "text"
    assert "web_search" not in bad.requests[1].prompt.split("Your previous reply")[0]


def test_answer_accepts_json_or_a_bare_reply():
    assert answerer.answer(Scripted('{"answer": "5 days"}'), ARRIVED, [ORDER, ARRIVAL]) == "5 days"
    assert answerer.answer(Scripted('{"answer": 5}'), ARRIVED, [ORDER, ARRIVAL]) == "5"
    assert answerer.answer(Scripted("Five days."), ARRIVED, [ORDER]) == "Five days."
    fake = Scripted('{"answer": "x"}')
    answerer.answer(fake, ARRIVED, [ORDER, ARRIVAL])
    assert "[1] I ordered" in fake.requests[0].prompt and "[2] it arrived" in fake.requests[0].prompt
    assert "Do not invent entities" in fake.requests[0].prompt


def test_the_time_between_two_events_is_computed_from_the_dates_the_model_copies():
    fake = Scripted('{"earlier": "February 10th", "later": "February 5th"}')  # swapped, as a 1.5B model may
    got = answerer.answered(fake, SHUTTER, [ORDER, ARRIVAL])
    assert got == ("5 days", ("February 10th", "February 5th"))
    assert got.how == "computed: the time between February 10th and February 5th, dates read from the evidence"
    assert answerer.answered(Scripted('{"answer": "x"}'), ARRIVED, [ORDER]).how == ""  # extractive
    (request,) = fake.requests
    assert request.role == "span" and request.prompt.startswith("Evidence snippets, in order:\n[1] I ordered")
    assert json.loads(request.json_schema)["required"] == ["earlier", "later"]
    weeks = "How many weeks passed between the bake sale and the charity run?"
    assert answerer.span_answer(weeks, "26 February 2023", "2023-03-21") == "3 weeks"
    assert answerer.span_answer(weeks, "December 28, 2022", "January 4") == "1 week"  # the year carried over
    # no answer computed -> the extractive answerer: a date missing or unreadable, the same date
    # twice, a gap that rounds to 0 in the unit asked, or a span call that fails for good
    for reply in ('{"earlier": "3/20", "later": "3/27"}', '{"earlier": "March 15", "later": "March 15th"}',
                  '{"earlier": "", "later": "March 15"}'):
        fallback = Scripted(reply, '{"answer": "29 days"}')
        assert answerer.answer(fallback, SHUTTER, [ORDER, ARRIVAL]) == "29 days"
        assert [r.role for r in fallback.requests] == ["span", "answer"]
    assert answerer.span_answer("How many years passed between the two moves?", "2023-04-02", "2023-08-04") is None
    broken = Scripted('{"answer": "5 days"}', '{"answer": "5 days"}', '{"answer": "y"}')
    assert answerer.answer(broken, SHUTTER, [ORDER, ARRIVAL]) == "y"
    assert [r.role for r in broken.requests] == ["span", "span", "answer"]
    # other questions ("... ago" needs today's date; "how long" names no unit), and the paper's
    # answerer alone, make the one answer call
    for question, span_first in (("How many days ago did I order the remote shutter release?", True),
                                 (ARRIVED, True), (SHUTTER, False)):
        direct = Scripted('{"answer": "x"}')
        answerer.answer(direct, question, [ORDER, ARRIVAL], span_first=span_first)
        assert [r.role for r in direct.requests] == ["answer"]


def test_rules_span_gives_the_two_event_dates_the_rules_answer_subtracts(rules):
    assert answerer.span_dates(rules, SHUTTER, [ARRIVAL, ORDER]) == ("February 5", "February 10")
    assert answerer.answer(rules, SHUTTER, [ARRIVAL, "I love photography", ORDER]) == "5 days"
    assert answerer.span_dates(rules, SHUTTER, ["I love photography"]) == ("", "")


def test_judge_uses_the_papers_prompt_and_reads_the_label():
    fake = Scripted('{"reason": "Same interval.", "label": "CORRECT"}')
    assert answer_judge.judge(fake, SHUTTER, "5 days", "five days") == "CORRECT"
    prompt = fake.requests[0].prompt
    assert prompt.startswith("Your task is to label an answer to a question as 'CORRECT' or 'WRONG'.")
    assert "Gold answer: 5 days\nGenerated answer: five days" in prompt
    assert "Do NOT include both CORRECT and WRONG in your response." in prompt
    # "First, provide a short explanation ..., then finish with CORRECT or WRONG": a grammar built from
    # the schema emits properties in order, so the reason must come first
    assert list(json.loads(fake.requests[0].json_schema)["properties"]) == ["reason", "label"]
    # a reply that is not JSON but names exactly one label is accepted; both labels are re-asked
    assert answer_judge.judge(Scripted("The dates match, so CORRECT"), "q", "g", "a") == "CORRECT"
    twice = Scripted("CORRECT or WRONG?", '{"label": "WRONG"}')
    assert answer_judge.judge(twice, "q", "g", "a") == "WRONG" and len(twice.requests) == 2


def test_suff_is_blinded():
    a = Scripted('{"reason": "both dates", "label": "sufficient"}')
    b = Scripted('{"reason": "both dates", "label": "sufficient"}')
    adj = Scripted('{"label": "insufficient"}')
    snippets = ["[conv-26:D1:3] " + ORDER, "D1:4: " + ARRIVAL, "answer_4be1b6b4_2: I like film cameras",
                "7f3e9a21_5 - more text", ARRIVAL]
    res = sufficiency.suff_at_set((a, b), adj, SHUTTER, "5 days", snippets)
    assert res == sufficiency.SuffResult("sufficient", ("sufficient", "sufficient"), False, ("both dates", "both dates"))
    assert adj.requests == []  # no disagreement, no adjudicator call
    prompt = a.requests[0].prompt
    assert prompt == b.requests[0].prompt
    evidence = prompt.split("Evidence snippets, in order:\n")[1].split("\n\n")[0]
    assert evidence.splitlines()[:4] == [f"[1] {ORDER}", f"[2] {ARRIVAL}", "[3] I like film cameras",
                                         "[4] more text"]
    assert "[5]" not in evidence  # the duplicate arrival snippet is dropped
    for leaked in ("conv-26", "D1:3", "D1:4", "answer_4be1b6b4", "7f3e9a21"):
        assert leaked not in prompt
    assert json.loads(a.requests[0].payload) == {
        "question": SHUTTER, "reference": "5 days",
        "evidence": [ORDER, ARRIVAL, "I like film cameras", "more text"]}
    for word in ("budget", "BFR", "method:", "gold id", "system answer:"):
        assert word not in evidence


def test_suff_disagreement_goes_to_the_adjudicator():
    a = Scripted('{"reason": "has both dates", "label": "sufficient"}')
    b = Scripted('{"reason": "arrival date unclear", "label": "uncertain"}')
    adj = Scripted('{"reason": "both dates are given", "label": "sufficient"}')
    res = sufficiency.suff_at_set((a, b), adj, SHUTTER, "5 days", [ORDER, ARRIVAL])
    assert (res.label, res.judge_labels, res.adjudicated) == ("sufficient", ("sufficient", "uncertain"), True)
    assert res.reasons == ("has both dates", "arrival date unclear", "both dates are given")
    (req,) = adj.requests
    assert req.role == "adjudicate"
    assert "Judge A: sufficient (has both dates)" in req.prompt and "Judge B: uncertain" in req.prompt
    uncertain = sufficiency.suff_at_set((Scripted('{"label": "uncertain"}'), Scripted('{"label": "Uncertain"}')),
                                   adj, SHUTTER, "5 days", [ORDER])
    assert uncertain.label == "uncertain" and uncertain.sufficient is None


def test_suff_failure_propagates_as_llm_call_failed():
    with pytest.raises(LLMCallFailed):
        sufficiency.suff_at_set((Scripted("??"), Scripted("??")), RulesLLM(), SHUTTER, "5 days", [ORDER])


def test_prompts_stay_short_for_a_small_local_model():
    suff = [prompting.fill(sufficiency.SUFF_PROMPT, procedure=how) for how in sufficiency.SUFF_PROCEDURES.values()]
    for prompt in (decomposer.DECOMPOSE_PROMPT, selector.SELECT_PROMPT, tool_chooser.TOOL_PROMPT, answerer.ANSWER_PROMPT,
                   answerer.SPAN_PROMPT, answer_judge.JUDGE_PROMPT, *suff):
        assert len(prompt.split()) < 300
        assert "{" in prompt and '"' in prompt  # one worked JSON example each


def test_evidence_reading_prompts_share_the_evidence_prefix():
    """Answer, judge A, judge B (cite) and the adjudicator open with the same evidence block, so a
    local model evaluates a set once; the dated snippets get one date header per run of dates."""
    dated = ["(05 February 2023) user: " + ORDER, "(10 February 2023) user: " + ARRIVAL,
             "(10 February 2023) assistant: Enjoy it"]
    ans, a, b, adj = Scripted('{"answer": "5 days"}'), Scripted('{"label": "sufficient"}'), \
        Scripted('{"label": "insufficient"}'), Scripted('{"label": "sufficient"}')
    answerer.answer(ans, SHUTTER, dated)
    res = sufficiency.suff_at_set((a, b), adj, SHUTTER, "5 days", dated, procedure_b="cite")
    assert res.adjudicated and res.label == "sufficient"
    block = ("Evidence snippets, in order:\n05 February 2023:\n[1] user: " + ORDER + "\n10 February 2023:\n"
             "[2] user: " + ARRIVAL + "\n[3] assistant: Enjoy it\n\n")
    prompts = [ans.requests[0].prompt, a.requests[0].prompt, b.requests[0].prompt, adj.requests[0].prompt]
    assert all(p.startswith(block) for p in prompts)
    assert a.requests[0].prompt != b.requests[0].prompt  # two procedures, so two calls, not one cached
    # the judges differ only in the last line, so the pair shares instructions, example and question too
    pa, pb = a.requests[0].prompt.splitlines(), b.requests[0].prompt.splitlines()
    assert pa[:-1] == pb[:-1] and pa[-2] == "Reference answer: 5 days"
    assert "name the snippet number" in b.requests[0].prompt and "name the snippet" not in a.requests[0].prompt
    assert "(05 February 2023)" not in prompts[0]


def test_judgment_carries_the_reason_and_only_the_rules_may_be_undecided(rules):
    got = answer_judge.judgment(rules, SHUTTER, "5 days. 6 days (including the last day) is also acceptable.",
                                "5 days")
    assert got.label == "CORRECT" and "gold" in got.reason
    assert answer_judge.judgment(rules, "What instruments does Melanie play?", "clarinet and violin",
                                 "Melanie plays the clarinet.").label == answer_judge.UNDECIDED
    scripted = Scripted('{"reason": "Close enough.", "label": "CORRECT"}')
    assert answer_judge.judgment(scripted, "q", "g", "a") == answer_judge.Judgment("CORRECT", "Close enough.")
    # a model keeps the paper's two labels: UNDECIDED is an unusable reply, re-asked once, then a failure
    undecided = Scripted('{"reason": "Not sure.", "label": "UNDECIDED"}')
    with pytest.raises(LLMCallFailed):
        answer_judge.judgment(undecided, "q", "g", "a")
    assert len(undecided.requests) == 2
