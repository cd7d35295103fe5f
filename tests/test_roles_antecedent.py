"""bfr_core.roles.antecedent: the request, the reply's parsing and the offline rules' "undecided"."""

from __future__ import annotations

import json

from bfr_core.llm.base import LLMResponse
from bfr_core.llm.rules import RulesLLM
from bfr_core.roles import antecedent as A


class _Reply:
    def __init__(self, text: str) -> None:
        self.text, self.requests = text, []

    def complete(self, request):
        self.requests.append(request)
        return LLMResponse(self.text, 1, 1)


def test_the_request_carries_the_message_for_a_model_and_for_the_rules():
    req = A.request("Well, that plan went out the window.")
    assert req.role == "antecedent" and "Well, that plan went out the window." in req.prompt
    assert json.loads(req.payload) == {"question": "Well, that plan went out the window."}
    assert json.loads(req.json_schema)["required"] == ["statement"]


def test_a_models_statement_is_one_short_message():
    model = _Reply(json.dumps({"statement": "  I   planned to run the marathon in May.  "}))
    assert A.antecedent(model, "Guess my knee had other ideas.") == "I planned to run the marathon in May."
    long = _Reply(json.dumps({"statement": " ".join(["word"] * 100)}))
    assert len(A.antecedent(long, "x").split()) == A.MAX_WORDS


def test_the_offline_rules_are_undecided():
    assert A.antecedent(RulesLLM(), "Guess my knee had other ideas.") == A.UNDECIDED == ""
