"""Model faults: answer-level scoring over a small run while the wire server misbehaves.

``score_answers`` (answerer + judge) runs over an offline ``mem0`` run of the demo through the real
Anthropic / OpenAI SDKs against ``tests/llm_wire_server.py``, which injects 429s, 500s, a reply held
past the client timeout, a body that is not JSON, a truncated body, and a model whose reply for one
question is unusable text. Asserted: retries happen; a question that still fails is recorded with
its reason in ``results.error`` and the run finishes; a rerun once the faults stop fills exactly
the gaps (rows already scored are not asked again); ``llm_cache`` never holds a failed or unusable
reply, and every cached reply parses.

Not covered: faults during retrieval-time LLM roles (requirements), concurrent scoring threads.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from llm_wire_server import WireServer

from bfr_core.config import LLMConfig
from bfr_core.evaluation.answers import score_answers
from bfr_core.evaluation.evaluate import RunSpec, evaluate
from bfr_core.llm import make_llm
from bfr_core.llm.retry import RetryPolicy, repair_json

KEYS = {"ANTHROPIC_API_KEY": "sk-ant-test-faults-0000000000", "OPENAI_API_KEY": "sk-test-faults-1111111111"}
GARBAGE = "Sorry, {I can only answer in prose today"  # not JSON, and not a plain-text answer either
FAULTS = ["429", "500", "malformed", "truncated", "delay", "500", "500", "500", "429", "truncated"]
STATS: dict[str, int] = {"faults_injected": 0, "unusable_replies": 0, "rows": 0, "rows_lost": 0}


@pytest.fixture(params=["anthropic", "openai"])
def provider(request):
    return request.param


@pytest.fixture
def run(tmp_path):
    from bfr_core.ingest.demo import ensure_demo_store

    store = ensure_demo_store(tmp_path / "faults.duckdb", embed=False)
    run_id = evaluate(store, RunSpec("demo", ("mem0",)))
    yield store, run_id
    store.close()


def test_faults_are_retried_recorded_and_resumed(run, provider):
    store, run_id = run
    target = store.questions("demo", scoreable_only=True)[-1]
    state = {"healthy": False}

    def reply(body: dict) -> str:
        text = json.dumps(body.get("messages", []))
        if not state["healthy"] and target.text in text:
            STATS["unusable_replies"] += 1
            return GARBAGE  # the model answers this question unusably (first ask and the re-ask)
        return '{"answer": "11 days", "label": "CORRECT"}'

    server = WireServer(reply=reply).start()
    try:
        url = server.anthropic_url if provider == "anthropic" else server.openai_url
        cfg = LLMConfig(provider=provider, model="wire-model", base_url=url, timeout_s=1.0, max_retries=2)
        waits: list[float] = []
        llm = make_llm(cfg, store, run_id=run_id, env=KEYS, secrets_path="/nonexistent",
                       policy=RetryPolicy(max_retries=2), sleep=waits.append)
        server.fail_next(*FAULTS)
        STATS["faults_injected"] += len(FAULTS)
        n_rows = score_answers(store, run_id, llm, answer=True, judge=True)
        assert n_rows == 6
        rows = store.cursor().execute(
            "SELECT question_id, answer, judge, error FROM results WHERE run_id = ? ORDER BY question_id",
            [run_id]).fetchall()
        failed = [r for r in rows if r[3] is not None]
        assert waits, "no retry happened"
        assert not server.faults, "every queued fault was served"
        assert failed, "some question should have failed for good"
        assert all(r[3].startswith("llm: ") and len(r[3]) > 6 for r in failed)
        assert target.question_id in {r[0] for r in failed}
        assert all("unusable reply" in r[3] for r in failed if r[0] == target.question_id)
        assert all(r[1] == "11 days" and r[2] == "CORRECT" for r in rows if r[3] is None)
        for r in failed:
            assert KEYS["OPENAI_API_KEY"] not in r[3] and KEYS["ANTHROPIC_API_KEY"] not in r[3]
        check_cache(store)

        # the faults stop: a rerun fills exactly the gaps
        state["healthy"] = True
        asked_before = len(server.seen)
        ok_before = {r[0]: r[1:3] for r in rows if r[3] is None}
        assert score_answers(store, run_id, llm, answer=True, judge=True) == len(failed)
        rows = store.cursor().execute(
            "SELECT question_id, answer, judge, error FROM results WHERE run_id = ? ORDER BY question_id",
            [run_id]).fetchall()
        assert all(r[3] is None and r[1] == "11 days" and r[2] == "CORRECT" for r in rows), rows
        assert {r[0]: r[1:3] for r in rows if r[0] in ok_before} == ok_before
        asked = [json.dumps(s.body.get("messages", [])) for s in server.seen[asked_before:]]
        failed_texts = [store.question("demo", r[0]).text for r in failed]
        assert asked and all(any(t in a for t in failed_texts) for a in asked)  # only the gaps were asked
        check_cache(store)
        # a third pass is free: nothing left to do, no provider call
        n_seen = len(server.seen)
        assert score_answers(store, run_id, llm, answer=True, judge=True) == 0
        assert len(server.seen) == n_seen
        STATS["rows"] += len(rows)
        STATS["rows_lost"] += sum(1 for r in rows if r[1] is None)
    finally:
        server.stop()


def check_cache(store) -> None:
    cached = store.cursor().execute("SELECT response FROM llm_cache").fetchall()
    assert cached
    for (text,) in cached:
        assert GARBAGE not in text and "<html>" not in text and "injected" not in text
        assert isinstance(repair_json(text), dict)
        assert json.loads(text)


@pytest.fixture(scope="module", autouse=True)
def _stats():
    yield
    if out := os.environ.get("BFR_RELIABILITY_STATS"):
        Path(out).write_text(json.dumps({"model_faults": STATS}), encoding="utf-8")


class _DownLLM:
    """A provider every call of which fails for good (an unreachable or misconfigured server); with
    ``every`` > 0, every ``every``-th call instead answers as the offline rules do."""

    provider, model, label = "openai", "down-model", "openai:down-model"

    def __init__(self, every: int = 0) -> None:
        self.every = every
        self.calls = 0

    def complete(self, request):  # noqa: ANN001, ANN201 - LLMRequest -> LLMResponse
        from bfr_core.llm.base import LLMCallFailed
        from bfr_core.llm.rules import RulesLLM

        self.calls += 1
        if self.every and self.calls % self.every == 0:
            return RulesLLM().complete(request)
        raise LLMCallFailed("connection refused (127.0.0.1:9)", attempts=3)


def test_a_run_whose_every_model_call_failed_is_stored_failed_and_left_unfinished(tmp_path):
    from bfr_core.evaluation.evaluate import ModelCallsFailed, bind_data
    from bfr_core.ingest.demo import ensure_demo_store
    from bfr_core.runs import load_results

    store = ensure_demo_store(tmp_path / "down.duckdb", embed=False)
    try:
        llm = _DownLLM()
        spec = bind_data(store, RunSpec("demo", ("bfr-text", "mem0"), "", 10, "openai:down-model", 3))
        with pytest.raises(ModelCallsFailed, match=r"all \d+ model call\(s\) failed .*connection refused.*unfinished"):
            evaluate(store, spec, llm=llm)
        assert llm.calls > 0
        rows = load_results(store, spec.run_id)
        finished = store.cursor().execute("SELECT finished FROM runs WHERE run_id = ?", [spec.run_id]).fetchone()[0]
        flaky = _DownLLM(every=2)  # some calls answer: the run finishes; a row with an answered call is kept
        other = evaluate(store, RunSpec("demo", ("bfr-text",), "", 10, "openai:flaky", 3), llm=flaky)
        kept = load_results(store, other)
        done = store.cursor().execute("SELECT finished FROM runs WHERE run_id = ?", [other]).fetchone()[0]
    finally:
        store.close()
    by_arm = {a: [r for r in rows if r["arm"] == a] for a in ("bfr-text", "mem0")}
    assert len(by_arm["bfr-text"]) == 3 and all(r["status"] == "failed" and r["error"].startswith("llm: all ")
                                                for r in by_arm["bfr-text"])
    assert all(r["status"] == "ok" for r in by_arm["mem0"])  # an arm that calls no model is kept as it ran
    assert finished is None
    assert done is not None and any(r["status"] == "ok" for r in kept)
