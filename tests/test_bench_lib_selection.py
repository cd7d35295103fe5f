"""bench/lib/selection.py (the protocol of bench/quality/bench_ours_selection.py): its grid covers every number of OursSettings, the shipped setting is the
one its JSON says was chosen, and the protocol runs end to end (on fake conversations, in seconds)."""

from __future__ import annotations

import json
from dataclasses import fields, replace
from pathlib import Path

import numpy as np
from fakes_views import SHUTTER_ROWS, make_views

import bench.lib.selection as S
from bfr_core.evaluation.metrics import strip_turn_id
from bfr_core.method import turn_scores
from bfr_core.method import variants as V
from bfr_core.records import Query

BENCH = Path(__file__).resolve().parents[1] / "bench"


def test_the_grid_covers_every_setting_and_drops_only_what_no_search_chose():
    named = set(S.GRID) - {"near"} | {"near1", "near2"}
    assert {f.name for f in fields(turn_scores.OursSettings)} <= named | set(S.TRAINED)
    assert set(S.TRAINED).isdisjoint(named)
    assert set(S.DROPPED).isdisjoint(S.GRID)
    assert S.variant_of(S.START) == V.Variant(turn_scores.OursSettings(), dense_view=False)  # the z-fusion baseline


SHIPPED_BY = "ours_selection_asks_guard.json"  # the last run of the protocol: its ranking is the one ours.toml holds


def test_the_shipped_setting_is_the_search_on_every_conversation():
    """ours.toml's ranking and set weights are what the last selection run (:data:`SHIPPED_BY`) chose;
    every dropped coordinate sat at its start in every search of that run, and that run started from the
    setting the full run chose."""
    sel = json.loads((BENCH / "out" / SHIPPED_BY).read_text(encoding="utf-8"))
    assert "unfinished" not in sel
    full = json.loads((BENCH / "out" / "ours_selection.json").read_text(encoding="utf-8"))
    ranking = {k: v for k, v in full["chosen on all folds (shipped)"]["knobs"].items() if not k.startswith("set_")}
    assert {k: sel["every search starts at"][k] for k in ranking} == ranking
    chosen = sel["chosen on all folds (shipped)"]["knobs"]
    knobs = {k: tuple(v) if isinstance(v, list) else v for k, v in chosen.items() if k in S.GRID}
    assert S.variant_of(knobs) == S.SEARCHED and sel["turn_scores.DEFAULT is the chosen setting"]
    assert sel["guard"] and set(sel["every search moves (the other coordinates stay at its start)"]) == {
        "set_spread", "set_cover", "set_novelty", "remark_novelty", "set_asks"}
    searches = [f["search path"] for f in sel["cross_validation"]["per_fold"]] + [
        v["search path"] for k, v in sel.items() if k.startswith(("tune on", "chosen on"))]
    benchmarks = [d for d in S.BENCHMARKS if d in sel["cross_validation"]["held out (cross-validated, held-out folds pooled)"]]
    assert len(searches) == S.FOLDS + len(benchmarks) + 1  # the folds, each benchmark left out once, all
    assert not any(step[0] in S.DROPPED for path in searches for step in path)
    assert all(path[-1][0] == "end" and path[-1][1].startswith("converged") for path in searches)  # none cut short
    # no choice behind a shipped or held-out-by-fold figure rests on the edge of its grid (a leave-one-benchmark-out
    # direction may reach the cap its grid can grow to: its end step names the weight, and its figures are reported so)
    deciding = [f["search path"] for f in sel["cross_validation"]["per_fold"]] + [
        sel["chosen on all folds (shipped)"]["search path"]]
    assert all(path[-1][1].endswith("no open-ended weight at its grid's largest value") for path in deciding)
    assert all(path[-1][1].endswith(("no open-ended weight at its grid's largest value", *S.OPEN_ENDED))
               for path in searches)


def _cases(scopes: list[str]) -> list[S.RankCase]:
    out = []
    for scope in scopes:
        views = make_views(SHUTTER_ROWS, scope=scope)
        for j, text in enumerate(("When did the remote shutter release arrive?", "What lens does Alice take?")):
            gold = frozenset({views.turns[9 - 7 * j].turn_id})
            out.append(S.RankCase(f"{scope}-{j}", scope, scope, "t", gold, tuple(t.turn_id for t in views.turns),
                                  {t.turn_id: t.session_id for t in views.turns},
                                  V.variant_parts(views, Query(f"{scope}-{j}", scope, text), **S.PARTS),
                                  vectors=views.turn_vectors, asking=turn_scores.asking(views)))
    return out


def test_the_protocol_runs_end_to_end_on_fake_conversations():
    locomo, lme = _cases([f"c{i}" for i in range(5)]), _cases([f"h{i}" for i in range(5)])
    out = S.protocol({"locomo": locomo, "longmemeval": lme, S.OFFICIAL: lme})
    cv = out["cross_validation"]
    assert len(cv["per_fold"]) == S.FOLDS
    held = cv["held out (cross-validated, held-out folds pooled)"]
    assert set(held) == {"locomo", "longmemeval"} and 0 <= held["locomo"]["hit@10"] <= 100
    assert out["searched and dropped (issue 25, at b47aa4f)"] == S.DROPPED
    assert set(out["chosen on all folds (shipped)"]["knobs"]) == set(S.GRID)
    assert isinstance(out["turn_scores.DEFAULT is the chosen setting"], bool)
    shares = out["by term share at the shipped setting (no gate reads it)"]["locomo"]
    assert sum(b["n"] for b in shares.values()) == len(locomo)
    assert all(0 <= b[f"{who} hit@{k}"] <= 100 for b in shares.values() if b["n"] for who in ("shipped", "dense")
               for k in (10, 40))
    counts = out["regimes at the shipped gate"]
    assert set(counts) == {"locomo", "longmemeval"} and sum(counts["locomo"].values()) == len(locomo)
    row = S.case_row(locomo[0], V.Variant())
    assert row.dtype == np.int8 and row[0] == 1


def test_a_search_restricted_to_some_coordinates_moves_only_those_from_its_start():
    locomo, lme = _cases([f"c{i}" for i in range(5)]), _cases([f"h{i}" for i in range(5)])
    coords = ("set_spread", "set_cover")
    out = S.protocol({"locomo": locomo, "longmemeval": lme, S.OFFICIAL: lme}, start=S.PREVIOUS, coords=coords)
    assert out["every search moves (the other coordinates stay at its start)"] == list(coords)
    knobs = [f["knobs"] for f in out["cross_validation"]["per_fold"]] + [out["chosen on all folds (shipped)"]["knobs"]]
    start = S.json_knobs(S.PREVIOUS)
    assert all({k: v for k, v in kn.items() if k not in coords} == {k: v for k, v in start.items() if k not in coords}
               for kn in knobs)
    paths = [f["search path"] for f in out["cross_validation"]["per_fold"]]
    assert all(step[0] in ("start", "end", "grid", *coords) for path in paths for step in path)


def test_official_rows_count_only_gold_user_turns_as_run_retrieval_does():
    """Under LongMemEval's convention a non-gold turn of an answer session is ``noans``: ranking it first finds
    no answer session; a question whose gold lies outside the user-turn corpus is left out (an empty row)."""
    case = _cases(["h0"])[0]
    order = [case.ids[int(i)] for i in turn_scores.ranking(V.combine(case.parts, V.Variant()).final)]
    rename = {t: f"s{i}_1" for i, t in enumerate(case.ids)}  # every other turn its own session
    rename[order[0]], rename[order[-1]] = "answer_a_1", "answer_a_2"  # the top turn and the last share a session
    ids = tuple(rename[t] for t in case.ids)
    lenient = replace(case, ids=ids, sessions={t: strip_turn_id(t) for t in ids}, gold=frozenset({"answer_a_2"}))
    official = replace(lenient, official=True)
    col = S.COLS.index("sany@5")
    assert S.case_row(lenient, V.Variant())[col] == 1  # the gold session's first turn, whichever turn it is
    assert S.case_row(official, V.Variant())[col] == 0  # only the gold turn itself counts
    assert S.case_row(official, V.Variant())[0] == 1
    outside = replace(official, gold=frozenset({"answer_a_9"}))  # an assistant turn: not in the user-turn corpus
    assert not S.case_row(outside, V.Variant()).any()


def test_cached_cases_are_reused_only_when_built_by_the_same_code(tmp_path, monkeypatch):
    built = []

    def build(store, beam):  # noqa: ANN001, ANN202 - a stand-in for the minutes-long build
        built.append(beam)
        return {"locomo": [f"case {len(built)}"]}

    monkeypatch.setattr(S, "build_cases", build)
    monkeypatch.setattr(S, "code_fingerprint", lambda: "code-a")
    path = tmp_path / "cases.pkl"
    assert S.cached_cases(None, path, reuse=True) == {"locomo": ["case 1"]}  # nothing cached: built
    assert S.cached_cases(None, path, reuse=True) == {"locomo": ["case 1"]} and len(built) == 1  # reused
    monkeypatch.setattr(S, "code_fingerprint", lambda: "code-b")
    assert S.cached_cases(None, path, reuse=True) == {"locomo": ["case 2"]}  # other code: rebuilt
    assert S.cached_cases(None, path, reuse=False) == {"locomo": ["case 3"]}  # not asked to reuse


def test_term_share_buckets_split_the_questions_at_half_of_their_terms_found():
    cases = _cases(["c0"])
    rows = np.array([S.case_row(c, V.Variant()) for c in cases], dtype=np.int8)
    low = replace(cases[0].parts.trust["stemmed"], term_share=0.25)
    cases[0] = replace(cases[0], parts=replace(cases[0].parts, trust={"stemmed": low}))
    out = S.by_term_share(cases, rows, np.zeros_like(rows))
    assert [b["n"] for b in out.values()] == [1, 1]
    assert out["under 0.5 of the terms found"]["dense hit@40"] == 0.0
    assert out["under 0.5 of the terms found"]["shipped hit@40"] == 100 * rows[0][S.COLS.index("hit@40")]


class _Peaked:
    """A stand-in for Grid whose objective peaks at dates 6.0 (past the typed grid's edge, 3.0) and at
    remark_shift 0.5 (bounded: never grows)."""

    passes, grow, start, coords, guard = S.PASSES, S.GROW, S.START, tuple(S.GRID), False

    def quality(self, knobs, mask=None, only=()):  # noqa: ANN001, ANN201 - Grid.quality's shape
        f = 50 - abs(knobs["dates"] - 6.0) - abs(knobs["remark_shift"] - 0.5) + (knobs["remark"] != "off")
        return {"locomo": dict.fromkeys(("hit@10", "cer@10", "hit@40", "cer@40", "session_recall_any@5",
                                         "session_recall_all@5"), f)}


def test_a_search_at_an_open_ended_edge_doubles_its_largest_value():
    chosen, path = S.search(_Peaked(), None, only=("locomo",))
    assert chosen["dates"] == 6.0  # 6.0 added at the old edge 3.0, then 12.0 (tried, worse)
    grown = [step[1] for step in path if step[0] == "grid"]
    assert grown == ["dates at its largest value: 6.0 added", "dates at its largest value: 12.0 added"]
    assert chosen["remark_shift"] == 0.5 and S.GRID["dates"][-1] == 3.0  # the module's grid is untouched
    assert path[-1][0] == "end" and path[-1][1].startswith("converged")
    assert path[-1][1].endswith("no open-ended weight at its grid's largest value")


class _Trade:
    """A stand-in for Grid where set_novelty lifts one benchmark's objective a lot and lowers the other's
    hit@10 a little (set_cover: a small gain on both)."""

    passes, grow, start, coords = S.PASSES, S.GROW, S.START, ("set_novelty", "set_cover")

    def __init__(self, guard: bool) -> None:
        self.guard = guard

    def quality(self, knobs, mask=None, only=()):  # noqa: ANN001, ANN201 - Grid.quality's shape
        figs = ("hit@10", "cer@10", "hit@40", "cer@40", "session_recall_any@5", "session_recall_all@5")
        a, b = dict.fromkeys(figs, 50.0), dict.fromkeys(figs, 50.0)
        a["cer@10"] += 20 * (knobs["set_novelty"] > 0) + (knobs["set_cover"] > 0)
        b["hit@10"] -= 1 * (knobs["set_novelty"] > 0)
        b["cer@10"] += 1 * (knobs["set_cover"] > 0)
        return {"locomo": a, "longmemeval": b}


def test_a_guarded_search_takes_no_move_that_lowers_a_benchmarks_guarded_figure():
    free, _ = S.search(_Trade(guard=False), None, only=("locomo", "longmemeval"))
    assert free["set_novelty"] > 0  # the objective's mean buys one benchmark's gain with the other's hit@10
    guarded, path = S.search(_Trade(guard=True), None, only=("locomo", "longmemeval"))
    assert guarded["set_novelty"] == 0 and guarded["set_cover"] > 0  # the harmless move is still taken
    assert [step[0] for step in path[1:-1]] == ["set_cover"]
    assert S.holds({"x": dict.fromkeys(S.GUARD, 1.0)}, {"x": dict.fromkeys(S.GUARD, 1.0)})
    assert not S.holds({"x": {**dict.fromkeys(S.GUARD, 1.0), "hit@40": 0.5}}, {"x": dict.fromkeys(S.GUARD, 1.0)})


def test_next_value_doubles_numbers_and_pairs():
    assert S.next_value((0.0, 0.5, 1.0)) == 2.0
    assert S.next_value(((0.3, 0.2), (0.6, 0.4), (0.9, 0.6))) == (1.8, 1.2)
    assert S.next_value((0.0, 0.5, 1.0), "step") == 1.5 and S.next_value(((0.3, 0.2), (0.6, 0.4)), "step") == (0.9, 0.6)


def test_case_order_reads_the_requirement_rows_as_the_arm_does():
    """The protocol's set order is the arm's: requirement rows from the case's incidence over every turn, the
    cover weight moving a turn that supplies an uncovered requirement up; with every set weight 0, the ranking."""
    from bfr_core.method.requirements import Requirement

    case = _cases(["c0"])[0]
    ranked = turn_scores.ranking(V.combine(case.parts, V.Variant()).final)
    late = int(ranked[5])  # a turn in the head, below the top
    rows = np.zeros(len(case.ids), dtype=np.int64)
    rows[int(ranked[0])], rows[late] = 0b01, 0b10
    req = (Requirement("r1", "a", "fact", ("a",)), Requirement("r2", "b", "fact", ("b",)))
    case = replace(case, reqs=req, req_rows=rows, dates=tuple(None for _ in case.ids))
    zero = turn_scores.DEFAULT.ranking_only()
    plain = S.case_order(case, V.Variant(zero))
    assert list(plain) == list(ranked)
    covered = S.case_order(case, V.Variant(replace(zero, set_cover=100.0)))
    assert int(covered[1]) == late and set(covered[:40]) == set(ranked[:40])
