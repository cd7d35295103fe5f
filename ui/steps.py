"""One renderer per Trace step kind; the Trace and Demo pages reveal steps through :func:`render_step`.

The step ``data`` keys are the ones stage1 / stage2 / baselines document (see records.Step);
an unknown kind falls back to its JSON, so a new step type never breaks the page.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import streamlit as st

from bfr_core import plots
from bfr_core.arm_names import canonical_arm
from bfr_core.evaluation import metrics
from bfr_core.method.word_trust import describe
from bfr_core.records import Step, Trace, Turn
from ui import markup
from ui import widgets as W


@dataclass
class StepView:
    dataset_id: str
    turns: dict[str, Turn]  # every turn of the question's scope
    gold: frozenset[str] = frozenset()
    show_gold: bool = True
    key: str = "step"
    req_labels: dict[str, str] = field(default_factory=dict)
    recorded: Any = None  # a model's recorded decomposition of the question (``recorded_for``), or None

    @property
    def marked(self) -> frozenset[str]:
        return self.gold if self.show_gold else frozenset()

    def labels(self) -> dict[str, str]:
        return {tid: f"{t.speaker}: {t.text}" for tid, t in self.turns.items()}

    def pick(self, ids: Sequence[str]) -> list[Turn]:
        return [self.turns[i] for i in ids if i in self.turns]


def _table(rows: Sequence[dict], v: StepView, key: str) -> None:
    W.show_turns_table(W.turns_frame(rows, v.turns, gold=v.gold, show_gold=v.show_gold), key=key,
                       dataset_id=v.dataset_id)


def _rows(cands: Sequence[Any]) -> list[dict]:
    """Candidates as rows: dicts keep their keys, bare ids become {"turn_id": id}. The arms record
    ``rank`` from 0 (``enumerate``); every table of the app counts from 1, so it is shown + 1."""
    rows = [dict(c) if isinstance(c, dict) else {"turn_id": str(c)} for c in cands]
    return [{**r, "rank": r["rank"] + 1} if isinstance(r.get("rank"), int) else r for r in rows]


def retained_by_view(actions: Sequence[dict], retained: Sequence[str]) -> list[tuple[int, int]]:
    """Per action: (retained turns it offered first, retained turns an earlier view offered too).

    A turn two views both offer is retained once; counted under the first view, the first numbers
    add up to the round's total (less any retained turn no view listed)."""
    kept, seen, out = set(retained), set(), []
    for act in actions:
        ids = {c["turn_id"] for c in _rows(act.get("candidates", []))} & kept
        out.append((len(ids - seen), len(ids & seen)))
        seen |= ids
    return out


def _gold_note(ids: Sequence[str], v: StepView, where: str = "among these") -> str:
    """``· gold among these: 1/2``: which set the count is over is always said (a step's own
    candidates, or the evidence set after the step)."""
    if not v.show_gold or not v.gold:
        return ""
    return f" · gold {where}: {len(v.gold & set(ids))}/{len(v.gold)}"


def pool(s: Step, v: StepView) -> None:
    cands = s.data.get("candidates", [])
    st.caption(f"{len(cands)} candidates from the **{W.esc(s.data.get('view', '?'))}** view"
               + _gold_note([c["turn_id"] for c in cands], v, "among the candidates"))
    priors = pool_priors(s.data)
    if priors:
        st.caption("Priors on this question: " + " · ".join(W.esc(p) for p in priors))
    _table(_rows(cands), v, f"{v.key}_pool")


def pool_priors(d: dict) -> list[str]:
    """What the arm ``conv-fusion`` read from the question beyond its words (empty for other arms' pools)."""
    out = []
    if d.get("named_speaker"):
        out.append(f"speaker prior on {d['named_speaker']}")
    if d.get("date_windows"):
        out.append("date prior on sessions dated " + ", ".join(f"{lo} to {hi}" for lo, hi in d["date_windows"]))
    if d.get("regime"):
        out.append(describe(d["regime"], d.get("signals")))
    ante = d.get("antecedent")
    if ante:  # the associative step ran (a model was given and the words carried little)
        said = f'"{ante["statement"]}"' if ante.get("statement") else "no earlier message"
        out.append(f"associative step ({ante.get('source', '?')}): also searched with {said}")
    cl = d.get("clauses")
    if cl:  # the remark regime scored the remark's clauses apart
        out.append(f"dense part over its {len(cl['texts'])} clauses ({cl['mode']} of their similarities): "
                   + " · ".join(f'"{t}"' for t in cl["texts"]))
    return out


def requirements(s: Step, v: StepView) -> None:
    reqs = s.data.get("requirements", [])
    v.req_labels.update({str(r["id"]): str(r.get("text", "")) for r in reqs})
    source = str(s.data.get("source", "?"))
    st.caption(f"{len(reqs)} requirements · source: {W.esc(source)}")
    st.dataframe([{"id": r["id"], "requirement": r.get("text", ""), "kind": r.get("kind", "")} for r in reqs],
                 hide_index=True, key=f"{v.key}_reqs")
    if "rules" in source:
        model_requirements(v.recorded, thin=len(reqs) < 2)


def recorded_for(store: Any, question: str) -> Any:
    """A model's decomposition of ``question`` kept in ``store``'s LLM cache (the demo ships the local
    model's), or None."""
    from bfr_core.roles.decomposer import recorded

    return recorded(store, question)


def local_trace_time() -> str:
    """The measured time of one full trace with the local model, as a phrase citing its JSON ("" if
    unmeasured): Run all on the Trace page with every call made (``bench/speed/bench_trace_local.py``), else
    the mean time of the two calls an fca-ms trace makes (decompose, select) in
    ``bench/quality/bench_llm_local.py``'s run."""
    out = Path(__file__).resolve().parents[1] / "bench" / "out"
    try:
        t = json.loads((out / "trace_local.json").read_text("utf-8"))["runs"]["cold"]
        calls = sum(r["calls"] for r in t["llm_calls_by_role"].values())
        return (f" One full trace with it (Run all on {canonical_arm(t['arm'])}: {calls} model calls, the answer and the judge "
                f"included) took {t['run_all_s']:.0f} s on the demo's camera-strap question, loading the model "
                f"included, on a shared 2-core machine at load {t['loadavg_after'][0]:.0f} "
                "(`bench/out/trace_local.json`).")
    except (OSError, ValueError, KeyError, TypeError):
        pass
    try:
        roles = json.loads((out / "llm_local.json").read_text("utf-8"))["time_by_role"]
        s = roles["decompose"]["mean_s"] + roles["select"]["mean_s"]
    except (OSError, ValueError, KeyError, TypeError):
        return ""
    return (f" One fca-ms trace with it takes about {s:.0f} s on 2 cores (its decompose and select calls, "
            "mean over 50 LoCoMo questions, `bench/out/llm_local.json`).")


def model_requirements(rec: Any, *, thin: bool) -> None:
    """Under an offline decomposition: the model's recorded requirements, and how to get model
    requirements when the offline ones leave the lattice thin (one requirement)."""
    if rec is not None:
        st.markdown(f"**Requirements a model gives** (recorded from {W.esc(rec.model)} on {W.esc(rec.date)}; "
                    "not used by this offline run):")
        st.dataframe([{"requirement": r} for r in rec.requirements], hide_index=True)
    if thin:
        st.info("One requirement: the formal context has one column and the lattice little structure. For model "
                "requirements choose a model in the Provider select (or the sidebar). The local model needs no API "
                "key: `bash scripts/install_local_llm.sh`, then `[llm] provider = \"local\"` in `bfr.toml` (the "
                "README's “Using a model”) and Refresh." + local_trace_time(), icon=":material/info:")


def context(s: Step, v: StepView) -> None:
    d = s.data
    st.caption(f"{len(d.get('objects', []))} turns × {len(d.get('attributes', []))} requirements")
    shown = {o: W.turn_label(o, v.turns) for o in d.get("objects", [])}  # one display form of turn ids
    labels = v.labels()
    st.plotly_chart(plots.context_heatmap(list(shown.values()), d.get("attributes", []), d.get("incidence", []),
                                          gold=sorted(shown[g] for g in v.marked if g in shown),
                                          object_labels={shown[o]: labels.get(o, o) for o in shown},
                                          attribute_labels=v.req_labels, title=""), key=f"{v.key}_ctx",
                    width="content")


def lattice(s: Step, v: StepView) -> None:
    d = s.data
    st.caption(f"{len(d.get('concepts', []))} concepts, labelled {{intent}} · extent size, one colour each (the "
               "legend names their requirements); black ring: used by the prefilter; hollow: no turn; ★n: gold "
               "turns in the extent; hover for the turns and requirements")
    st.plotly_chart(plots.lattice_figure(d.get("concepts", []), d.get("edges", []), d.get("used", []),
                                         object_labels=v.labels(), attribute_labels=v.req_labels,
                                         gold=sorted(v.marked), title=""), key=f"{v.key}_lat")


def prefilter(s: Step, v: StepView) -> None:
    kept, dropped = s.data.get("kept", []), s.data.get("dropped", [])
    st.caption(f"kept {len(kept)}, dropped {len(dropped)}" + _gold_note(kept, v, "among the kept"))
    _table(_rows(kept), v, f"{v.key}_pre")


def selection(s: Step, v: StepView) -> None:
    d = s.data
    cov = d.get("coverage", {}) or {}
    st.caption(f"method: {W.esc(d.get('method', '?'))} · {len(d.get('selected', []))} selected"
               + (" · fallback used" if d.get("fallback") else ""))
    for key, what in (("uncovered", "Uncovered requirements"), ("uncoverable", "Requirements no candidate covers")):
        if d.get(key):
            st.warning(f"{what}: " + ", ".join(W.esc(v.req_labels.get(r, r)) for r in d[key]))
    if cov:
        reqs = list(v.req_labels) or sorted({r for rs in cov.values() for r in rs})
        st.plotly_chart(plots.coverage_matrix(cov, reqs, gold=sorted(v.marked), requirement_labels=v.req_labels,
                                              title=""), key=f"{v.key}_cov", width="content")
    W.turn_cards(v.pick(d.get("selected", [])), dataset_id=v.dataset_id, gold=v.gold, show_gold=v.show_gold,
                 key=f"{v.key}_sel")


def grounding(s: Step, v: StepView) -> None:
    e0 = s.data.get("e0", list(s.evidence))
    st.caption(f"E0: {len(e0)} source turns" + _gold_note(e0, v, "in E0"))
    scores = s.data.get("scores") or {}
    notes = {t: f"score {float(x):.3f}" for t, x in scores.items()} if isinstance(scores, dict) else {}
    W.turn_cards(v.pick(e0), dataset_id=v.dataset_id, gold=v.gold, show_gold=v.show_gold, key=f"{v.key}_e0",
                 notes=notes)


def round_(s: Step, v: StepView) -> None:
    d = s.data
    counters, budget = d.get("counters", {}), d.get("budget", {})
    st.markdown(" ".join(f":blue-badge[{name} {counters.get(name, 0)}"
                         + (f" / {budget[name]}" if budget.get(name) is not None else "") + "]"
                         for name in ("rounds", "calls", "new")))
    retained = list(d.get("retained", []))
    kept = set(retained)
    rows, lines = [], []
    actions = list(d.get("actions", []))
    for act, (first, again) in zip(actions, retained_by_view(actions, retained), strict=True):
        view, cands = str(act.get("view", "?")), _rows(act.get("candidates", []))
        cue = str(act.get("cue") or "—")
        index = f" ({W.esc(act['index'])})" if act.get("index") and act.get("index") != view else ""
        if act.get("skipped"):
            why = act.get("reason") or (act["skipped"] if isinstance(act["skipped"], str) else "")
            lines.append(f"- **{W.esc(view)}**{index}: skipped" + (f" ({W.esc(str(why))})" if why else ""))
            continue
        lines.append(f"- **{W.esc(view)}**{index} · cue: {W.esc(cue[:120])} · {len(cands)} candidates, "
                     f"{first} retained" + (f" (+{again} an earlier view offered too, counted there)" if again else ""))
        rows += [{"view": view, "retained": c["turn_id"] in kept, **c} for c in cands]  # a drawn checkbox, no glyph
    st.markdown("\n".join(lines) or "(no action)")
    if d.get("stopped_by"):
        st.caption(f"budget reached: **{W.esc(str(d['stopped_by']))}** · schedule {W.esc(str(d.get('schedule', '')))}")
    st.markdown(f"**Retained this round**: {len(retained)} turns" + _gold_note(retained, v, "among the retained"))
    st.caption("Each retained turn is counted once, under the first view that offered it, so the views' "
               "counts add up to this total.")
    seen = {r["turn_id"] for r in rows}
    rows += [{"view": "", "retained": True, "turn_id": t} for t in retained if t not in seen]
    _table(rows, v, f"{v.key}_cands")


def topk(s: Step, v: StepView) -> None:
    d = s.data
    hits = d.get("hits", [])
    st.caption(f"top-{d.get('k', len(hits))} from the **{W.esc(d.get('view', '?'))}** view · cue: "
               f"{W.esc(str(d.get('cue', '')))}" + _gold_note([h["turn_id"] for h in hits], v, "in the top-k"))
    W.turn_cards(v.pick([h["turn_id"] for h in hits]), dataset_id=v.dataset_id, gold=v.gold,
                 show_gold=v.show_gold, key=f"{v.key}_topk",
                 notes={h["turn_id"]: f"score {float(h.get('score', 0)):.3f}" for h in hits})


def other(s: Step, v: StepView) -> None:  # noqa: ARG001 - the renderer signature
    st.json(s.data, expanded=False)


RENDERERS: dict[str, Callable[[Step, StepView], None]] = {
    "pool": pool, "requirements": requirements, "context": context, "lattice": lattice,
    "prefilter": prefilter, "selection": selection, "grounding": grounding, "round": round_, "topk": topk,
}


def render_step(i: int, s: Step, v: StepView, previous: Sequence[str] = ()) -> None:
    new = [e for e in s.evidence if e not in set(previous)]
    gold_txt = _gold_note(s.evidence, v, "in the evidence set")
    st.subheader(f"{i + 1}\\. {markup.text(s.title or s.kind)}", anchor=False)
    st.caption(f"step kind {markup.code(s.kind)} · evidence after it: {len(s.evidence)} turns (+{len(new)}) · "
               f"calls so far: {s.calls}{gold_txt}")
    # widget keys unique per step (several rounds render the same widgets); req_labels stays shared
    RENDERERS.get(s.kind, other)(s, replace(v, key=f"{v.key}{i}"))


def metric_rows(trace: Trace, gold: Sequence[str], upto: int) -> list[dict[str, Any]]:
    """Gold Hit / ER / CER of the evidence after each of the first ``upto`` steps."""
    return [{"step": f"{i + 1}. {s.kind}", "gold_hit": metrics.gold_hit(s.evidence, gold),
             "er": metrics.evidence_recall(s.evidence, gold), "cer": metrics.complete_evidence_recall(s.evidence, gold)}
            for i, s in enumerate(trace.steps[:upto])]


def gold_first(evidence: Sequence[str], gold: Sequence[str]) -> list[dict[str, Any]]:
    """Rows of an evidence set, gold turns first, each with its ``position`` in the set (from 1)."""
    marked = set(gold)
    rows = [{"turn_id": t, "position": i + 1} for i, t in enumerate(evidence)]
    return [r for r in rows if r["turn_id"] in marked] + [r for r in rows if r["turn_id"] not in marked]
