"""plots.sufficiency_gap (the plot of bench/quality/bench_ours_sufficiency.py) and that bench's pooling."""

from __future__ import annotations

import plotly.graph_objects as go

import bench.quality.bench_ours_sufficiency as B
from bfr_core import plots


def test_each_system_gets_an_any_line_and_a_dashed_all_line_in_one_colour():
    curves = {"bfr": {"10": {"turn_hit": 83.0, "recall_all": 70.0}, "5": {"turn_hit": 76.0, "recall_all": 63.0}},
              "fca-ms": {"5": {"turn_hit": 50.0, "recall_all": 40.0}, "20": {"turn_hit": 60.0}}}
    fig = plots.sufficiency_gap(curves)
    assert isinstance(fig, go.Figure)
    names = [t.name for t in fig.data]
    assert names == ["bfr: any gold", "bfr: all gold", "fca-ms: any gold", "fca-ms: all gold"]
    bfr_any, bfr_all = fig.data[0], fig.data[1]
    assert list(bfr_any.x) == [5.0, 10.0] and list(bfr_any.y) == [76.0, 83.0]  # sorted by budget
    assert list(bfr_all.y) == [63.0, 70.0] and bfr_all.line.dash == "dash"
    assert bfr_any.line.color == bfr_all.line.color != fig.data[2].line.color
    assert list(fig.data[2].x) == [5.0]  # a budget missing the all-gold figure is left out


def test_pooled_figures_weigh_each_question_set_by_its_size():
    a = {"n": 50, "turn_hit": 90.0, "recall_all": 80.0, "gold_hit": 90.0, "cer": 80.0, "set_size": 10.0}
    b = {"n": 150, "turn_hit": 70.0, "recall_all": 60.0, "gold_hit": 70.0, "cer": 60.0, "set_size": 10.0}
    p = B.pooled([a, b])
    assert p["n"] == 200 and p["turn_hit"] == 75.0 and p["recall_all"] == 65.0 and p["set_size"] == 10.0
    assert B.pooled([a]) == a


def test_from_selection_reads_bfr_held_out_and_the_top_k_rankings_at_every_budget():
    row = {f"{m}@{k}": float(k + (m == "hit")) for m in ("hit", "cer") for k in B.SIZES}
    sel = {"cross_validation": {"held out (cross-validated, held-out folds pooled)": {"locomo": row}},
           "dense top-k, the store's dense view (no weight chosen)": {"locomo": {**row, "hit@10": 1.0}}}
    data = B.from_selection(sel)["locomo"]
    assert set(data) == {"bfr (held out, CV)", "dense top-k (amem)"}
    assert data["bfr (held out, CV)"]["10"] == {"turn_hit": 11.0, "recall_all": 10.0}
    assert data["dense top-k (amem)"]["10"]["turn_hit"] == 1.0 and list(data["dense top-k (amem)"]) == ["5", "10", "20", "40"]
