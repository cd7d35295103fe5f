"""Our arm ``conv-fusion`` (bfr_core.method.ours): score pieces, trace shape, budgets, and the shutter-release case."""

from __future__ import annotations

import gzip
import json
from dataclasses import replace
from datetime import datetime

import numpy as np
import pytest
from fakes_views import SHUTTER_ROWS, big_rows, make_views

from bfr_core import dates
from bfr_core.config import Budget, Config, RetrievalConfig
from bfr_core.fusion import zscore
from bfr_core.ingest.sources import benchmark_file
from bfr_core.method import ours, turn_scores
from bfr_core.method.budgets import budget_for
from bfr_core.pipeline import ArmContext, resolve
from bfr_core.records import Query

LME = benchmark_file("longmemeval")
STAGE_ONE = ["pool", "requirements", "context", "lattice", "prefilter", "selection", "grounding"]


def _ctx(views, budget: Budget | str = "C6", ground: int = 10) -> ArmContext:
    b = budget_for("conv-fusion", budget) if isinstance(budget, str) else budget
    cfg = Config(retrieval=RetrievalConfig(ground=ground))
    return ArmContext(views, cfg, b, budget if isinstance(budget, str) else "custom")


# -- pure pieces ----------------------------------------------------------------------------------


def test_named_speakers_first_names_nicknames_and_roles():
    assert turn_scores.named_speakers("What does Melanie do to destress?", ["Caroline", "Melanie"]) == ["Melanie"]
    assert turn_scores.named_speakers("What did Mel and her kids paint?", ["Caroline", "Melanie"]) == ["Melanie"]
    assert turn_scores.named_speakers("How do Jon and Gina destress?", ["Jon", "Gina"]) == ["Jon", "Gina"]
    assert turn_scores.named_speakers("What did I tell the assistant?", ["user", "assistant"]) == []
    assert turn_scores.named_speakers("what did mel do?", ["Melanie"]) == []  # a lower-case prefix is not a name
    # accents fold: a speaker named "José" is named by "Jose" and "José", and "Zoë" by her nickname "Zo"
    assert turn_scores.named_speakers("What did Jose cook?", ["José", "Zoë"]) == ["José"]
    assert turn_scores.named_speakers("What did José and Zoe cook?", ["Jose", "Zoë"]) == ["Jose", "Zoë"]
    assert turn_scores.named_speakers("What did Élo say?", ["Éloïse"]) == ["Éloïse"]


def test_date_windows_named_and_relative():
    day = dates.date_windows("What did John do on 7 July, 2023?", None, [2023])
    assert day == [(datetime(2023, 7, 4), datetime(2023, 7, 17))]
    month = dates.date_windows("When did Melanie go camping in June?", None, [2022, 2023])
    assert [lo for lo, _ in month] == [datetime(2022, 6, 1), datetime(2023, 6, 1)]
    assert dates.date_windows("What did I buy two weeks ago?", None, [2023]) == []  # needs the question date
    rel = dates.date_windows("What did I buy two weeks ago?", datetime(2023, 3, 15), [2023])
    lo, hi = rel[0]
    assert lo <= datetime(2023, 3, 1) <= hi


def test_in_windows_ignores_a_window_that_holds_everything():
    when = [datetime(2023, 1, 1), datetime(2023, 6, 1), None]
    w = [(datetime(2023, 5, 1), datetime(2023, 7, 1))]
    assert dates.in_windows(when, w).tolist() == [False, True, False]
    assert not dates.in_windows(when[:2], [(datetime(2022, 1, 1), datetime(2024, 1, 1))]).any()


def test_neighbour_max_stays_inside_sessions():
    s = np.array([1.0, 5.0, 2.0, 9.0])
    session = np.array([0, 0, 0, 1])
    assert turn_scores.neighbour_max(s, session, 1).tolist() == [5.0, 2.0, 5.0, 0.0]
    assert turn_scores.neighbour_max(s, session, 2).tolist() == [2.0, 0.0, 1.0, 0.0]


@pytest.mark.parametrize(("budget", "size"), [("C0", 10), ("C1", 30), ("C6", 40), ("C9", 60)])
def test_evidence_size_is_e0_plus_what_the_budget_retains(budget, size):
    """b + min(B_new, rounds * keep, calls * keep) on a scope large enough to fill it."""
    views = make_views(big_rows())
    steps = ours.conv_fusion(_ctx(views, budget), Query("q", "s", "What did Caroline say about the camera?"))
    assert len(steps[-1].evidence) == size


# -- the score ------------------------------------------------------------------------------------


def test_speaker_prior_and_context_lift_the_reply():
    rows = [("S1", "Ann", "Do you have any hobbies these days?"), ("S1", "Ben", "Pottery on weekends."),
            ("S1", "Ann", "Nice."), ("S2", "Ann", "I like hobbies too."), ("S2", "Ben", "Cool.")]
    views = make_views(rows)
    # weights of the test's own (the mechanism, not the shipped values): speaker and context on, the session
    # terms and the remark gate off (in so small a scope no BM25 score stands 3 sd out: "form|weak" reads a remark)
    turn_level = turn_scores.OursSettings(w_dense=1.0, speaker=6.0, near1=0.6, near2=0.4)
    sc = turn_scores.score_turns(views, Query("q", "s", "What hobbies does Ben have?"), turn_level)
    assert sc.named == "Ben"
    assert sc.speaker[1] > 0 and sc.speaker[0] == 0
    assert sc.context[1] > 0  # the question right before it lends it context
    assert int(turn_scores.ranking(sc.final)[0]) == 1
    plain = turn_scores.score_turns(views, Query("q", "s", "What hobbies does Ben have?"),
                                    replace(turn_level, speaker=0.0, near1=0.0, near2=0.0))
    assert int(turn_scores.ranking(plain.final)[0]) != 1


# -- the arm --------------------------------------------------------------------------------------


def test_trace_shape_budget_and_determinism():
    views = make_views(SHUTTER_ROWS)
    q = Query("q1", "s", "How many days did it take for Alice to receive the remote shutter release after she ordered it?")
    ctx = _ctx(views, "C6")
    steps = resolve("conv-fusion")(ctx, q)
    kinds = [s.kind for s in steps]
    assert kinds[:7] == STAGE_ONE and set(kinds[7:]) == {"round"}
    ev = steps[-1].evidence
    assert len(ev) == len(set(ev)) == 40
    assert steps[-1].calls <= ctx.budget.calls
    for s in steps[7:]:
        assert {"round", "actions", "retained", "counters", "budget"} <= set(s.data)
        assert all({"view", "cue", "skipped", "candidates"} <= set(a) for a in s.data["actions"])
    json.dumps([s.data for s in steps])  # the store keeps traces as JSON
    assert [s.evidence for s in resolve("bfr")(ctx, q)] == [s.evidence for s in steps]  # the alias, the same arm


@pytest.mark.parametrize(("budget", "ground", "size"), [("C0", 5, 5), ("C0", 10, 10),
                                                        (Budget(1, 1, 10, 10), 10, 20), ("C1", 10, 30)])
def test_set_size_is_configurable(budget, ground, size):
    views = make_views(SHUTTER_ROWS)
    steps = ours.conv_fusion(_ctx(views, budget, ground), Query("q", "s", "remote shutter release"))
    assert len(steps[-1].evidence) == size


def test_shutter_endpoints_both_retrieved_on_the_fake():
    views = make_views(SHUTTER_ROWS)
    q = Query("q1", "s", "How many days did it take for me to receive the new remote shutter release after I ordered it?")
    ev = ours.conv_fusion(_ctx(views, "C6"), q)[-1].evidence
    assert {"S1:3", "S3:2"} <= set(ev)


def test_tiny_scope_does_not_break():
    views = make_views([("S1", "Ann", "hello"), ("S1", "Ben", "hi there")])
    steps = ours.conv_fusion(_ctx(views, "C6"), Query("q", "s", "Who said hello?"))
    assert sorted(steps[-1].evidence) == ["S1:1", "S1:2"]


# -- the real dev50 case (skipped without the shared data) -----------------------------------------


@pytest.mark.slow
@pytest.mark.skipif(not LME.exists(), reason="LongMemEval dev50 sample not available")
def test_b3c15d39_shutter_release_both_gold_turns():
    from bfr_core.ingest.longmemeval import load_longmemeval
    from bfr_core.retrieval.encoders import get_model
    from bfr_core.retrieval.scope import build_views

    with gzip.open(LME, "rt", encoding="utf-8") as fh:  # fail early and clearly on a broken file
        assert any(e["question_id"] == "b3c15d39" for e in json.load(fh))
    bundle = load_longmemeval(LME)
    scope = next(s for s in bundle.scopes if s.scope_id == "b3c15d39")
    q = next(x for x in bundle.questions if x.question_id == "b3c15d39")
    by_session: dict[str, list] = {}
    for t in bundle.turns:
        by_session.setdefault(t.session_id, []).append(t)
    dates = dict(zip(scope.session_ids, scope.session_dates or [None] * len(scope.session_ids), strict=True))
    turns = [replace(t, date=dates.get(t.session_id) or t.date) for s in scope.session_ids for t in by_session[s]]
    model = get_model()
    views = build_views(scope, turns, model.encode([t.text for t in turns]), model)
    ev = ours.conv_fusion(_ctx(views, "C6"), q.query())[-1].evidence
    assert len(ev) <= 40
    assert {"answer_05d808e6_1_11", "answer_05d808e6_2_1"} <= set(ev)


# -- issue 16: session relevance, stating role, recency --------------------------------------------


WEDDING_ROWS = [
    ("S1", "Ann", "My sister's wedding was on Saturday."),
    ("S1", "Ann", "The wedding ceremony by the lake was lovely."),
    ("S1", "Ben", "What did you wear to the ceremony?"),
    ("S1", "Ann", "A blue dress I bought last spring."),
    ("S2", "Ann", "Work was busy, nothing else."),
    ("S2", "Ben", "The dress code at work says dress shirts; a dress shirt every dress day."),
] + [("S3", "Ben" if i % 2 else "Ann", f"Filler chat number {i} about weather and coffee.") for i in range(12)]


def test_session_relevance_lifts_the_answer_in_the_relevant_session():
    views = make_views(WEDDING_ROWS)
    q = Query("q", "s", "What dress did I wear to my sister's wedding?")
    plain = turn_scores.OursSettings()  # the z-fusion start: no session term
    with_session = replace(plain, session=1.5)
    answer, lone = 3, 5  # the blue dress (session about the wedding) vs the dress-code turn
    a = turn_scores.score_turns(views, q, plain)
    assert a.final[lone] > a.final[answer]  # alone, the lexical match elsewhere wins
    b = turn_scores.score_turns(views, q, with_session)
    assert b.session is not None and b.session[answer] > b.session[lone]
    assert b.final[answer] > b.final[lone]
    assert "session" in b.parts(answer)


def test_stating_role_is_observed_from_turn_lengths():
    long = " ".join(["word"] * 60)
    rows = [("S1", "user", "I adopted a cat."), ("S1", "assistant", long)] * 3
    assert turn_scores.stating_role(make_views(rows).turns, 3.0) == "user"
    assert turn_scores.stating_role(make_views(WEDDING_ROWS).turns, 3.0) == ""  # two friends: no role prior


def test_stating_role_needs_paragraphs_not_only_a_ratio():
    """A terse friend beside a chatty one (4x longer, but sentences) is no user beside an assistant."""
    chatty = "we drove up to the lake on Saturday and the water was still far too cold"  # 16 words
    rows = [("S1", "Ana", chatty), ("S1", "Ben", "ok cool")] * 4
    assert turn_scores.stating_role(make_views(rows).turns) == ""
    assert turn_scores.stating_role(make_views(rows).turns, words=10) == "Ben"  # the ratio alone would fire
    long = " ".join(["word"] * turn_scores.ROLE_WORDS)
    rows = [("S1", "user", "I adopted a cat."), ("S1", "assistant", long)] * 3
    assert turn_scores.stating_role(make_views(rows).turns) == "user"  # a paragraph answer: it fires


def test_default_role_prior_lifts_the_user_turns_only_where_roles_are_asymmetric():
    long = " ".join(["word"] * 60)
    rows = [("S1", "user", "I adopted a cat named Luna."), ("S1", "assistant", f"Cats {long}")] * 3
    q = Query("q", "s", "What is my cat called?")
    sc = turn_scores.score_turns(make_views(rows), q, replace(turn_scores.DEFAULT, remark="off"))  # words regime
    assert turn_scores.DEFAULT.role > 0 and sc.role is not None
    assert set(sc.role[0::2]) == {turn_scores.DEFAULT.role} and set(sc.role[1::2]) == {0.0}
    assert "role" in sc.parts(0)
    friends = turn_scores.score_turns(make_views(WEDDING_ROWS), q)
    assert friends.role is not None and not friends.role.any()  # two friends: nothing to observe


def test_session_relevance_reads_the_mean_of_the_sessions_best_turns():
    s = np.array([5.0, 1.0, 3.0, 4.0, 4.0])
    session = np.array([0, 0, 0, 1, 1])
    assert turn_scores.session_max(s, session, 1).tolist() == [5.0, 5.0, 5.0, 4.0, 4.0]
    # one strong turn (session 0) against a session that keeps returning to the subject (session 1)
    assert turn_scores.session_max(s, session, 2).tolist() == [4.0, 4.0, 4.0, 4.0, 4.0]
    assert turn_scores.session_max(s, session, 3).tolist() == [3.0, 3.0, 3.0, 4.0, 4.0]  # a session's own size caps it


def test_pool_step_shows_session_score_beside_own_score():
    views = make_views(WEDDING_ROWS)
    steps = ours.conv_fusion(_ctx(views, "C6"), Query("q", "s", "What dress did I wear to my sister's wedding?"))
    cands = steps[0].data["candidates"]
    assert all({"text", "session", "context"} <= set(c) for c in cands)


def test_shipped_settings_are_read_from_the_ours_table(tmp_path):
    assert turn_scores.load_settings(turn_scores.SETTINGS_FILE) == turn_scores.DEFAULT
    assert turn_scores.OursSettings() != turn_scores.DEFAULT  # the file sets what the z-fusion start leaves off
    p = tmp_path / "o.toml"
    p.write_text("[ours]\nspeaker = 2.0\n", encoding="utf-8")
    assert turn_scores.load_settings(p) == replace(turn_scores.OursSettings(), speaker=2.0)
    p.write_text("[ours]\nrequest_topic = 6.0\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"o\.toml: unknown key\(s\) in \[ours\]: request_topic"):
        turn_scores.load_settings(p)
    # the settings that left OursSettings at issue 25 (bfr_core/method/variants.py) are unknown keys now
    p.write_text("[ours]\nspeaker = 2.0\nrecency = 0.3\ndense_view = true\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"o\.toml: unknown key\(s\) in \[ours\]: dense_view, recency$"):
        turn_scores.load_settings(p)
    p.write_text("[retrieval]\nk = 3\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"no \[ours\] table"):
        turn_scores.load_settings(p)


def test_remark_regime_is_recorded_in_the_pool_trace_and_lets_dense_lead():
    views = make_views(SHUTTER_ROWS)
    remark = Query("q", "s", "Alice finally got the shutter thing working after the wait.")
    gated = replace(turn_scores.DEFAULT, remark="form", remark_shift=1.0)
    pool = ours.run(_ctx(views, "C6"), remark, gated)[0].data
    assert pool["regime"] == "remark"
    assert pool["signals"]["form"] == "remark" and set(pool["signals"]) == {"form", "bm25_top_z", "term_share",
                                                                             "agreement"}
    sc = turn_scores.score_turns(views, remark, gated)
    dense = np.asarray(views.dense.scores(remark.text), dtype=np.float64)
    assert turn_scores.ranking(sc.final).tolist() == turn_scores.ranking(dense).tolist()  # shift 1.0: dense alone
    assert sc.remark is not None and "remark" in sc.parts(0)
    asked = Query("q", "s", "When did the remote shutter release arrive?")
    assert ours.run(_ctx(views, "C6"), asked, gated)[0].data["regime"] == "words"
    off = ours.run(_ctx(views, "C6"), remark, replace(gated, remark="off"))[0].data
    assert off["regime"] == "words" and off["signals"]["form"] == "remark"  # observed even when the gate is off


def test_the_remark_regime_can_score_a_remarks_clauses_apart_and_says_so_in_the_trace():
    views = make_views(SHUTTER_ROWS)
    remark = Query("q", "s", "Alice finally got the shutter thing working after the wait, and now the photos look sharp.")
    parts = turn_scores.score_parts(views, remark)
    assert parts.clauses == ("Alice finally got the shutter thing working after the wait", "now the photos look sharp")
    per = np.stack([zscore(np.asarray(views.dense.scores(c), dtype=np.float64)) for c in parts.clauses])
    np.testing.assert_allclose(parts.clause_dense, per)
    for mode, expect in (("mean", per.mean(axis=0)), ("max", per.max(axis=0)), ("off", parts.dense)):
        gated = replace(turn_scores.DEFAULT, remark="form", remark_shift=1.0, remark_clauses=mode)
        sc = turn_scores.combine(parts, gated)
        assert turn_scores.ranking(sc.final).tolist() == turn_scores.ranking(expect).tolist(), mode
        pool = ours.run(_ctx(views, "C6"), remark, gated)[0].data
        assert pool["clauses"] == (None if mode == "off" else {"mode": mode, "texts": list(parts.clauses)})
    # the words regime never reads the clauses; a remark that does not split is scored whole
    words = replace(turn_scores.DEFAULT, remark="off", remark_clauses="mean")
    assert turn_scores.combine(parts, words).clauses is None
    whole = Query("q", "s", "Alice finally got the shutter thing working after the wait.")
    one = turn_scores.score_parts(views, whole)
    assert one.clauses == () and one.clause_dense is None
    sc = turn_scores.combine(one, replace(words, remark="form"))
    assert sc.clauses is None and turn_scores.ranking(sc.final).tolist() == turn_scores.ranking(one.dense).tolist()
    with pytest.raises(ValueError, match="remark_clauses must be one of off, mean, max"):
        turn_scores.combine(parts, replace(words, remark_clauses="min"))


class _Model:
    """A model stand-in for the associative step: replies to the antecedent role with ``statement``."""

    label = "fake:model"

    def __init__(self, statement: str | None) -> None:
        self.statement, self.asked = statement, []

    def complete(self, request):
        from bfr_core.llm.base import LLMCallFailed, LLMResponse

        self.asked.append(request.role)
        if self.statement is None:
            raise LLMCallFailed("fake outage")
        return LLMResponse(json.dumps({"statement": self.statement}), 1, 1)


def test_the_associative_step_searches_with_the_antecedent_only_in_the_remark_regime():
    views = make_views(SHUTTER_ROWS)
    remark = Query("q", "s", "Alice finally got the shutter thing working after the wait.")
    gated = replace(turn_scores.DEFAULT, remark="form", remark_shift=1.0)
    statement = "I ordered a remote shutter release for my camera."
    model = _Model(statement)
    ctx = replace(_ctx(views, "C6"), llm=model)
    pool = ours.run(ctx, remark, gated)[0].data
    assert model.asked.count("antecedent") == 1  # (Stage I asks the model to decompose too)
    assert pool["antecedent"] == {"source": "fake:model", "statement": statement}
    parts = turn_scores.score_parts(views, remark)
    other = np.asarray(views.dense.scores(statement), dtype=np.float64)
    mixed = (zscore(parts.dense) + zscore(other)) / 2
    expect = [views.turns[int(i)].turn_id for i in turn_scores.ranking(mixed)[:5]]  # shift 1.0: the mixed dense alone
    assert [c["turn_id"] for c in pool["candidates"][:5]] == expect
    assert expect != [views.turns[int(i)].turn_id for i in turn_scores.ranking(parts.dense)[:5]]  # it moved something
    # no model, the words regime, an undecided or failed reply: the question's own ranking, recorded for the trace
    plain = ours.run(_ctx(views, "C6"), remark, gated)[0].data
    assert plain["antecedent"] is None
    asked = Query("q", "s", "When did the remote shutter release arrive?")
    words = _Model(statement)
    assert ours.run(replace(ctx, llm=words), asked, gated)[0].data["antecedent"] is None
    assert "antecedent" not in words.asked
    from bfr_core.llm.rules import RulesLLM

    undecided = ours.run(replace(ctx, llm=RulesLLM()), remark, gated)[0].data
    assert undecided["antecedent"]["statement"] == "" and "undecided" in undecided["antecedent"]["source"]
    assert undecided["candidates"] == plain["candidates"]
    failed = ours.run(replace(ctx, llm=_Model(None)), remark, gated)[0].data
    assert "call failed" in failed["antecedent"]["source"] and failed["candidates"] == plain["candidates"]
