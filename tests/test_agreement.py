"""evaluation.agreement: reading the LLM judges' labels (the agreement figures are tested with a
store in tests/test_labels.py, beside the labels they compare)."""

from __future__ import annotations

import pytest

from bfr_core.evaluation import agreement as AG


@pytest.mark.parametrize("detail, final, expected", [
    ({"judge_labels": ["sufficient", "insufficient"], "adjudicated": True, "reasons": ["a", "b", "c"],
      "judges": ["offline rules", "offline rules", "anthropic:x"]}, "insufficient",
     {"judge A (offline rules)": "sufficient", "judge B (offline rules)": "insufficient",
      "adjudicator (anthropic:x)": "insufficient", "final": "insufficient"}),
    ({"label": "sufficient", "judge_labels": ["sufficient", "insufficient"], "adjudicated": True}, None,
     {"judge A": "sufficient", "judge B": "insufficient", "adjudicator": "sufficient", "final": "sufficient"}),
    ('{"judges": [{"name": "gpt", "label": "Sufficient"}, {"model": "claude", "label": "insufficient"}]}',
     "insufficient", {"gpt": "sufficient", "claude": "insufficient", "final": "insufficient"}),
    ({"judges": {"a": {"label": "uncertain"}, "b": "sufficient"}}, None, {"a": "uncertain", "b": "sufficient"}),
    ("not json", "sufficient", {"final": "sufficient"}),
    (None, None, {}),
])
def test_parse_suff_detail(detail, final, expected):
    assert AG.parse_suff_detail(detail, final) == expected
