"""LongMemEval's official judge: prompt selection per question type and for abstention, the reply rule,
the offline rules' decisions, and the ``score_answers`` hook (question date to the answerer only on
LongMemEval; the ``lme_judge`` column and summary key)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bfr_core.errors import BfrError
from bfr_core.evaluation.answers import score_answers
from bfr_core.evaluation.evaluate import RunSpec, evaluate
from bfr_core.evaluation.summary import summarize
from bfr_core.llm import LLMRequest, LLMResponse, RulesLLM, rules
from bfr_core.roles import answerer, lme_judge
from bfr_core.store import Store

Q, GOLD, RESP = "How many {kites} do I own?", "3", "You own three kites."


class Scripted:
    provider, model, label = "fake", "scripted", "fake"

    def __init__(self, reply: str) -> None:
        self.reply, self.requests = reply, []

    def complete(self, request: LLMRequest) -> LLMResponse:
        self.requests.append(request)
        return LLMResponse(self.reply)


# -- prompt selection: one case per question type, and abstention ------------------------------------
@pytest.mark.parametrize(("qtype", "marker", "field"), [
    ("single-session-user", "required by the answer, answer no. \n\nQuestion", "Correct Answer"),
    ("single-session-assistant", "required by the answer, answer no. \n\nQuestion", "Correct Answer"),
    ("multi-session", "required by the answer, answer no. \n\nQuestion", "Correct Answer"),
    ("temporal-reasoning", "do not penalize off-by-one errors", "Correct Answer"),
    ("knowledge-update", "some previous information along with an updated answer", "Correct Answer"),
    ("single-session-preference", "rubric for desired personalized response", "Rubric"),
])
def test_each_question_type_gets_its_official_prompt(qtype: str, marker: str, field: str) -> None:
    p = lme_judge.prompt_for(qtype, Q, GOLD, RESP)
    assert marker in p and f"\n\n{field}: {GOLD}\n\n" in p
    assert p.startswith("I will give you a question, a ")
    assert p.endswith("Is the model response correct? Answer yes or no only.")
    assert f"Question: {Q}\n\n" in p and f"Model Response: {RESP}\n\n" in p  # braces kept as they are
    others = {k for k, v in lme_judge.PROMPTS.items() if v is lme_judge.PROMPTS[qtype]}
    assert all(marker not in lme_judge.prompt_for(t, Q, GOLD, RESP) for t in lme_judge.QUESTION_TYPES
               if t not in others)


def test_the_three_fact_types_share_one_prompt_and_temporal_extends_it() -> None:
    fact = {lme_judge.prompt_for(t, Q, GOLD, RESP) for t in ("single-session-user", "single-session-assistant",
                                                             "multi-session")}
    assert len(fact) == 1
    head, tail = fact.pop().split("\n\nQuestion: ")
    temporal = lme_judge.prompt_for("temporal-reasoning", Q, GOLD, RESP)
    assert temporal.startswith(head + "In addition, do not penalize off-by-one errors")
    assert temporal.endswith("\n\nQuestion: " + tail)


@pytest.mark.parametrize("qtype", lme_judge.QUESTION_TYPES)
def test_abstention_uses_the_abstention_prompt_whatever_the_type(qtype: str) -> None:
    p = lme_judge.prompt_for(qtype, Q, "You never mentioned kites.", RESP, abstention=True)
    assert p.startswith("I will give you an unanswerable question, an explanation")
    assert "\n\nExplanation: You never mentioned kites.\n\n" in p
    assert p.endswith("Does the model correctly identify the question as unanswerable? Answer yes or no only.")
    assert lme_judge.prompt_kind(qtype, True) == "abstention"


def test_unknown_type_is_refused_like_the_official_script() -> None:
    with pytest.raises(ValueError, match="no prompt"):
        lme_judge.prompt_for("multi-hop", Q, GOLD, RESP)


# -- reply parsing ------------------------------------------------------------------------------------
@pytest.mark.parametrize(("reply", "label"), [
    ("yes", "yes"), ("Yes.", "yes"), (" YES", "yes"), ("no", "no"), ("No, it does not.", "no"), ("", "no"),
    ("I cannot tell", "no"), ('{"label": "undecided", "reason": "x"}', "undecided"),
    ('{"label": "no", "reason": "the eyes differ"}', "no"),
])
def test_reply_counts_as_correct_when_it_contains_yes(reply: str, label: str) -> None:
    assert lme_judge.label_of(reply) == label


@pytest.mark.parametrize(("qtype", "abstention"), [(t, False) for t in lme_judge.QUESTION_TYPES]
                         + [("multi-session", True)])
def test_one_call_per_judgment_plain_text_ten_tokens(qtype: str, abstention: bool) -> None:
    llm = Scripted("Yes")
    assert lme_judge.lme_judge(llm, qtype, Q, GOLD, RESP, abstention=abstention) == "yes"
    (req,) = llm.requests
    assert req.role == "lme_judge" and not req.json_mode and req.max_tokens == 10 and req.temperature == 0
    assert req.prompt == lme_judge.prompt_for(qtype, Q, GOLD, RESP, abstention=abstention)
    assert json.loads(req.payload)["kind"] == ("abstention" if abstention else qtype)
    assert lme_judge.lme_judge(Scripted("no"), qtype, Q, GOLD, RESP, abstention=abstention) == "no"


# -- the offline rules: decide only what text rules can -------------------------------------------
@pytest.mark.parametrize(("kind", "gold", "response", "label"), [
    ("single-session-user", "Target", "You bought it at Target.", "yes"),  # normalised containment
    ("single-session-user", "Target", "You bought it at Targetville.", "undecided"),  # not a whole word
    ("multi-session", "3", "You own three kites.", "yes"),  # number equivalence
    ("multi-session", "3", "You own 4 kites.", "no"),  # one different number
    ("temporal-reasoning", "18 days", "19 days", "yes"),  # off by one tolerated
    ("temporal-reasoning", "18 days", "20 days", "no"),
    ("knowledge-update", "4", "4 now, 3 before", "yes"),
    ("single-session-assistant", "blue", "Not mentioned in the evidence.", "no"),
    ("single-session-assistant", "the blue one", "It was azure.", "undecided"),  # paraphrase: no guess
    ("single-session-preference", "likes hiking", "Try hiking trails near you", "undecided"),  # a rubric
    ("abstention", "You never said", "Not mentioned in the evidence.", "yes"),
    ("abstention", "You never said", "The information is not specified.", "yes"),
    ("abstention", "You never said", "Three kites.", "undecided"),
])
def test_rules_decide_only_what_they_can(kind: str, gold: str, response: str, label: str) -> None:
    assert rules.lme_judge(kind, gold, response)[0] == label
    qtype, abstention = ("multi-session", True) if kind == "abstention" else (kind, False)
    assert lme_judge.lme_judge(RulesLLM(), qtype, "q?", gold, response, abstention=abstention) == label


# -- the answerer's question date ----------------------------------------------------------------------
def test_question_date_is_shown_above_the_question_only_when_given() -> None:
    plain, dated = Scripted('{"answer": "3"}'), Scripted('{"answer": "3"}')
    answerer.answer(plain, Q, ["(01 May 2023) user: I own 3 kites."])
    answerer.answer(dated, Q, ["(01 May 2023) user: I own 3 kites."], question_date="30 May 2023")
    (p,), (d,) = plain.requests, dated.requests
    assert f"\n\nQuestion: {Q}\nReply with JSON only." in p.prompt and "Current date" not in p.prompt
    assert d.prompt == p.prompt.replace(f"Question: {Q}", f"Current date: 30 May 2023\nQuestion: {Q}")
    assert "question_date" not in json.loads(p.payload) and json.loads(d.payload)["question_date"] == "30 May 2023"
    # the offline rules answer with the date in the payload, as without it
    assert answerer.answer(RulesLLM(), Q, ["I own 3 kites."], question_date="30 May 2023") == \
        answerer.answer(RulesLLM(), Q, ["I own 3 kites."])


# -- the hook in score_answers -----------------------------------------------------------------------
def _lme_file(tmp_path: Path) -> Path:
    def item(qid: str, qtype: str, question: str, answer: str, text: str) -> dict:
        sid = f"answer_{qid}"
        return {"question_id": qid, "question_type": qtype, "question": question, "answer": answer,
                "question_date": "2023/05/30 (Tue) 23:40", "answer_session_ids": [sid],
                "haystack_dates": ["2023/05/21 (Sun) 10:00"], "haystack_session_ids": [sid],
                "haystack_sessions": [[{"role": "user", "content": text, "has_answer": True},
                                       {"role": "assistant", "content": "Nice."}]]}
    data = [item("q1", "single-session-user", "Where did I buy the kite?", "Target", "I bought a kite at Target."),
            item("q2", "single-session-preference", "Any hobby ideas?", "likes kites", "I love flying kites."),
            item("q3_abs", "multi-session", "Where did I buy the boat?", "never mentioned", "I like kites.")]
    p = tmp_path / "lme.json"
    p.write_text(json.dumps(data))
    return p


class Recorder(RulesLLM):
    def __init__(self) -> None:
        self.requests: list[LLMRequest] = []

    def complete(self, request: LLMRequest) -> LLMResponse:
        self.requests.append(request)
        return super().complete(request)


def test_score_answers_fills_lme_judge_by_type(tmp_path: Path) -> None:
    from bfr_core.ingest import ingest

    store = Store(str(tmp_path / "s.duckdb"))
    ingest(store, "longmemeval", _lme_file(tmp_path), name="lme", embed=False)
    run_id = evaluate(store, RunSpec("lme", ("mem0",)))
    llm = Recorder()
    assert score_answers(store, run_id, llm, lme_judge=True) == 3
    answers = [r for r in llm.requests if r.role == "answer"]
    assert answers and all("Current date: 30 May 2023\n" in r.prompt for r in answers)
    judged = {json.loads(r.payload)["kind"] for r in llm.requests if r.role == "lme_judge"}
    assert judged == {"single-session-user", "single-session-preference", "abstention"}
    arm = summarize(store, run_id)["arms"]["mem0"]
    assert "judge" not in arm and arm["lme_undecided"] >= 1  # the preference rubric is never decided
    by_type = arm["by_type"]
    assert "lme_judge" not in by_type["single-session-preference"]
    assert by_type["single-session-user"].get("lme_judge") in (0.0, 100.0)
    assert score_answers(store, run_id, llm, lme_judge=True) == 0  # resumable: nothing left to do


def test_lme_judge_refuses_other_benchmarks_question_types(tmp_path: Path) -> None:
    from bfr_core.ingest import ingest

    store = Store(str(tmp_path / "s.duckdb"))
    data = json.loads(_lme_file(tmp_path).read_text())
    data[0]["question_type"] = "multi-hop"
    p = tmp_path / "odd.json"
    p.write_text(json.dumps(data))
    ingest(store, "longmemeval", p, name="odd", embed=False)
    run_id = evaluate(store, RunSpec("odd", ("mem0",)))
    with pytest.raises(BfrError, match="multi-hop"):
        score_answers(store, run_id, RulesLLM(), lme_judge=True)
