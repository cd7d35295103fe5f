"""Which question the Demo page replays, and the page's computed facts (cached per store).

The case: LongMemEval's real shutter-release question ``b3c15d39`` when loaded, else the embedded
demo dataset's analogue (the camera strap delivery interval, found by its text). The facts: each
gold turn's rank in every ranked view (``bfr_core.evaluation.cases.view_ranks``) and the gallery of
relevance-versus-sufficiency cases mined from the store's finished runs (``load_cases``).
Every sentence the page prints about them is composed here from those numbers (:func:`verdict`),
and so are the sentences on the paper's point read from a BFR trace's Stage I steps
(:func:`stage_one_facts`, :func:`point`) and the comparison at a common set size (:func:`equal_size`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass

import streamlit as st

from bfr_core.arm_names import canonical_arm
from bfr_core.duck import StoreError
from bfr_core.evaluation import cases as CS
from bfr_core.records import Trace
from bfr_core.store import Store

REAL_QID = "b3c15d39"
VIEW_NAMES = {"bm25": "BM25", "dense": "dense", "hybrid": "hybrid (BM25 + dense)"}


@dataclass(frozen=True)
class Case:
    dataset_id: str
    question_id: str
    real: bool  # the LongMemEval question itself, not the demo analogue


def find_case(store: Store) -> Case | None:
    sets = store.datasets()
    for d in sets:
        if d["kind"] == "longmemeval":
            try:
                store.question(d["dataset_id"], REAL_QID)
            except StoreError:
                continue
            return Case(d["dataset_id"], REAL_QID, True)
    for d in sorted(sets, key=lambda d: d["dataset_id"] != "demo"):
        for q in store.questions(d["dataset_id"]):
            t = q.text.lower()
            if "camera strap" in t and ("arrive" in t or "receive" in t) and len(q.gold) >= 2:
                return Case(d["dataset_id"], q.question_id, False)
    return None


@st.cache_data(show_spinner="Ranking the scope in every view…")
def view_ranks(path: str, dataset_id: str, question_id: str, *, dense: bool | None = None) -> dict[str, dict[str, int]]:
    """``dense``: True encodes the scope now if needed (the page's button: the demo store is built
    without vectors so that it opens at once); ``None`` ranks by dense only when vectors are cached."""
    from ui import resources as R

    return CS.view_ranks(R.open_store(path), dataset_id, question_id, dense=dense)


@st.cache_data(show_spinner="Mining relevance-versus-sufficiency cases…")
def gallery(path: str) -> list[dict]:
    """Every mined case of every finished run in the store, clearest first within a run; each run's sets
    cut to its common set size first (``summary.common_size``), so a case compares sets of one size; arms
    by registered name (``arm_names``)."""
    from bfr_core.runs import list_runs
    from ui import resources as R

    store = R.open_store(path)
    out = []
    for run in list_runs(store):
        if not run.get("finished") or not run.get("current"):
            continue
        _, k = R.set_sizes(path, run["run_id"])
        for c in CS.load_cases(store, run["run_id"], run["dataset_id"], k):
            out.append({"run_id": run["run_id"], "dataset_id": run["dataset_id"], **asdict(c),
                        "topk_arm": canonical_arm(c.topk_arm), "bfr_arm": canonical_arm(c.bfr_arm),
                        "clear_pair": c.clear_pair})
    return out


def verdict(ranks: Mapping[str, Mapping[str, int]], k: int, label: Mapping[str, str]) -> list[tuple[bool, str]]:
    """One sentence per view on Figure 1's premise (top-``k`` holds one gold turn, misses another):
    ``(holds, text)``, every number read from ``ranks``."""
    out = []
    for p in CS.premise(ranks, k):
        r = ranks[p.view]
        name = VIEW_NAMES.get(p.view, p.view)
        where = ", ".join(f"{label.get(g, g)} at rank {r[g]}" for g in sorted(r, key=lambda g: (r[g], g)))
        if p.holds:
            out.append((True, f"{name}: the premise holds: the top-{k} keeps {len(p.inside)} gold turn(s) and "
                              f"misses {len(p.outside)} ({where})."))
        elif not p.outside:
            out.append((False, f"{name}: the premise fails: the top-{k} already holds every gold turn ({where})."))
        else:
            out.append((False, f"{name}: the premise fails the other way: the top-{k} holds no gold turn ({where})."))
    return out


def small_scope(scope_turns: int, k: int) -> str:
    """Why a premise cannot hold in a scope smaller than a top-k arm's k ("" when it is not smaller)."""
    if scope_turns >= k:
        return ""
    return f"The whole scope is {scope_turns} turns, fewer than mem0's k of {k}, so any top-k holds all of it."


def rank_rows(gold: Sequence[str], ranks: Mapping[str, Mapping[str, int]], held: Mapping[str, Sequence[str]],
              label: Mapping[str, str]) -> list[dict]:
    """One row per gold turn: its rank in each view and whether each arm's set holds it (a bool, which the
    page draws as a checkbox: a drawn mark, where a ✓ glyph needs a font that has it)."""
    return [{"gold turn": label.get(g, g),
             **{f"rank · {VIEW_NAMES.get(v, v)}": r.get(g) for v, r in ranks.items()},
             **{f"in {arm}": g in ev for arm, ev in held.items()}} for g in gold]


RECORDED, RULES = "recorded model decomposition", "offline rules"


@dataclass(frozen=True)
class StageOneFacts:
    """What a BFR trace's Stage I steps say about the gold turns."""

    requirements: tuple[tuple[str, str], ...]  # (id, text) in order
    source: str  # where the requirements came from (the trace's own words)
    covers: dict[str, tuple[str, ...]]  # gold turn in the pool -> the requirement ids its incidence row holds
    cover: tuple[str, ...]  # the minimum subset Stage I selected
    e0: tuple[str, ...]  # the grounded initial set


def stage_one_facts(trace: Trace, gold: Sequence[str]) -> StageOneFacts | None:
    """Stage I's requirements, each gold turn's incidence row, the cover and E0; None for a trace
    without Stage I (a top-k arm)."""
    by_kind = {s.kind: s for s in trace.steps}
    if not {"requirements", "context", "selection", "grounding"} <= set(by_kind):
        return None
    reqs = by_kind["requirements"].data.get("requirements", [])
    ctx = by_kind["context"].data
    attrs = list(ctx.get("attributes", []))
    rows = dict(zip(ctx.get("objects", []), ctx.get("incidence", []), strict=False))
    covers = {g: tuple(a for a, bit in zip(attrs, rows[g], strict=False) if bit) for g in gold if g in rows}
    return StageOneFacts(tuple((str(r["id"]), str(r.get("text", ""))) for r in reqs),
                         str(by_kind["requirements"].data.get("source", "")), covers,
                         tuple(by_kind["selection"].data.get("selected", [])),
                         tuple(by_kind["grounding"].data.get("e0", by_kind["grounding"].evidence)))


def point(facts: StageOneFacts, gold: Sequence[str], label: Mapping[str, str]) -> list[tuple[bool, str]]:
    """The paper's point, one ``(holds, sentence)`` per claim: at least two requirements; no gold turn
    satisfies them all alone; Stage I's minimum cover holds every gold turn."""
    rids = [r for r, _ in facts.requirements]
    names = "; ".join(f"{r} “{t}”" for r, t in facts.requirements)
    out = [(len(rids) >= 2, f"{len(rids)} requirement(s) ({names}), from {facts.source}.")]
    parts = []
    for g in gold:
        got = facts.covers.get(g)
        parts.append(f"{label.get(g, g)} " + ("is not in Stage I's pool" if got is None else
                                              f"covers {', '.join(got)} only" if got and len(got) < len(rids) else
                                              "covers every requirement" if got else "covers none"))
    alone = [g for g in gold if set(facts.covers.get(g, ())) >= set(rids)]
    out.append((bool(rids) and len(rids) >= 2 and not alone and all(g in facts.covers for g in gold),
                ("No gold turn satisfies every requirement alone: " if not alone else
                 "One gold turn satisfies every requirement alone: ") + "; ".join(parts) + "."))
    held = [g for g in gold if g in facts.cover]
    out.append((len(held) == len(gold) > 0,
                f"Stage I's minimum cover is {len(facts.cover)} turn(s) ("
                + ", ".join(label.get(t, t) for t in facts.cover) + f"): it holds {len(held)} of {len(gold)} gold turns"
                + (", so the requirements need both." if len(held) == len(gold) == 2 and not alone else ".")))
    return out


def equal_size(gold: Sequence[str], pairs: Sequence[tuple[Sequence[str], str, Sequence[str]]]) -> list[dict]:
    """One row per common set size: ``pairs`` holds (mem0's top-k, which BFR-MV set, that set), both
    of one length (a ValueError otherwise: sets of different sizes are not compared); each row gives
    the size and how many gold turns each set holds."""
    rows = []
    for topk, which, bfr_set in pairs:
        if len(topk) != len(bfr_set):
            raise ValueError(f"mem0 has {len(topk)} turns and BFR-MV {len(bfr_set)}: compare at one set size")
        rows.append({"set size": len(topk), "mem0 (BM25 top-k)": f"{sum(g in topk for g in gold)} / {len(gold)}",
                     "BFR-MV": f"{sum(g in bfr_set for g in gold)} / {len(gold)}", "BFR-MV set": which})
    return rows
