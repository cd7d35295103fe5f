"""A guard against leaks: no arm may read a label hidden in an id, the dataset's name or the store.

LongMemEval names gold sessions ``answer_*`` and marks abstention questions with ``_abs``; the
dataset id is the benchmark's name. For every arm of ``pipeline.ARMS`` (offline rules path), the
same scopes and questions under opaque ids (every session, turn, question and scope id and the
dataset id renamed, in an order unrelated to the original ids) must give the same evidence in the
same order at every step, mapped back. A tie-break by ``sorted(ids)`` anywhere would fail it. And
what ``run_query`` hands an arm (``ArmContext``) must hold no ``Store`` and no string equal to the
dataset id, however deep in its views.

Real views (``retrieval.scope.build_views``: BM25, dense, entity, session, hybrid), a hashed
bag-of-words embedder and a rule NER stand in for the models so the test runs in seconds.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import random
from datetime import datetime, timedelta

import numpy as np
import pytest

from bfr_core import pipeline
from bfr_core.method import turn_scores
from bfr_core.records import Query, Scope, Step, Turn
from bfr_core.retrieval.scope import build_views
from bfr_core.store import Store

DIM = 64
DATASET = "longmemeval_s_cleaned"


class HashEmbedder:
    model_id = "test-hash-bow"
    dim = DIM

    def encode(self, texts, progress=None):
        out = np.zeros((len(texts), DIM), dtype=np.float32)
        for i, t in enumerate(texts):
            for w in t.lower().split():
                h = int(hashlib.md5(w.strip(".,?!").encode()).hexdigest()[:8], 16)
                out[i, h % DIM] += 1.0
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.maximum(norms, 1e-12)


def rule_ner(texts):
    """Capitalised words after the first as PERSON spans: enough to give the entity view keys."""
    return [[("PERSON", w.strip(".,?!'s")) for w in t.split()[1:] if w[:1].isupper()] for t in texts]


# Two scopes: a LongMemEval-like user/assistant haystack (gold sessions "answer_*", duplicated
# texts so ties occur) and a LoCoMo-like chat of two named friends.
LME_SESSIONS = {
    "sharegpt_a1_0": ["I want to plan a trip to Kyoto in spring.", "Kyoto in spring is lovely; book early.",
                      "I also need a new camera bag.", "A padded camera bag protects the lens."],
    "answer_9f2c_1": ["I bought a Sony camera on March 3rd.", "Congratulations on the Sony camera!",
                      "The remote shutter release arrived on March 10th.", "Great, enjoy the shutter release."],
    "ultrachat_77_3": ["Filler about coffee and weather.", "Filler about coffee and weather.",
                       "My sister got married last week.", "Wonderful news about the wedding."],
    "answer_9f2c_2": ["I sold my old tripod for 40 dollars.", "Selling the tripod makes room for new gear.",
                      "Filler about coffee and weather.", "Filler about coffee and weather."],
}
LOCOMO_SESSIONS = {
    "conv-26_session_1": [("Caroline", "I went to the LGBTQ support group yesterday."),
                          ("Melanie", "That sounds powerful, Caroline."),
                          ("Caroline", "I am researching adoption agencies."),
                          ("Melanie", "I painted a lake sunrise last year.")],
    "conv-26_session_2": [("Melanie", "We went camping at the beach with the kids."),
                          ("Caroline", "Camping at the beach sounds fun."),
                          ("Melanie", "I signed up for a pottery class."),
                          ("Caroline", "Pottery is relaxing, Melanie.")],
}
# A LoCoMo-Plus-like scope: two friends' sessions (ids as the locomo-plus loader gives them) and a cue
# session of its own (``...:cue``) that the trigger, a remark rather than a question, refers back to.
PLUS_SESSIONS = {
    "conv-30:S1": [("Jon", "I opened the dance studio downtown this month."),
                   ("Gina", "That is huge, Jon, congratulations on the studio."),
                   ("Jon", "The first class had twelve students."),
                   ("Gina", "I am launching my online clothing store next week.")],
    "plus-003:cue": [("Gina", "I sprained my ankle on the hiking trail, so no running for a while."),
                     ("Jon", "Take it slow and rest that ankle.")],
    "conv-30:S2": [("Jon", "The studio got a write-up in the local paper."),
                   ("Gina", "My store sold out of the summer jackets."),
                   ("Jon", "We should celebrate both."),
                   ("Gina", "Dinner on Friday then.")],
}
# A user beside an assistant who answers in paragraphs (the stating-role prior fires on such a store).
_PARAGRAPH = ("Here is a plan that should work for you. Start with a short warm-up, then alternate between "
              "easy and hard intervals, keep a log of each session, and rest a full day between hard efforts. "
              "Most people who train this way see steady progress within six weeks, and the log tells you "
              "when to push and when to back off. ")
PARAGRAPH_SESSIONS = {
    "chat_1": [("user", "I started training for a half marathon in May."), ("assistant", _PARAGRAPH + "Pace first."),
               ("user", "My long run is on Sundays."), ("assistant", _PARAGRAPH + "Sundays are fine.")],
    "chat_2": [("user", "I switched my long run to Saturdays."), ("assistant", _PARAGRAPH + "Saturdays work."),
               ("user", "I bought new trail shoes, size ten."), ("assistant", _PARAGRAPH + "Break them in.")],
}
QUESTIONS = [
    ("lme", "e47becba", "When did the shutter release arrive after I bought the camera?", datetime(2023, 4, 1)),
    ("lme", "e47becba_abs", "How much did I pay for the drone?", datetime(2023, 4, 1)),
    ("lme", "b3c15d39", "What did I sell, and for how much?", datetime(2023, 4, 1)),
    ("lme", "8a2d_abs", "Filler about coffee?", datetime(2023, 4, 1)),
    ("locomo", "conv-26_q4", "What is Caroline researching?", datetime(2023, 6, 1)),
    ("locomo", "conv-26_q9", "What did Melanie paint last year?", datetime(2023, 6, 1)),
    ("locomo", "conv-26_q12", "Where did Melanie go camping with the kids?", datetime(2023, 6, 1)),
    ("locomo", "conv-26_q20", "The pottery class finally paid off, my first bowl came out of the kiln today.",
     datetime(2023, 6, 1)),  # a remark: the words regime yields to the dense view (word_trust)
    ("plus", "plus-003", "I am back on the trail this weekend\nThat was quick, are you sure it has healed?",
     datetime(2023, 7, 1)),  # the trigger of a cue session, two lines, a remark
    ("paragraphs", "run_q1", "Which day is my long run now?", datetime(2023, 7, 1)),
    ("paragraphs", "run_q2", "What size are my new trail shoes?", datetime(2023, 7, 1)),
]
SCOPES = ("lme", "locomo", "plus", "paragraphs")


def _turns(scope: str) -> list[Turn]:
    out = []
    if scope == "lme":
        for k, (sid, texts) in enumerate(LME_SESSIONS.items()):
            for i, text in enumerate(texts):
                out.append(Turn(f"{sid}_{i + 1}", sid, i, "user" if i % 2 == 0 else "assistant", text,
                                datetime(2023, 3, 1) + timedelta(days=5 * k)))
    elif scope in ("plus", "paragraphs"):
        for k, (sid, rows) in enumerate((PLUS_SESSIONS if scope == "plus" else PARAGRAPH_SESSIONS).items()):
            for i, (speaker, text) in enumerate(rows):
                out.append(Turn(f"{sid}:{i + 1}", sid, i, speaker, text, datetime(2023, 6, 1) + timedelta(days=9 * k)))
    else:
        for k, (sid, rows) in enumerate(LOCOMO_SESSIONS.items()):
            for i, (speaker, text) in enumerate(rows):
                out.append(Turn(f"D{k + 1}:{i + 1}", sid, i, speaker, text, datetime(2023, 5, 1) + timedelta(days=7 * k),
                                f"D{k + 1}:{i + 1}"))
    return out


def _opaque(ids: list[str], seed: int) -> dict[str, str]:
    """Each id -> an opaque one; the new names sort in an order unrelated to the old ones."""
    names = [f"x{n:04d}" for n in range(len(ids))]
    random.Random(seed).shuffle(names)
    return dict(zip(ids, names, strict=True))


def _world(rename: bool):
    """(dataset id, {scope: views}, [(query, scope)], id map new -> old) under original or opaque ids."""
    turns = {s: _turns(s) for s in SCOPES}
    all_ids = [t.turn_id for ts in turns.values() for t in ts]
    sessions = list(dict.fromkeys(t.session_id for ts in turns.values() for t in ts))
    qids = [q[1] for q in QUESTIONS]
    tmap = _opaque(all_ids, 1) if rename else {i: i for i in all_ids}
    smap = _opaque(sessions, 2) if rename else {i: i for i in sessions}
    qmap = _opaque(qids, 3) if rename else {i: i for i in qids}
    scmap = {s: f"y{j}" for j, s in enumerate(reversed(SCOPES))} if rename else {s: s for s in SCOPES}
    dataset = "d0" if rename else DATASET
    model = HashEmbedder()
    views = {}
    for s, ts in turns.items():
        new = [dataclasses.replace(t, turn_id=tmap[t.turn_id], session_id=smap[t.session_id],
                                   local_id=tmap[t.turn_id] if t.local_id else "") for t in ts]
        sids = tuple(dict.fromkeys(t.session_id for t in new))
        speakers = tuple(dict.fromkeys(t.speaker for t in new))
        scope = Scope(dataset, scmap[s], sids, speakers if s in ("locomo", "plus") else ())
        views[s] = build_views(scope, new, model.encode([t.text for t in new]), model, ner=rule_ner)
    queries = [(Query(qmap[qid], scmap[s], text, date), s) for s, qid, text, date in QUESTIONS]
    back = {v: k for k, v in tmap.items()}
    return dataset, views, queries, back


@pytest.mark.parametrize("arm", pipeline.arm_names())
def test_opaque_ids_give_the_same_evidence_in_the_same_order(arm):
    d0, v0, q0, _ = _world(rename=False)
    d1, v1, q1, back = _world(rename=True)
    for (a, sa), (b, sb) in zip(q0, q1, strict=True):
        t0 = pipeline.run_query(v0[sa], a, arm, dataset_id=d0)
        t1 = pipeline.run_query(v1[sb], b, arm, dataset_id=d1)
        assert len(t0.steps) == len(t1.steps), (arm, a.question_id)
        for s0, s1 in zip(t0.steps, t1.steps, strict=True):
            assert list(s0.evidence) == [back[t] for t in s1.evidence], (arm, a.question_id, s0.kind)
        assert t0.evidence, (arm, a.question_id)  # a test over empty evidence could not fail


def test_the_fixture_reaches_every_regime_of_bfr():
    """The questions above put bfr in both regimes (a remark, a question), read a remark's clauses, and one
    scope has the stating role (a speaker who writes paragraphs): the leak test runs through each."""
    _, views, queries, _ = _world(rename=True)
    regimes, clause_notes = set(), []
    for q, s in queries:
        pool = pipeline.run_query(views[s], q, "conv-fusion", dataset_id="d0").steps[0].data
        regimes.add(pool["regime"])
        clause_notes.append(pool["clauses"])
    assert regimes == {"words", "remark"}
    assert any(clause_notes)
    roles = {s: turn_scores.stating_role(v.turns) for s, v in views.items()}
    assert roles["paragraphs"] == "user" and roles["locomo"] == roles["plus"] == ""


def _reachable(root: object, depth: int = 6) -> list[object]:
    """Objects reachable from ``root`` through dataclass fields, instance dicts, slots, partials and
    containers (numpy arrays and strings are leaves)."""
    seen: set[int] = set()
    out: list[object] = []
    todo = [(root, 0)]
    while todo:
        obj, d = todo.pop()
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        out.append(obj)
        if d >= depth or isinstance(obj, str | bytes | int | float | np.ndarray | type):
            continue
        kids: list[object] = []
        if isinstance(obj, dict):
            kids += list(obj.keys()) + list(obj.values())
        elif isinstance(obj, list | tuple | set | frozenset):
            kids += list(obj)
        elif isinstance(obj, functools.partial):
            kids += [obj.func, *obj.args, *obj.keywords.values()]
        else:
            kids += list(getattr(obj, "__dict__", {}).values())
            for name in getattr(type(obj), "__slots__", ()):
                kids.append(getattr(obj, name, None))
        todo += [(k, d + 1) for k in kids]
    return out


def test_an_arm_receives_no_dataset_id_and_no_store(monkeypatch):
    store = Store(":memory:")
    seen = []
    monkeypatch.setitem(pipeline.ARMS, "spy", lambda ctx, q: seen.append(ctx) or [Step("topk", "spy", (ctx.views.turns[0].turn_id,), 1, {})])
    turns = _turns("lme")
    model = HashEmbedder()
    views = build_views(Scope(DATASET, "lme", tuple(LME_SESSIONS)), turns, model.encode([t.text for t in turns]),
                        model, store)
    views.entity.index()  # built through the store's NER cache function
    pipeline.run_query(views, Query("q", "lme", "What did I buy?"), "spy", dataset_id=DATASET)
    (ctx,) = seen
    objs = _reachable(ctx)
    assert len(objs) > 100  # the walk reached into the views
    assert not [o for o in objs if isinstance(o, Store)]
    assert DATASET not in [o for o in objs if isinstance(o, str)]


def test_the_guard_sees_a_store_and_a_dataset_id_when_they_are_there():
    store = Store(":memory:")
    objs = _reachable({"x": functools.partial(print, store), "y": (DATASET,)})
    assert any(isinstance(o, Store) for o in objs) and DATASET in objs
