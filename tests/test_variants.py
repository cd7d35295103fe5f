"""bfr_core/method/variants.py: the variants bfr's shipped setting leaves off. With every extra off a variant
scores exactly as ``turn_scores`` does; each extra computes what it did inside bfr_core before issue 25."""

from __future__ import annotations

from dataclasses import replace
from types import SimpleNamespace

import numpy as np
import pytest
from fakes_views import SHUTTER_ROWS, big_rows, make_views

from bfr_core.config import Config, RetrievalConfig
from bfr_core.fusion import rank_fusion, zscore
from bfr_core.method import ours, turn_scores
from bfr_core.method import variants as V
from bfr_core.method.budgets import budget_for
from bfr_core.pipeline import ArmContext
from bfr_core.records import Query

QUESTIONS = ["What did Caroline say about the camera?", "When did the remote shutter release arrive?",
             "Alice finally got the shutter thing working after the wait.", "Tell me about the lake."]
SETTINGS = [turn_scores.DEFAULT, turn_scores.OursSettings(),
            replace(turn_scores.DEFAULT, session_top=2, remark="form|disagree", remark_shift=0.75),
            replace(turn_scores.DEFAULT, w_dense=0.0, near1=0.0, remark="form|weak", remark_shift=0.5)]


def _ctx(views, budget: str = "C6") -> ArmContext:
    return ArmContext(views, Config(retrieval=RetrievalConfig(ground=10)), budget_for("conv-fusion", budget), budget)


@pytest.mark.parametrize("rows", [big_rows(), SHUTTER_ROWS], ids=["three-friends", "shutter"])
def test_a_variant_with_every_extra_off_scores_as_bfr_bit_for_bit(rows):
    views = make_views(rows)
    for text in QUESTIONS:
        q = Query("q", "s", text)
        for s in SETTINGS:
            assert np.array_equal(V.score_variant(views, q, V.Variant(s)).final, turn_scores.score_turns(views, q, s).final)


def test_variant_parts_computes_only_what_the_variants_read():
    views = make_views(SHUTTER_ROWS)
    q = Query("q", "s", QUESTIONS[1])
    off = replace(turn_scores.DEFAULT, head_model="")
    bare = V.variant_parts(views, q, **V.needs([V.Variant(off)]))
    assert list(bare.bm25) == ["stemmed"] and bare.bm25["stemmed"] is bare.core.bm25
    assert bare.dense_static is None and bare.recency is None and bare.doc_bm25 is None
    assert not bare.doc_dense and not bare.dense_prf
    wide = V.needs([V.Variant(off, bm25="plain"), V.Variant(off, doc_dense=1.0, doc_view="short"),
                    V.Variant(off, recency=0.3), V.Variant(off, dense_view=False), V.Variant(off, doc_bm25=0.5)])
    assert wide == {"indexes": ("plain", "stemmed"), "doc_views": ("short",), "prfs": (), "static": True,
                    "recency": True, "doc_bm25": True}
    # a head model reads every index and session view its features name (head_model.PARTS)
    assert V.needs([V.Variant(replace(off, head_model="m.json"))]) == {
        "indexes": ("stemmed", "plain", "stemmed+speaker"), "doc_views": ("static", "short"), "prfs": (),
        "static": True, "recency": True, "doc_bm25": True}
    core = turn_scores.score_parts(views, q)
    assert V.variant_parts(views, q, core=core).core is core
    with pytest.raises(ValueError, match="bm25 must be one of"):
        V.variant_parts(views, q, indexes=("bm25s",))


def test_text_variants_rrf_static_dense_and_no_bm25():
    views = make_views(SHUTTER_ROWS)
    q = Query("q", "s", QUESTIONS[1])
    start = turn_scores.OursSettings()
    vp = V.variant_parts(views, q, indexes=("stemmed", "plain"), static=True)
    static = np.asarray(views.turn_vectors @ views.encode([q.text])[0], dtype=np.float64)
    assert np.array_equal(vp.dense_static, static)
    z = V.text_score(vp, V.Variant(start, dense_view=False))
    assert np.allclose(z, zscore(vp.core.bm25) + zscore(static))
    rrf = V.text_score(vp, V.Variant(start, bm25="plain", fusion="rrf"))
    assert np.allclose(rrf, rank_fusion([vp.bm25["plain"], vp.core.dense], [1.0, 1.0]))
    dense_only = V.combine(vp, V.Variant(start, w_bm25=0.0))  # the dense reference of the selection bench
    assert turn_scores.ranking(dense_only.final).tolist() == turn_scores.ranking(vp.core.dense).tolist()
    with pytest.raises(ValueError, match="fusion"):
        V.text_score(vp, V.Variant(fusion="max"))


def test_without_the_cover_e0_is_the_set_order():
    """No cover: E0 is the set order's first b turns, which with every set weight 0 is the score order."""
    views = make_views(big_rows())
    q = Query("q", "s", QUESTIONS[0])
    sc = turn_scores.score_turns(views, q)
    plain = turn_scores.DEFAULT.ranking_only()
    for settings, order in ((plain, turn_scores.ranking(sc.final)[:10]),
                            (turn_scores.DEFAULT, ours.initial_evidence(_ctx(views), q, sc, False)[2][:10])):
        steps = ours.run_variant(_ctx(views), q, V.Variant(settings, cover=False))
        grounding = next(s for s in steps if s.kind == "grounding")
        assert grounding.data["cover"] == [] and grounding.data["e0"] == [views.turns[int(i)].turn_id for i in order]
    assert "selection" not in [s.kind for s in steps]
    assert "selection" in [s.kind for s in ours.run_variant(_ctx(views), q, V.Variant())]


# -- the session terms (recency, session BM25, session topic) and Rocchio feedback -----------------------------

WEDDING_ROWS = [("S1", "Ann", "My sister's wedding was on Saturday."), ("S2", "Ann", "Work was busy, nothing else.")] + [
    ("S3", "Ben" if i % 2 else "Ann", f"Filler chat number {i} about weather and coffee.") for i in range(4)]

# A recommendation question whose words spread over one session's turns (no single turn holds
# them all), against a session with one turn that repeats one of them.
TOPIC_ROWS = [
    ("S1", "user", "I'm planning a trip to Kyoto next spring."),
    ("S1", "user", "I love quiet temples and gardens."),
    ("S1", "user", "Traditional ryokan stays appeal to me."),
    ("S1", "user", "My budget for hotels is moderate."),
    ("S2", "user", "The hotel hotel hotel lobby at work got repainted."),
    ("S2", "user", "Lunch was fine."),
] + [("S3", "user", f"Filler chat number {i} about weather and coffee.") for i in range(12)]
TOPIC_Q = Query("q", "s", "Can you recommend a hotel for my Kyoto trip with temples and gardens?")


def test_session_recency_ranks_sessions_by_date():
    views = make_views(WEDDING_ROWS)
    rec = V.session_recency(views.turns, turn_scores.score_parts(views, TOPIC_Q).session)
    assert rec[0] == 0.0 and rec[1] == 0.5 and rec[-1] == 1.0


def test_session_docs_join_each_sessions_turns_in_scope_order():
    views = make_views(TOPIC_ROWS)
    docs = V.session_docs(views.turns)
    assert [d.session_id for d in docs] == ["S1", "S2", "S3"]
    assert docs[0].text.split("\n") == [t for s, _, t in TOPIC_ROWS if s == "S1"]
    assert docs[0].turn_id == views.turns[0].turn_id


def test_session_mean_cosine_is_the_normalised_mean_per_session():
    vecs = np.array([[1.0, 0.0], [0.0, 1.0], [0.0, 1.0]])
    cos = V.session_mean_cosine(vecs, np.array([1.0, 0.0]), np.array([0, 0, 1]))
    assert np.allclose(cos, [np.sqrt(0.5), 0.0])


class _ShortModel:
    """An ad-hoc embedder (outside the registry, so no shared cache): every query points along axis 0."""

    model_id, dim = "test-short", 2

    def encode(self, texts):
        return np.tile(np.array([1.0, 0.0], np.float32), (len(texts), 1))


def _topic_views(short):
    base = np.array([[0.0, 1.0], [0.0, 1.0], [1.0, 0.0]])  # the base model puts session 1 on the query's axis
    mask = np.linalg.norm(short, axis=1) > 0 if short is not None else np.zeros(3, bool)
    dense = SimpleNamespace(short_vectors=short, short_mask=mask, short_model=_ShortModel() if short is not None else None)
    return SimpleNamespace(dense=dense, turn_vectors=base, encode=lambda texts: np.array([[1.0, 0.0]] * len(texts)))


def test_session_topic_reads_minilm_vectors_when_asked_and_the_base_ones_otherwise():
    session = np.array([0, 0, 1])
    # MiniLM: session 0 on the query's axis; its second turn is over the token cap (a zero row) and drops out
    short = np.array([[1.0, 0.0], [0.0, 0.0], [0.0, 1.0]])
    assert np.allclose(V.session_topic(_topic_views(short), "q", session, "short"), [1.0, 1.0, 0.0])
    assert np.allclose(V.session_topic(_topic_views(short), "q", session, "static"), [0.0, 0.0, 1.0])
    # a scope without MiniLM vectors falls back to the base ones
    assert np.allclose(V.session_topic(_topic_views(None), "q", session, "short"), [0.0, 0.0, 1.0])
    with pytest.raises(ValueError, match="doc_view"):
        V.session_topic(_topic_views(short), "q", session, "minilm")


def test_session_document_terms_are_added_after_the_context():
    views = make_views(TOPIC_ROWS)
    words = replace(turn_scores.DEFAULT, remark="off")  # the words regime: the toy's flat BM25 reads as weak words
    d = V.Variant(words, doc_dense=0.5, doc_bm25=0.5)
    vp = V.variant_parts(views, TOPIC_Q, **V.needs([d]))
    codes = vp.core.session
    cos = V.session_mean_cosine(views.turn_vectors, views.encode([TOPIC_Q.text])[0], codes)[codes]
    doc_bm = V.session_bm25(views).scores(TOPIC_Q.text)[codes]
    want = (turn_scores.score_turns(views, TOPIC_Q, words).final + 0.5 * zscore(doc_bm)
            + 0.5 * zscore(cos))
    assert np.allclose(V.combine(vp, d).final, want)


def test_session_bm25_lifts_the_session_whose_topic_matches():
    views = make_views(TOPIC_ROWS)
    base = replace(turn_scores.DEFAULT, session=0.0, near1=0.0, near2=0.0, w_dense=0.0, remark="off")
    kyoto, lobby = 3, 4  # the budget turn of the Kyoto-trip session vs the hotel-hotel-hotel turn
    a = V.score_variant(views, TOPIC_Q, V.Variant(base))
    assert a.final[lobby] > a.final[kyoto]  # turn by turn, the repeated term wins
    b = V.score_variant(views, TOPIC_Q, V.Variant(base, doc_bm25=1.0))
    assert b.final[kyoto] > b.final[lobby]


def test_rocchio_moves_the_query_toward_its_feedback_turns():
    vecs = np.array([[1.0, 0.0], [0.0, 1.0], [0.0, 0.0]])
    q = np.array([2.0, 0.0])
    moved = V.rocchio_vector(vecs, q, np.array([1, 2]), beta=0.75)  # the zero row is ignored
    assert np.allclose(moved, [1.0, 0.75])
    assert np.allclose(V.rocchio_vector(vecs, q, np.array([2])), [1.0, 0.0])  # no feedback: the unit query
