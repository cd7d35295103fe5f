"""bfr_core.plots: pure figure builders (no streamlit), shapes and highlights."""

import sys
from pathlib import Path

import plotly.graph_objects as go

from bfr_core import plots


def test_plots_do_not_import_streamlit():
    assert "import streamlit" not in Path(plots.__file__).read_text(encoding="utf-8")
    assert "streamlit" not in getattr(sys.modules["bfr_core.plots"], "__dict__", {})


def test_context_heatmap_marks_gold_rows():
    fig = plots.context_heatmap(["t1", "t2"], ["r1", "r2", "r3"], [[1, 0, 1], [0, 1, 0]], gold=["t2"],
                                object_labels={"t1": "Sam: <b>hi</b>"})
    hm = fig.data[0]
    assert isinstance(hm, go.Heatmap)
    assert list(hm.y) == ["t1", plots.GOLD_MARK + "t2"]
    assert [list(r) for r in hm.z] == [[1, 0, 1], [0, 1, 0]]
    assert "yes" in hm.text[0][0] and "no" in hm.text[0][1]


def test_lattice_layers_by_intent_size_and_highlights_used():
    concepts = [
        {"id": "top", "extent": ["a", "b", "c"], "intent": []},
        {"id": "x", "extent": ["a", "b"], "intent": ["r1"]},
        {"id": "y", "extent": ["b", "c"], "intent": ["r2"]},
        {"id": "bot", "extent": ["b"], "intent": ["r1", "r2"]},
    ]
    edges = [["x", "top"], ["y", "top"], ["bot", "x"], ["bot", "y"]]
    pos = plots.lattice_layout(concepts, edges)
    assert pos["top"][1] == 0 and pos["x"][1] == pos["y"][1] == 1 and pos["bot"][1] == 2
    assert pos["x"][0] != pos["y"][0]
    fig = plots.lattice_figure(concepts, edges, used=["x"], gold=["b"], attribute_labels={"r1": "order date"})
    nodes = fig.data[1:]
    # one legend entry and one colour per concept; the requirement text names it
    assert len(nodes) == 4 and len({t.marker.color[0] for t in nodes}) == 4
    x = next(t for t in nodes if t.name.startswith("r1 order date"))
    assert list(x.x) == [pos["x"][0]] and "used by the prefilter" in x.hovertext[0] and "extent" in x.hovertext[0]
    assert x.marker.line.color[0] == "black" and x.marker.size[0] > nodes[0].marker.size[0]  # used: ringed, larger
    assert sorted(t.text[0].split(" ")[0] for t in nodes) == ["★1"] * 4  # every concept holding b counts it
    top = next(t for t in nodes if t.name.startswith("no requirement"))
    assert top.marker.color[0] == plots.TOP_COLOR
    # edge trace: one segment (3 points with a None gap) per edge
    assert len(fig.data[0].x) == 3 * len(edges)


def test_lattice_marks_an_empty_extent_hollow_and_groups_large_lattices():
    concepts = [{"id": "top", "extent": ["a"], "intent": []}, {"id": "bot", "extent": [], "intent": ["r1", "r2"]}]
    fig = plots.lattice_figure(concepts, [["bot", "top"]])
    assert fig.data[2].marker.color[0] == "white" and "★" not in fig.data[2].text[0]
    many = [{"id": "top", "extent": ["a"], "intent": []}] + [
        {"id": f"c{i}", "extent": ["a"], "intent": [f"r{i}"]} for i in range(plots.MAX_CONCEPT_LEGEND + 1)]
    fig = plots.lattice_figure(many, [])
    assert [t.name for t in fig.data[1:]] == ["no requirement: every pool turn (1)", "1 requirement(s)"]


def test_metrics_by_step_is_percent_and_keeps_none():
    fig = plots.metrics_by_step([{"step": "pool", "gold_hit": 0, "er": 0, "cer": 0},
                                 {"step": "E0", "gold_hit": 1, "er": 0.5, "cer": None}])
    by = {t.name: list(t.y) for t in fig.data}
    assert by["Gold Hit"] == [0, 100] and by["ER"] == [0, 50] and by["CER"] == [0, None]


def test_pareto_front_and_budget_frontier():
    pts = [(1, 50), (2, 60), (2, 55), (3, 60), (4, 70)]
    assert plots.pareto_front(pts) == [0, 1, 4]
    fig = plots.budget_frontier([{"arm": "bfr-mv", "budget": f"C{i}", "calls": c, "gold_hit": q}
                                 for i, (c, q) in enumerate(pts)])
    names = [t.name for t in fig.data]
    assert names == ["bfr-mv", "Pareto front"]
    assert list(fig.data[1].x) == [1, 2, 4]


def test_confusion_and_bars():
    fig = plots.confusion_figure(["a", "b"], [[3, 1], [0, 2]], rows="alice", cols="llm:final")
    assert [list(r) for r in fig.data[0].z] == [[3, 1], [0, 2]]
    bar = plots.bar_counts({"multi-hop": 3, "temporal": 5})
    assert list(bar.data[0].y) == [3, 5]


def test_coverage_matrix():
    fig = plots.coverage_matrix({"t1": ["r1"], "t2": ["r1", "r2"]}, ["r1", "r2"])
    assert [list(r) for r in fig.data[0].z] == [[1, 0], [1, 1]]


def test_judge_accept_figure_marks_known_wrong_systems():
    from bfr_core.plots import judge_accept_figure

    judges = {"rules": {"by_system": {"a": {"accept_pct": 80.0, "undecided_pct": 5.0}, "bad": {"accept_pct": 1.0}}},
              "lenient": {"by_system": {"a": {"accept_pct": 90.0}, "bad": {"accept_pct": 60.0}}}}
    fig = judge_accept_figure(judges, ["bad"])
    assert [t.name for t in fig.data] == ["rules", "lenient"]
    assert list(fig.data[0].x) == ["a", "✗ bad"] and list(fig.data[1].y) == [90.0, 60.0]


def test_arm_bars_name_the_set_size_and_draw_the_interval():
    fig = plots.arm_bars([{"arm": "mem0", "value": 50.0, "lo": 30.0, "hi": 70.0, "size": 10},
                          {"arm": "bfr-mv", "value": 80.0, "lo": 60.0, "hi": 90.0, "size": 10},
                          {"arm": "none", "value": None, "lo": None, "hi": None, "size": 10}])
    bar = fig.data[0]
    assert list(bar.x) == ["mem0<br>(10 turns)", "bfr-mv<br>(10 turns)"] and list(bar.y) == [50.0, 80.0]
    assert list(bar.error_y.array) == [20.0, 10.0] and list(bar.error_y.arrayminus) == [20.0, 20.0]
