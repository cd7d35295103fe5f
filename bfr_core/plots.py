"""Plotly figure builders for the app and reports: pure functions from plain data to a Figure.

Covers: the formal context as a heatmap, the concept lattice as a layered graph, a requirement
coverage matrix, Gold Hit / ER / CER by step, the budget frontier (quality versus calls), a
confusion matrix, a simple bar chart, one bar per arm with its interval and set size, the judges'
accept rates by system, and any gold against all gold by budget (one panel per system, the
sufficiency gap shaded). Each builder takes lists and dicts (the JSON a Trace step carries, or
rows of a results table) and returns a ``plotly.graph_objects.Figure``; none reads
the store and none imports streamlit, so the CLI, notebooks and tests can call them too.

Does not cover: layout of several figures on a page, colours per user theme, or image export.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

import plotly.graph_objects as go
from plotly.subplots import make_subplots

GOLD_MARK = "★ "
PLAIN = "#1f77b4"
MUTED = "#9aa5b1"
METRIC_COLORS = {"Gold Hit": "#2ca02c", "ER": "#1f77b4", "CER": "#d62728"}


def _short(text: str, n: int = 60) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= n else text[: n - 1] + "…"


def _base(fig: go.Figure, title: str, height: int) -> go.Figure:
    fig.update_layout(title=title or None, height=height, margin={"l": 10, "r": 10, "t": 50 if title else 30, "b": 10},
                      template="plotly_white")
    return fig


def context_heatmap(
    objects: Sequence[str], attributes: Sequence[str], incidence: Sequence[Sequence[int]], *,
    gold: Sequence[str] = (), object_labels: Mapping[str, str] | None = None,
    attribute_labels: Mapping[str, str] | None = None, title: str = "Formal context",
) -> go.Figure:
    """Turns (rows) x requirements (columns); a filled cell means the turn has the attribute.

    Gold rows get a star in their label. Hover shows the full turn and requirement text.
    """
    object_labels = object_labels or {}
    attribute_labels = attribute_labels or {}
    gold_set = set(gold)
    ylab = [(GOLD_MARK if o in gold_set else "") + str(o) for o in objects]
    hover = [
        [f"{_short(object_labels.get(o, o), 90)}<br>× {_short(attribute_labels.get(a, a), 60)}: "
         f"{'yes' if (row[j] if j < len(row) else 0) else 'no'}" for j, a in enumerate(attributes)]
        for o, row in zip(objects, incidence, strict=False)
    ]
    z = [[int(v) for v in row] for row in incidence]
    fig = go.Figure(go.Heatmap(
        z=z, x=list(attributes), y=ylab, text=hover, hoverinfo="text", showscale=False,
        colorscale=[[0, "#f4f6f8"], [1, PLAIN]], zmin=0, zmax=1, xgap=2, ygap=2,
    ))
    fig.update_yaxes(autorange="reversed", type="category")
    fig.update_xaxes(side="top", type="category", tickvals=list(attributes),
                     ticktext=[f"{a}: {_short(attribute_labels[a], 28)}" if a in attribute_labels else str(a)
                               for a in attributes])
    row = 22 if len(objects) <= 20 else 15  # px per turn: long pools stay readable without scrolling forever
    fig = _base(fig, title, max(140, row * len(objects) + 70))
    # a few requirements need narrow columns, not the page's width (st.plotly_chart(width="content"))
    fig.update_layout(width=min(1100, 160 + 150 * max(len(attributes), 1)))
    return fig


def coverage_matrix(
    coverage: Mapping[str, Sequence[str]], requirements: Sequence[str], *, gold: Sequence[str] = (),
    requirement_labels: Mapping[str, str] | None = None, title: str = "Requirement coverage",
) -> go.Figure:
    """Selected turns x requirements: which requirement each selected turn covers."""
    turns = list(coverage)
    incidence = [[int(r in set(coverage[t])) for r in requirements] for t in turns]
    return context_heatmap(turns, requirements, incidence, gold=gold,
                           attribute_labels=requirement_labels, title=title)


def lattice_layout(concepts: Sequence[Mapping[str, Any]], edges: Sequence[Sequence[str]]) -> dict[str, tuple[float, float]]:
    """x, y per concept id: layers by intent size (``level`` when given), one barycentre pass.

    The barycentre pass orders each layer by the mean x of the neighbours in the layer below,
    which removes most edge crossings on lattices of a few dozen concepts.
    """
    def level(c: Mapping[str, Any]) -> int:
        return int(c["level"]) if c.get("level") is not None else len(c.get("intent", ()))

    layers: dict[int, list[str]] = defaultdict(list)
    lvl = {}
    for c in concepts:
        lvl[str(c["id"])] = level(c)
        layers[level(c)].append(str(c["id"]))
    nbrs: dict[str, list[str]] = defaultdict(list)
    for lo, hi in edges:
        nbrs[str(lo)].append(str(hi))
        nbrs[str(hi)].append(str(lo))
    pos: dict[str, tuple[float, float]] = {}
    for y in sorted(layers):
        ids = layers[y]
        below = [[pos[n][0] for n in nbrs[i] if n in pos] for i in ids]
        keyed = [(sum(b) / len(b) if b else k, k, i) for k, (i, b) in enumerate(zip(ids, below, strict=True))]
        ordered = [i for _, _, i in sorted(keyed)]
        width = max(len(ordered) - 1, 1)
        for k, i in enumerate(ordered):
            pos[i] = ((k / width) if len(ordered) > 1 else 0.5, float(y))
    return pos


CONCEPT_COLORS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22")
TOP_COLOR = "#7f7f7f"  # the top concept: every pool turn, no requirement
MAX_CONCEPT_LEGEND = len(CONCEPT_COLORS)  # beyond this many concepts, one colour per intent size


def concept_name(intent: Sequence[str], n_extent: int, attribute_labels: Mapping[str, str]) -> str:
    """A concept's legend entry: its requirements (ids and short texts) and how many turns hold them."""
    if not intent:
        return f"no requirement: every pool turn ({n_extent})"
    reqs = " + ".join(f"{a} {_short(attribute_labels[a], 28)}" if a in attribute_labels else str(a) for a in intent)
    return f"{reqs} ({n_extent} turn{'s' if n_extent != 1 else ''})"


def lattice_figure(
    concepts: Sequence[Mapping[str, Any]], edges: Sequence[Sequence[str]], used: Sequence[str] = (), *,
    object_labels: Mapping[str, str] | None = None, attribute_labels: Mapping[str, str] | None = None,
    gold: Sequence[str] = (), title: str = "Concept lattice",
) -> go.Figure:
    """The concept lattice layered by intent size; hover lists extent and intent.

    Each concept has its own colour and legend entry naming its requirements (the top concept grey;
    beyond :data:`MAX_CONCEPT_LEGEND` concepts, one colour and entry per intent size). Concepts the
    prefilter used are drawn larger with a black ring; a concept whose extent is empty is hollow;
    ``★n`` in a label counts the gold turns in its extent.
    """
    object_labels = object_labels or {}
    attribute_labels = attribute_labels or {}
    pos = lattice_layout(concepts, edges)
    used_set, gold_set = {str(u) for u in used}, set(gold)
    ex, ey = [], []
    for lo, hi in edges:
        if str(lo) in pos and str(hi) in pos:
            ex += [pos[str(lo)][0], pos[str(hi)][0], None]
            ey += [pos[str(lo)][1], pos[str(hi)][1], None]
    fig = go.Figure(go.Scatter(x=ex, y=ey, mode="lines", line={"color": MUTED, "width": 1},
                               hoverinfo="skip", showlegend=False))
    per_concept = len(concepts) <= MAX_CONCEPT_LEGEND
    groups: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for c in concepts:
        intent = list(c.get("intent", ()))
        groups[concept_name(intent, len(c.get("extent", ())), attribute_labels) if per_concept or not intent
               else f"{len(intent)} requirement(s)"].append(c)
    colored = 0
    for name, cs in groups.items():
        if any(c.get("intent") for c in cs):
            color, colored = CONCEPT_COLORS[colored % len(CONCEPT_COLORS)], colored + 1
        else:
            color = TOP_COLOR
        hover, text = [], []
        for c in cs:
            extent, intent = list(c.get("extent", ())), list(c.get("intent", ()))
            n_gold = len(gold_set & set(extent))
            star = f"{GOLD_MARK.strip()}{n_gold} " if n_gold else ""
            text.append(f"{star}{{{', '.join(map(str, intent))}}} · {len(extent)}")  # intent and extent size
            hover.append(
                f"<b>{c['id']}</b> ({len(extent)} turns, {len(intent)} requirements"
                + (", used by the prefilter" if str(c["id"]) in used_set else "") + ")<br>"
                f"<b>intent</b>: {', '.join(_short(attribute_labels.get(a, a), 40) for a in intent) or '∅'}<br>"
                f"<b>extent</b>: " + "<br>".join(
                    (GOLD_MARK if o in gold_set else "") + _short(object_labels.get(o, o), 70) for o in extent[:12])
                + ("<br>…" if len(extent) > 12 else ""))
        is_used = [str(c["id"]) in used_set for c in cs]
        fig.add_trace(go.Scatter(
            x=[pos[str(c["id"])][0] for c in cs], y=[pos[str(c["id"])][1] for c in cs],
            mode="markers+text", text=text, textposition="top center", hovertext=hover, hoverinfo="text",
            marker={"size": [18 if u else 11 for u in is_used],
                    "color": [color if c.get("extent") else "white" for c in cs],
                    "line": {"width": [3 if u else 1.5 for u in is_used],
                             "color": ["black" if u else color for u in is_used]}},
            name=name,
        ))
    fig.update_xaxes(visible=False, range=[-0.08, 1.08])
    # the top concept (all turns, empty intent) is drawn at the top, as lattices usually are
    fig.update_yaxes(title="intent size (requirements)", dtick=1, zeroline=False, autorange="reversed")
    fig.update_layout(legend={"orientation": "h", "y": -0.08}, showlegend=True)
    n_layers = len({p[1] for p in pos.values()}) or 1
    return _base(fig, title, max(300, 90 * n_layers + 80 + 22 * min(len(groups), MAX_CONCEPT_LEGEND)))


def metrics_by_step(rows: Sequence[Mapping[str, Any]], title: str = "Gold Hit, ER and CER by step") -> go.Figure:
    """One line per metric; ``rows`` have ``step`` (label) and 0..1 or None ``gold_hit``, ``er``, ``cer``."""
    steps = [str(r["step"]) for r in rows]
    fig = go.Figure()
    # equal values would hide each other: each metric gets its own dash and marker
    styles = {"Gold Hit": ("solid", "circle", 11), "ER": ("dash", "diamond", 8), "CER": ("dot", "x", 7)}
    for key, name in (("gold_hit", "Gold Hit"), ("er", "ER"), ("cer", "CER")):
        ys = [None if r.get(key) is None else 100.0 * float(r[key]) for r in rows]
        dash, symbol, size = styles[name]
        fig.add_trace(go.Scatter(x=list(range(len(steps))), y=ys, mode="lines+markers", name=name,
                                 line={"color": METRIC_COLORS[name], "shape": "hv", "dash": dash, "width": 2},
                                 marker={"symbol": symbol, "size": size},
                                 hovertext=steps, hovertemplate="%{hovertext}: %{y:.0f}%<extra>" + name + "</extra>"))
    fig.update_xaxes(tickvals=list(range(len(steps))), ticktext=[_short(s, 18) for s in steps], title="step")
    fig.update_yaxes(range=[-5, 105], title="%")
    return _base(fig, title, 300)


def pareto_front(points: Sequence[tuple[float, float]]) -> list[int]:
    """Indices of points not dominated (lower-or-equal cost and higher-or-equal quality, one strictly)."""
    front = []
    for i, (c, q) in enumerate(points):
        if not any((c2 <= c and q2 >= q) and (c2 < c or q2 > q) for j, (c2, q2) in enumerate(points) if j != i):
            front.append(i)
    return sorted(front, key=lambda i: points[i][0])


def budget_frontier(
    points: Sequence[Mapping[str, Any]], *, x: str = "calls", y: str = "gold_hit",
    title: str = "Budget frontier",
) -> go.Figure:
    """Quality versus cost, one marker series per arm, labelled by budget; Pareto front dashed.

    ``points`` are dicts with ``arm``, ``budget`` and numeric ``x`` and ``y`` keys (percentages
    for quality, as ``bfr sweep`` writes them).
    """
    pts = [p for p in points if p.get(x) is not None and p.get(y) is not None]
    fig = go.Figure()
    by_arm: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for p in pts:
        by_arm[str(p.get("arm", ""))].append(p)
    for arm, ps in by_arm.items():
        ps = sorted(ps, key=lambda p: float(p[x]))
        fig.add_trace(go.Scatter(
            x=[float(p[x]) for p in ps], y=[float(p[y]) for p in ps], mode="lines+markers+text",
            text=[str(p.get("budget", "")) for p in ps], textposition="top center", name=arm,
            hovertemplate="%{text}: " + x + " %{x:.2f}, " + y + " %{y:.1f}<extra>" + arm + "</extra>"))
    front = pareto_front([(float(p[x]), float(p[y])) for p in pts])
    if front:
        fig.add_trace(go.Scatter(x=[float(pts[i][x]) for i in front], y=[float(pts[i][y]) for i in front],
                                 mode="lines", name="Pareto front", hoverinfo="skip",
                                 line={"dash": "dash", "color": MUTED}))
    fig.update_xaxes(title=x.replace("_", " "))
    fig.update_yaxes(title=y.replace("_", " "))
    return _base(fig, title, 380)


def confusion_figure(
    labels: Sequence[str], counts: Sequence[Sequence[int]], *, rows: str = "A", cols: str = "B",
    title: str | None = None,
) -> go.Figure:
    """counts[i][j] = items ``rows`` labelled labels[i] and ``cols`` labelled labels[j]."""
    z = [[int(v) for v in r] for r in counts]
    fig = go.Figure(go.Heatmap(
        z=z, x=list(labels), y=list(labels), text=[[str(v) for v in r] for r in z], texttemplate="%{text}",
        colorscale="Blues", showscale=False, hovertemplate=rows + ": %{y}<br>" + cols + ": %{x}<br>n = %{z}<extra></extra>",
    ))
    fig.update_yaxes(autorange="reversed", title=rows, type="category")
    fig.update_xaxes(title=cols, type="category")
    return _base(fig, f"{rows} vs {cols}" if title is None else title, 300)


def bar_counts(counts: Mapping[str, int], *, title: str = "", x_title: str = "", y_title: str = "count") -> go.Figure:
    fig = go.Figure(go.Bar(x=[str(k) for k in counts], y=list(counts.values()), marker_color=PLAIN,
                           text=list(counts.values()), textposition="outside"))
    fig.update_xaxes(title=x_title, type="category")
    top = max(counts.values(), default=0)
    fig.update_yaxes(title=y_title, rangemode="tozero", range=[0, top * 1.15 + 0.5], dtick=1 if top <= 10 else None)
    return _base(fig, title, 320)


ANY_GOLD, ALL_GOLD, GAP_FILL = "#2ca02c", "#d62728", "rgba(127, 127, 127, 0.22)"


def sufficiency_gap(
    curves: Mapping[str, Mapping[Any, Mapping[str, Any]]], *, any_key: str = "any", all_key: str = "all",
    title: str = "Any gold against all gold, by budget", columns: int = 4, gap_at: int = 10,
) -> go.Figure:
    """One panel per system over the budget (evidence-set size k): a gold turn among the first k (``any_key``,
    solid) and every gold turn among them (``all_key``, dashed), the band between them shaded: the
    sufficiency gap. The first system's two lines are repeated thin and grey in every other panel, so each
    panel reads against it; a panel's title gives its system and gap at ``gap_at`` turns when measured there.

    ``curves``: system -> budget (a number or its string) -> a dict with both keys (percentages), in the order
    the panels are drawn; a budget missing either key is left out of that panel, a system with none is left out.
    """
    panels = []
    for system, points in curves.items():
        rows = sorted(((float(b), p) for b, p in points.items()
                       if isinstance(p, Mapping) and p.get(any_key) is not None and p.get(all_key) is not None),
                      key=lambda bp: bp[0])
        if rows:
            panels.append((system, [b for b, _ in rows], [float(p[any_key]) for _, p in rows],
                           [float(p[all_key]) for _, p in rows]))
    cols = max(1, min(columns, len(panels)))
    n_rows = max(1, -(-len(panels) // cols))

    def heading(system: str, xs: list[float], hit: list[float], every: list[float]) -> str:
        gap = [a - b for x, a, b in zip(xs, hit, every, strict=True) if x == gap_at]
        return f"<b>{system}</b>" + (f"<br>gap at {gap_at}: {gap[0]:.1f}" if gap else f"<br>no point at {gap_at}")

    fig = make_subplots(rows=n_rows, cols=cols, shared_yaxes=True, horizontal_spacing=0.03,
                        vertical_spacing=0.35 / n_rows if n_rows > 1 else 0.1,
                        subplot_titles=[heading(*panel) for panel in panels])
    for j, (system, xs, hit, every) in enumerate(panels):
        at = {"row": j // cols + 1, "col": j % cols + 1}
        fig.add_trace(go.Scatter(x=[*xs, *xs[::-1]], y=[*hit, *every[::-1]], mode="none", fill="toself",
                                 fillcolor=GAP_FILL, name="gap", legendgroup="gap", showlegend=j == 0,
                                 hoverinfo="skip"), **at)
        for ys, colour, dash, label in ((every, ALL_GOLD, "dash", "all gold"), (hit, ANY_GOLD, "solid", "any gold")):
            fig.add_trace(go.Scatter(
                x=xs, y=ys, mode="lines+markers", name=label, legendgroup=label, showlegend=j == 0,
                line={"color": colour, "dash": dash, "width": 2},
                hovertemplate="%{x:.0f} turns: %{y:.1f}%<extra>" + f"{system}: {label}" + "</extra>"), **at)
        if j:  # the first system, for reference
            first = panels[0]
            for ys, label in ((first[3], "all gold"), (first[2], "any gold")):
                fig.add_trace(go.Scatter(x=first[1], y=ys, mode="lines", name=f"{first[0]} (for reference)",
                                         legendgroup="reference", showlegend=j == 1 and label == "any gold",
                                         line={"color": MUTED, "width": 1}, hoverinfo="skip"), **at)
    fig.update_xaxes(type="log", tickvals=[5, 10, 20, 40], range=[0.6, 1.7])
    fig.update_yaxes(range=[0, 100])
    fig.update_yaxes(title="% of questions", col=1)
    fig.update_xaxes(title="turns (k)", row=n_rows)
    fig.update_annotations(font_size=12)
    height = 110 + 220 * n_rows
    fig = _base(fig, title, height)
    fig.update_layout(margin={"t": 110}, legend={"orientation": "h", "yref": "container", "y": 1 - 50 / height,
                                                 "yanchor": "top", "x": 0, "xanchor": "left"})
    return fig


def judge_accept_figure(judges: Mapping[str, Mapping[str, Any]], known_wrong: Sequence[str] = (),
                        title: str = "Accept rate by judge and system") -> go.Figure:
    """Grouped bars: for each system (x), each judge's accept rate (% CORRECT of decided answers).
    ``judges`` is a judge report's ``judges`` section (judge -> {"by_system": {system: {"accept_pct",
    "undecided_pct", "n"}}}); a system whose answers are all wrong (``known_wrong``) is marked with
    "✗", so every bar over it is a false accept."""
    systems = sorted({s for j in judges.values() for s in j.get("by_system", {})},
                     key=lambda s: (s in known_wrong, s))
    names = [("✗ " if s in known_wrong else "") + _short(s, 34) for s in systems]
    fig = go.Figure()
    for judge, data in judges.items():
        by = data.get("by_system", {})
        ys = [by.get(s, {}).get("accept_pct") for s in systems]
        und = [by.get(s, {}).get("undecided_pct") for s in systems]
        fig.add_trace(go.Bar(
            name=_short(judge, 40), x=names, y=ys, text=[None if y is None else f"{y:.0f}" for y in ys],
            textposition="outside", customdata=und,
            hovertemplate=judge + "<br>%{x}<br>accept %{y:.1f} %<br>undecided %{customdata} %<extra></extra>"))
    fig.update_layout(barmode="group", legend={"orientation": "h", "y": -0.25})
    fig.update_yaxes(title="accepted (% of decided)", range=[0, 110])
    fig.update_xaxes(type="category")
    return _base(fig, title, 420)


def arm_bars(rows: Sequence[Mapping[str, Any]], *, measure: str = "Gold Hit", title: str = "") -> go.Figure:
    """One bar per arm: ``rows`` have ``arm``, ``value`` (0-100 or None), ``lo`` / ``hi`` (an interval,
    or None) and ``size`` (the set size the value was measured at, shown under the arm's name)."""
    shown = [r for r in rows if r.get("value") is not None]
    names = [f"{r['arm']}<br>({r['size']:g} turns)" if r.get("size") is not None else str(r["arm"]) for r in shown]
    vals = [float(r["value"]) for r in shown]
    has_ci = all(r.get("lo") is not None and r.get("hi") is not None for r in shown) and bool(shown)
    err = ({"type": "data", "symmetric": False, "array": [float(r["hi"]) - v for r, v in zip(shown, vals, strict=True)],
            "arrayminus": [v - float(r["lo"]) for r, v in zip(shown, vals, strict=True)], "color": "#444"}
           if has_ci else None)
    fig = go.Figure(go.Bar(x=names, y=vals, error_y=err, marker_color=METRIC_COLORS.get(measure, PLAIN),
                           text=[f"{v:.1f}" for v in vals], textposition="inside",
                           hovertemplate="%{x}: %{y:.1f}<extra>" + measure + "</extra>"))
    fig.update_yaxes(title=measure + " (%)", range=[0, 105])
    return _base(fig, title, 320)
