"""bfr_core.evaluation.official: LongMemEval's retrieval convention, checked against its own eval_utils.py.

The reference (``../shared/reference/longmemeval/eval_utils.py``, MIT) is loaded from beside the
project; hand-made rankings (full haystack rankings and short evidence sets, as every arm is scored)
must give the same recall_any / recall_all / NDCG at turn and session level.
"""

from __future__ import annotations

import importlib.util
import random
from datetime import datetime

import numpy as np
import pytest

from bfr_core.evaluation import official
from bfr_core.evaluation.metrics import official_scores
from bfr_core.ingest.sources import data_dir
from bfr_core.records import Question, Scope, Turn
from bfr_core.retrieval.scope import build_views

REFERENCE = data_dir().parent / "reference" / "longmemeval" / "eval_utils.py"


@pytest.fixture(scope="module")
def ref():
    if not REFERENCE.exists():
        pytest.skip(f"LongMemEval's eval_utils.py not at {REFERENCE}")
    if not hasattr(np, "asfarray"):  # removed in numpy 2; the reference still calls it
        np.asfarray = lambda a: np.asarray(a, dtype=float)  # type: ignore[attr-defined]
    spec = importlib.util.spec_from_file_location("lme_eval_utils", REFERENCE)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)  # type: ignore[union-attr]
    return mod


# A haystack of 6 sessions x 4 turns; LongMemEval ids are "{session}_{turn index + 1}".
SESSIONS = ["answer_aa_1", "s_b_2", "answer_cc_3", "s_d_4", "s_e_5", "s_f_6"]
CORPUS = [f"{s}_{i}" for s in SESSIONS for i in range(1, 5)]


ANSWER_TURNS = [t for t in CORPUS if t.startswith("answer")]


def _run_retrieval_ids(corpus, gold):
    """The corpus ids LongMemEval's run_retrieval.py writes: in an answer session, a turn without
    has_answer becomes noans (written out here from its process_item_flat_index, not from bfr_core)."""
    return [c.replace("answer", "noans") if "answer" in c and c not in gold else c for c in corpus]


def _cases():
    rng = random.Random(5)
    out = []
    for n in range(40):
        gold = rng.sample(ANSWER_TURNS, rng.choice([1, 2, 3]))  # has_answer turns lie in answer sessions
        ranked = rng.sample(CORPUS, len(CORPUS) if n % 2 == 0 else rng.choice([3, 5, 8, 12]))
        out.append((ranked, gold))
    out.append((CORPUS[:], ["answer_aa_1_1"]))  # gold first
    out.append((CORPUS[::-1][:6], ["answer_aa_1_2", "answer_cc_3_4"]))  # a short set missing both
    return out


@pytest.mark.parametrize("case", range(len(_cases())))
def test_official_scores_match_the_reference(ref, case):
    ranked, gold = _cases()[case]
    idx = [CORPUS.index(t) for t in ranked]
    ours = official_scores(ranked, gold, CORPUS, (5, 10))
    corpus_ids = _run_retrieval_ids(CORPUS, gold)
    correct = list({c for c in corpus_ids if "answer" in c})  # run_retrieval.py's correct_docs
    assert sorted(correct) == sorted(gold)
    for k in (5, 10):
        any_, all_, ndcg = ref.evaluate_retrieval(idx, correct, corpus_ids, k=k)
        assert ours[f"turn_recall_any@{k}"] == any_ and ours[f"turn_recall_all@{k}"] == all_
        assert ours[f"turn_ndcg_any@{k}"] == pytest.approx(ndcg, abs=1e-12)
        s_any, s_all, s_ndcg = ref.evaluate_retrieval_turn2session(idx, correct, corpus_ids, k=k)
        assert ours[f"session_recall_any@{k}"] == s_any and ours[f"session_recall_all@{k}"] == s_all
        assert ours[f"session_ndcg_any@{k}"] == pytest.approx(s_ndcg, abs=1e-12)


def test_noans_turns_change_session_ndcg_as_in_the_reference(ref):
    """A non-gold turn of an answer session ranked first: on the release's own ids it names the gold
    session (the ideal DCG counts every turn of it); run_retrieval.py's noans id makes it a miss."""
    gold = ["answer_aa_1_3"]
    ranked = ["answer_aa_1_1", "s_b_2_1", "answer_aa_1_3", *[t for t in CORPUS if t.startswith("s_d")]]
    idx = [CORPUS.index(t) for t in ranked]
    corpus_ids = _run_retrieval_ids(CORPUS, gold)
    ours = official_scores(ranked, gold, CORPUS, (1, 2, 3))
    naive = ref.evaluate_retrieval_turn2session(idx, gold, CORPUS, k=2)[2]
    for k in (1, 2, 3):
        s_any, s_all, s_ndcg = ref.evaluate_retrieval_turn2session(idx, gold, corpus_ids, k=k)
        assert (ours[f"session_recall_any@{k}"], ours[f"session_recall_all@{k}"]) == (s_any, s_all)
        assert ours[f"session_ndcg_any@{k}"] == pytest.approx(s_ndcg, abs=1e-12)
    assert ours["session_recall_any@1"] == 0.0 and ours["session_ndcg_any@2"] != pytest.approx(naive)


def test_recall_all_is_stricter_than_recall_any_on_a_hand_made_ranking(ref):
    ranked = ["answer_aa_1_3", "s_b_2_1", "s_d_4_1", "s_e_5_1", "s_f_6_1", "answer_cc_3_2"]
    gold = ["answer_aa_1_3", "answer_cc_3_2"]
    ours = official_scores(ranked, gold, CORPUS, (5, 10))
    assert ours["session_recall_any@5"] == 1.0 and ours["session_recall_all@5"] == 0.0
    assert ours["session_recall_all@10"] == 1.0  # the sixth distinct session comes in at k = 10
    assert ours["turn_recall_all@5"] == 0.0


class _Bow:
    model_id = "test-bow"
    dim = 32

    def encode(self, texts, progress=None):
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, t in enumerate(texts):
            for w in t.lower().split():
                out[i, sum(map(ord, w)) % self.dim] += 1
        return out / np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-12)


def _views():
    texts = ["I adopted a cat named Luna.", "Cats are great companions.", "I run every Sunday morning.",
             "Running builds endurance.", "My cat Luna loves tuna.", "Tuna is a common cat treat."]
    turns = [Turn(f"{s}_{i + 1}", s, i, "user" if i % 2 == 0 else "assistant", texts[j], datetime(2023, 1, 1))
             for j, (s, i) in enumerate([(s, i) for s in ("answer_x_1", "s_y_2", "s_z_3") for i in range(2)])]
    model = _Bow()
    return build_views(Scope("d", "q1", ("answer_x_1", "s_y_2", "s_z_3")), turns,
                       model.encode([t.text for t in turns]), model)


@pytest.mark.parametrize("arm", ["mem0", "amem", "conv-fusion"])
def test_every_arm_is_scored_on_its_evidence_set_over_user_turns(arm):
    from bfr_core.pipeline import run_query

    v = official.user_views(_views())
    assert [t.speaker for t in v.turns] == ["user"] * 3
    q = Question("d", "q1", "q1", "What is my cat called?", "Luna", "single-session-user", ("answer_x_1_1",))
    ranked = official.arm_ranking(v, q, arm, "d")
    assert ranked == list(run_query(v, q.query(), arm, dataset_id="d").evidence)
    assert set(ranked) <= {t.turn_id for t in v.turns}
    assert "conv-fusion" in official.PROCEDURE and "evidence set" in official.PROCEDURE
