"""Rejudging a run: the judge names, a verdict per answer with model / prompt hash / reason, the rerun
that makes no call, a failed call judged again later, the dry run's price, and the overlay's keys."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from bfr_core.cli import main
from bfr_core.errors import BfrError
from bfr_core.evaluation.answer_import import import_answers
from bfr_core.evaluation.judging import decide, judge_run, overflow, parse_judge, prompt_hash
from bfr_core.evaluation.overlay import golds_under, ingest_overlay
from bfr_core.ingest.demo import ensure_demo_store
from bfr_core.llm.base import LLMCallFailed, LLMResponse
from bfr_core.roles.answer_judge import UNDECIDED
from bfr_core.store import Store
from bfr_core.verdicts import load_verdicts


class Model:
    """A model judge that accepts an answer naming the gold's first word, counting its calls."""

    provider, model, label = "openai", "fake-judge", "openai:fake-judge"

    def __init__(self, fail_on: str = "") -> None:
        self.calls, self.fail_on, self.lock = 0, fail_on, threading.Lock()

    def complete(self, request):
        with self.lock:
            self.calls += 1
        payload = json.loads(request.payload)
        if self.fail_on and self.fail_on in payload["generated"]:
            raise LLMCallFailed("provider down")
        ok = payload["gold"].split()[0].lower() in payload["generated"].lower()
        return LLMResponse(json.dumps({"reason": "compared", "label": "CORRECT" if ok else "WRONG"}))


@pytest.fixture()
def run(tmp_path: Path) -> tuple[Path, str]:
    db = tmp_path / "demo.duckdb"
    store = ensure_demo_store(db, embed=False)
    qs = store.questions("demo")
    path = tmp_path / "a.jsonl"
    path.write_text("".join(json.dumps({"question_id": q.question_id,
                                        "answer": q.answer if i % 2 else "nothing like it"}) + "\n"
                            for i, q in enumerate(qs)))
    rep = import_answers(store, path, dataset_id="demo", name="sys")
    store.close()
    return db, rep.run_id


def test_names_and_bad_specs():
    assert parse_judge("rules").name == "rules"
    assert parse_judge("openai:gpt-4o-mini", "strict").name == "openai:gpt-4o-mini/strict"
    assert parse_judge("local", "lme").name == "local/lme"
    for bad, prompt in (("openai", "mem0"), ("gpt", "mem0"), ("rules", "generous")):
        with pytest.raises(BfrError):
            parse_judge(bad, prompt)
    assert prompt_hash(parse_judge("openai:m", "mem0"), "x") != prompt_hash(parse_judge("openai:m", "strict"), "x")


def test_model_judge_is_stored_resumed_and_free_on_rerun(run):
    db, run_id = run
    store = Store(db)
    try:
        spec = parse_judge("openai:fake-judge", "strict")
        golds = golds_under(store, run_id)
        flaky = Model(fail_on="nothing like it")
        first = judge_run(store, run_id, spec, golds, llm=flaky, workers=3)
        assert first.failed == 4 and first.judged == 3  # the failed calls store nothing
        fixed = Model()
        second = judge_run(store, run_id, spec, golds, llm=fixed, workers=3)
        assert (second.kept, second.judged, fixed.calls) == (3, 4, 4)
        again = Model()
        third = judge_run(store, run_id, spec, golds, llm=again)
        assert (third.kept, third.judged, again.calls) == (7, 0, 0)
        rows = [v for v in load_verdicts(store, run_id) if v["judge"] == spec.name]
        assert len(rows) == 7 and {v["model"] for v in rows} == {"fake-judge"}
        assert all(v["prompt"] == "strict" and len(v["prompt_hash"]) == 12 and v["reason"] for v in rows)
        dry = judge_run(store, run_id, parse_judge("openai:gpt-4o-mini"), golds, dry_run=True)
        assert dry.dry_run["calls"] == 7 and dry.dry_run["cost_usd"] > 0
        assert not [v for v in load_verdicts(store, run_id) if v["judge"].startswith("openai:gpt-4o-mini")]
    finally:
        store.close()


def test_rules_judge_under_an_overlay_judges_only_changed_golds(run, tmp_path: Path):
    db, run_id = run
    store = Store(db)
    try:
        qs = store.questions("demo")
        overlay = tmp_path / "errors.json"
        overlay.write_text(json.dumps([
            {"question_id": qs[1].question_id, "error_type": "HALLUCINATION", "correct_answer": "something else"},
            {"question_id": qs[3].question_id, "error_type": "AMBIGUOUS", "correct_answer": "Cannot be determined"},
            {"question_id": qs[5].question_id, "error_type": "WRONG_CITATION", "correct_answer": "x",
             "correct_evidence": [qs[5].gold[0]] if qs[5].gold else []}]))
        info = ingest_overlay(store, overlay, dataset_id="demo")
        assert (info["answer_changed"], info["unanswerable"]) == (2, 1)
        golds = golds_under(store, run_id, "audit")
        assert qs[3].question_id not in golds and golds[qs[1].question_id] == "something else"
        assert golds[qs[5].question_id] == qs[5].answer  # an evidence-only finding keeps the answer
        spec = parse_judge("rules")
        assert judge_run(store, run_id, spec, golds_under(store, run_id)).judged == 7
        audited = judge_run(store, run_id, spec, golds, key="audit")
        assert (audited.answers, audited.kept, audited.judged) == (6, 5, 1)
    finally:
        store.close()


def test_cli_dry_run_and_rules(run, capsys):
    db, run_id = run
    assert main(["judge", run_id, "--db", str(db), "--judge", "rules"]) == 0
    assert json.loads(capsys.readouterr().out)["judged"] == 7
    assert main(["judge", run_id, "--db", str(db), "--judge", "anthropic:claude-haiku-4", "--dry-run"]) == 0
    assert json.loads(capsys.readouterr().out)["dry_run"]["calls"] == 7
    assert main(["judge", run_id, "--db", str(db), "--judge", "rules", "--key", "nope"]) == 2
    assert "no overlay 'nope'" in capsys.readouterr().err


def test_deleting_a_run_deletes_its_verdicts(run):
    db, run_id = run
    store = Store(db)
    try:
        judge_run(store, run_id, parse_judge("rules"), golds_under(store, run_id))
        assert load_verdicts(store, run_id)
        store.delete_runs(run_id)
        assert load_verdicts(store, run_id) == []
    finally:
        store.close()


class SmallContext(Model):
    """A model judge whose context leaves 40 words (one token a word) beside its instructions."""

    def evidence_budget(self):
        return 40, lambda text: len(text.split())


def test_an_answer_too_long_for_the_judges_context_is_undecided_without_a_call(run):
    db, run_id = run
    store = Store(db)
    try:
        spec = parse_judge("openai:fake-judge", "strict")
        golds = golds_under(store, run_id)
        long_answer = " ".join(["word"] * 60)
        assert decide(spec, SmallContext(), "Which?", "a tripod", long_answer, "single-hop") == (
            UNDECIDED, "the question, gold and answer take 63 tokens, more than the 40 this judge's context leaves")
        small = SmallContext()
        rep = judge_run(store, run_id, spec, golds, llm=small, workers=1)
        assert rep.failed == 0 and rep.judged == 7 and small.calls == 7  # the demo's answers all fit
        assert overflow(Model(), long_answer * 100) is None  # an API model declares no limit
    finally:
        store.close()
