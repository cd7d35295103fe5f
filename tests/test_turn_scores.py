"""bfr_core.method.turn_scores: what it computes once per scope (session codes, the stating role,
each session's summed vectors) gives the same rankings and evidence as computing it per question, and
the one-sort session_max equals the per-session loop it replaced."""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest
from fakes_views import SHUTTER_ROWS, big_rows, make_views

from bfr_core.config import Config, RetrievalConfig
from bfr_core.method import ours, turn_scores
from bfr_core.method.budgets import budget_for
from bfr_core.pipeline import ArmContext
from bfr_core.records import Query

QUESTIONS = ["What did Caroline say about the camera?", "When did I bake bread with the family?",
             "Which concert did Bob go to after the marathon?", "How is the puppy from the shelter?",
             "What recipe did Alice use for the birthday party?"]


def _chat_rows() -> list[tuple[str, str, str]]:
    """big_rows as a user / assistant chat: the assistant's turns three times as long (a stating role)."""
    return [(sid, "user" if i % 2 == 0 else "assistant", text if i % 2 == 0 else " ".join([text] * 4))
            for i, (sid, _, text) in enumerate(big_rows(240, 12))]


def _evidence(views, text: str, settings: turn_scores.OursSettings = turn_scores.DEFAULT) -> list[str]:
    ctx = ArmContext(views, Config(retrieval=RetrievalConfig(ground=10)), budget_for("conv-fusion", "C6"), "C6")
    return list(ours.run(ctx, Query(f"q-{text[:8]}", "s", text), settings)[-1].evidence)


@pytest.mark.parametrize("rows", [big_rows(), _chat_rows()], ids=["three-friends", "user-assistant"])
def test_scope_caches_change_no_score_and_no_evidence(rows) -> None:
    cold_scores, cold_evidence = [], []
    for text in QUESTIONS:  # per question on fresh views, nothing cached: as before the caches
        turn_scores._SCOPE.clear()
        views = make_views(rows)
        cold_scores.append(turn_scores.score_turns(views, Query("q", "s", text)).final)
        cold_evidence.append(_evidence(make_views(rows), text))
    turn_scores._SCOPE.clear()
    warm = make_views(rows)  # one views object for every question, in reverse order: caches shared
    for i in reversed(range(len(QUESTIONS))):
        assert np.array_equal(turn_scores.score_turns(warm, Query("q", "s", QUESTIONS[i])).final, cold_scores[i])
        assert _evidence(warm, QUESTIONS[i]) == cold_evidence[i]
    assert any(k[1] == "stating_role" for k in turn_scores._SCOPE._data)  # the cache was used


def test_cached_scope_arrays_are_read_only() -> None:
    views = make_views(big_rows())
    turn_scores.score_turns(views, Query("q", "s", QUESTIONS[0]))
    session = turn_scores.score_parts(views, Query("q", "s", QUESTIONS[1])).session
    with pytest.raises(ValueError):
        session[0] = 5  # shared by every question of the scope


def _session_max_loop(s: np.ndarray, session: np.ndarray, top: int) -> np.ndarray:
    out = np.zeros(len(s))
    for c in np.unique(session):
        m = session == c
        out[m] = np.sort(s[m])[::-1][:top].mean()
    return out


@pytest.mark.parametrize("top", [1, 2, 3, 7])
def test_session_max_equals_the_per_session_loop(top: int) -> None:
    rng = random.Random(top)
    for _ in range(50):
        n = rng.randint(1, 60)
        session = np.sort(np.array([rng.randint(0, 8) for _ in range(n)]))
        session = np.unique(session, return_inverse=True)[1].astype(np.int64)  # codes 0..S-1 in scope order
        s = np.array([rng.choice([0.0, 1.5, -2.0, rng.gauss(0, 1)]) for _ in range(n)])  # ties included
        assert np.array_equal(turn_scores.session_max(s, session, top), _session_max_loop(s, session, top))
    assert turn_scores.session_max(np.zeros(0), np.zeros(0, np.int64), 1).tolist() == []


# -- the shipped setting's output, pinned (issue 25: the dead settings left OursSettings, nothing moved) ---------

GOLDEN = Path(__file__).parent / "fixtures" / "ours_shipped_b47aa4f.json"
# The setting shipped at b47aa4f, which wrote GOLDEN (issue 28's selection, with BEAM 100K in it, shipped another):
# the code must still give its output bit for bit.
B47AA4F = turn_scores.OursSettings(w_dense=1.5, speaker=6.0, dates=3.0, near1=0.6, near2=0.4, session=1.0, role=1.0,
                                   remark="form")
GOLDEN_QUESTIONS = [*QUESTIONS, "Alice finally got the shutter thing working after the wait.",
                    "When did the remote shutter release arrive?", "Tell me about the lake.",
                    "What did Bob do two weeks ago?"]


def shipped_outputs(settings: turn_scores.OursSettings = B47AA4F) -> dict[str, dict[str, dict]]:
    """bfr at ``settings`` on three fake stores: evidence at 40 and 10 turns and the ranking of every turn."""
    out: dict[str, dict[str, dict]] = {}
    for name, rows in (("three-friends", big_rows()), ("user-assistant", _chat_rows()), ("shutter", SHUTTER_ROWS)):
        views = make_views(rows)
        out[name] = {}
        for text in GOLDEN_QUESTIONS:
            q = Query(f"q-{text[:8]}", "s", text)
            final = turn_scores.score_turns(views, q, settings).final
            at10 = ours.run(ArmContext(views, Config(retrieval=RetrievalConfig(ground=10)), budget_for("conv-fusion", "C0"),
                                       "C0"), q, settings)[-1].evidence
            out[name][text] = {"evidence@40": _evidence(views, text, settings), "evidence@10": list(at10),
                               "ranking": turn_scores.ranking(final).tolist()}
    return out


def test_shipped_output_is_the_one_pinned_before_the_dead_settings_left() -> None:
    """The fixture was written by :func:`shipped_outputs` at b47aa4f (22 settings fields, the setting
    :data:`B47AA4F`); a change that moves bfr's output at that setting on purpose rewrites it and says so."""
    pinned = json.loads(GOLDEN.read_text(encoding="utf-8"))
    now = shipped_outputs()
    assert now.keys() == pinned.keys()
    for name, per in pinned.items():
        for text, want in per.items():
            got = now[name][text]
            assert got["evidence@40"] == want["evidence@40"], (name, text)
            assert got["evidence@10"] == want["evidence@10"], (name, text)
            assert got["ranking"] == want["ranking"], (name, text)


def test_asking_shares_are_read_between_peers_and_zero_beside_an_assistant():
    peers = make_views([("S1", "Ana", "What type of music do you play?"), ("S1", "Ben", "I play the clarinet."),
                        ("S1", "Ana", "I got one. Do you play?")])
    assert turn_scores.asking(peers).tolist() == [1.0, 0.0, 0.5]
    assert turn_scores.asking(peers) is turn_scores.asking(peers)  # once per views object
    long = " ".join(["word"] * 60)
    rows = [("S1", "user", "Can you suggest a lens for the camera I bought?"), ("S1", "assistant", long)] * 3
    assert not turn_scores.asking(make_views(rows)).any()  # the user's questions state the user's facts


def test_the_arm_charges_asking_turns_in_its_set_and_says_so():
    from dataclasses import replace

    views = make_views(SHUTTER_ROWS)
    ctx = ArmContext(views, Config(retrieval=RetrievalConfig(ground=10)), budget_for("conv-fusion", "C6"), "C6")
    q = Query("q1", "s", "What lens does Alice take hiking with her camera?")
    plain = turn_scores.DEFAULT.ranking_only()
    a = ours.run(ctx, q, plain)
    b = ours.run(ctx, q, replace(plain, set_asks=50.0))  # far above any gap: every asking turn after the others
    ground_a = next(s for s in a if s.kind == "grounding")
    ground_b = next(s for s in b if s.kind == "grounding")
    assert ground_a.data["set"]["asks"] == 0.0 and ground_b.data["set"]["asks"] == 50.0
    shares = turn_scores.asking(views)

    def asks_in_e0(ground) -> list[str]:
        return [t for t in ground.data["e0"] if t not in ground.data["cover"] and shares[views.position[t]]]

    assert asks_in_e0(ground_a) and not asks_in_e0(ground_b)  # the places go to turns that state
    assert set(a[-1].evidence) == set(b[-1].evidence)  # at 40 turns: the same set
