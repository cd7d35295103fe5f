"""plots.sufficiency_gap, the sufficiency bench's figures per budget, and ui.sufficiency (the Trace page's reading)."""

from __future__ import annotations

import json

import plotly.graph_objects as go
import pytest

import bench.lib.sufficiency as B
from bfr_core import plots
from ui import sufficiency


def test_one_panel_per_system_with_its_gap_shaded_and_the_first_system_repeated_for_reference():
    curves = {"bfr": {"10": {"any": 83.0, "all": 70.0}, "5": {"any": 76.0, "all": 63.0}},
              "fca-ms": {"5": {"any": 50.0, "all": 40.0}, "20": {"any": 60.0}},
              "nothing": {"5": {"any": 1.0}}}
    fig = plots.sufficiency_gap(curves)
    assert isinstance(fig, go.Figure)
    titles = [a.text for a in fig.layout.annotations]
    assert titles == ["<b>bfr</b><br>gap at 10: 13.0", "<b>fca-ms</b><br>no point at 10"]  # "nothing": no point
    band, every, hit = fig.data[0], fig.data[1], fig.data[2]
    assert band.fill == "toself" and list(band.x) == [5.0, 10.0, 10.0, 5.0] and list(band.y) == [76.0, 83.0, 70.0, 63.0]
    assert list(hit.x) == [5.0, 10.0] and list(hit.y) == [76.0, 83.0] and hit.line.dash == "solid"  # sorted by budget
    assert list(every.y) == [63.0, 70.0] and every.line.dash == "dash"
    fca = [t for t in fig.data if t.xaxis == "x2"]
    assert [t.name for t in fca] == ["gap", "all gold", "any gold", "bfr (for reference)", "bfr (for reference)"]
    assert list(fca[2].x) == [5.0]  # a budget missing the all-gold figure is left out


def test_figures_at_a_budget_cut_each_set_to_its_first_k_turns():
    sets = [(["a", "g1", "g2"], frozenset({"g1", "g2"})),  # both gold turns by 3, one by 2
            (["g3", "b"], frozenset({"g3"})),
            (["c"], frozenset({"g4"})),
            (["d"], frozenset())]  # no gold turn: not scored
    two = B.at_budget(sets, 2)
    assert two == {"n": 3, "any": 66.67, "all": 33.33, "gap": 33.33, "set_size": 1.67, "reached": 0.6667}
    three = B.at_budget(sets, 3)
    assert three["all"] == 66.67 and three["reached"] == 0.3333
    assert B.at_budget([(["a"], frozenset())], 5) == {"n": 0}


def test_curves_group_a_dumps_rows_by_system_in_the_panels_order():
    rows = {"z-fusion top-k:q1": ["g"], "conv-fusion:q1": ["x", "g"], "bfr:q2": ["y"], "mem0:q1": ["g"],
            "conv-fusion:q9": ["g"]}  # bfr: our arm's alias, as a dump asked for it
    gold = {"q1": frozenset({"g"}), "q2": frozenset({"h"})}
    out = B.curves(rows, gold, sizes=(1, 2))
    assert list(out) == ["conv-fusion", "z-fusion top-k", "mem0"]
    ours = out["conv-fusion"]
    assert ours["1"]["any"] == 0.0 and ours["2"]["any"] == 50.0 and ours["2"]["n"] == 2  # q9: no gold


def test_the_trace_page_reads_the_budgets_each_system_reaches(tmp_path):
    entry = {"kind": "locomo", "systems": {
        "bfr": {"budgets": {"5": {"any": 70.0, "all": 60.0, "reached": 1.0}}},
        "mem0": {"budgets": {"10": {"any": 60.0, "all": 50.0, "reached": 1.0},
                             "20": {"any": 60.0, "all": 50.0, "reached": 0.0}}},
        "short": {"budgets": {"5": {"any": 1.0, "all": 1.0, "reached": 0.2}}}}}
    assert sufficiency.curves(entry) == {"conv-fusion": {"5": {"any": 70.0, "all": 60.0}},  # bfr: its alias
                                         "mem0": {"10": {"any": 60.0, "all": 50.0}}}
    path = tmp_path / "s.json"
    assert sufficiency.load(path) is None
    path.write_text(json.dumps({"benchmarks": {"beam-100k": {"kind": "beam"}, "locomo": entry}}), encoding="utf-8")
    data = sufficiency.load(path)
    assert sufficiency.benchmark_for(data, "beam") == "beam-100k" and sufficiency.benchmark_for(data, "demo") is None
    path.write_text("{", encoding="utf-8")
    with pytest.raises(ValueError, match="unreadable"):
        sufficiency.load(path)
    path.write_text("[]", encoding="utf-8")
    with pytest.raises(ValueError, match="no 'benchmarks'"):
        sufficiency.load(path)


def test_our_arms_note_says_which_figures_are_plotted_and_keeps_the_in_sample_ones_beside_them():
    point = {"any": 80.0, "all": 70.0, "reached": 1.0}
    entry = {"systems": {"bfr": {"label": "development: cross-fitted", "budgets": {"10": point}}},
             "in_sample": {"10": {"any": 90.0, "all": 81.25, "reached": 1.0}}}
    note = sufficiency.ours_note(entry)
    assert note.startswith("development: cross-fitted") and "70.0 cross-fitted against 81.2 in-sample" in note
    del entry["in_sample"]
    assert sufficiency.ours_note(entry) == "development: cross-fitted"
    assert sufficiency.ours_note({"systems": {}}).startswith("development figures")
