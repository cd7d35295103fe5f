"""Paper-style Markdown tables for a finished run, with paired tests (the shapes of Tables 2-5, 12).

Covers: per-type tables of retrieval measures (Gold Hit, ER, CER) and answer measures (F1, judge,
Suff@Set) when present, and paired comparisons of every arm against a reference arm: exact McNemar
on Gold Hit, judge and Suff@Set (uncertain excluded) with Holm-adjusted p-values across the
comparisons, and a paired bootstrap of the F1 difference (10,000 samples, seed 20260908); each arm's
mean set size and calls (systems differ in budget: ``k`` cuts every arm's set to its first k ids
first, ``summary.cut_rows``) and origin (:func:`arm_origins`: built-in, plug-in, imported; a plug-in
runs in-process and can read gold, so a warning follows when one is in the run). Every stored name
goes through ``errors.printable`` (a terminal never acts on a control character in it). Does not
cover: LaTeX, cross-run comparisons.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from bfr_core.errors import BfrError, printable
from bfr_core.evaluation.stats import holm, mcnemar_exact, paired_bootstrap
from bfr_core.evaluation.summary import run_rows, summarize
from bfr_core.store import Store

MEASURES = (("gold_hit", "Gold Hit"), ("er", "ER"), ("cer", "CER"), ("f1", "F1"), ("judge", "J"), ("suff", "Suff"))


def _fmt(v: Any) -> str:
    return "–" if v is None else f"{v:.1f}"


def type_table(summary: dict[str, Any]) -> str:
    """Rows = arms; columns = each question type's measures, then overall (Tables 2, 5 shape)."""
    arms = summary["arms"]
    types = sorted({t for a in arms.values() for t in a["by_type"]})
    present = [(k, name) for k, name in MEASURES if any(a.get(k) is not None for a in arms.values())]
    head = ["Method"] + [f"{t} {name}" for t in [*types, "overall"] for _, name in present]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for arm, a in arms.items():
        cells = [printable(arm)]
        for t in [*types, "overall"]:
            src = a if t == "overall" else a["by_type"].get(t, {})
            cells += [_fmt(src.get(k)) for k, _ in present]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _paired_rows(rows: Sequence[dict[str, Any]], arm: str, ref: str) -> list[tuple[dict, dict]]:
    by = defaultdict(dict)
    for r in rows:
        by[r["question_id"]][r["arm"]] = r
    return [(v[arm], v[ref]) for _, v in sorted(by.items()) if arm in v and ref in v]


def _binary_pairs(pairs: Sequence[tuple[dict, dict]], key: str, positive: Any) -> tuple[list[bool], list[bool]]:
    """Paired outcomes of a binary measure where both sides have a value ("uncertain" Suff and the
    offline judge's "UNDECIDED" excluded)."""
    skip = (None, "uncertain", "UNDECIDED")
    both = [(a[key], b[key]) for a, b in pairs if a[key] not in skip and b[key] not in skip]
    return [x == positive for x, _ in both], [y == positive for _, y in both]


BINARY = (("gold_hit", 1, "Gold Hit"), ("judge", "CORRECT", "J"), ("suff", "sufficient", "Suff"))


def paired_table(rows: Sequence[dict[str, Any]], arms: Sequence[str], ref: str) -> str:
    """Each arm minus ``ref``: ΔGold Hit, ΔJ and ΔSuff with exact McNemar p (Holm-adjusted across
    the comparisons of each measure, in brackets), ΔF1 with its paired-bootstrap 95% CI."""
    comps = []
    for arm in arms:
        if arm == ref:
            continue
        pairs = _paired_rows(rows, arm, ref)
        outcomes = {key: _binary_pairs(pairs, key, pos) for key, pos, _ in BINARY}
        tests = {key: mcnemar_exact(*both) if both[0] else None for key, both in outcomes.items()}
        if tests["gold_hit"] is None:
            continue
        f = [(a["f1"], b["f1"]) for a, b in pairs if a["f1"] is not None and b["f1"] is not None]
        bf = paired_bootstrap([x for x, _ in f], [y for _, y in f]) if f else None
        comps.append((arm, len(pairs), tests, bf))
    adjusted: dict[str, list[float | None]] = {}
    for key, _, _ in BINARY:
        ps = [c[2][key].p_value for c in comps if c[2][key] is not None]
        it = iter(holm(ps) if ps else [])
        adjusted[key] = [next(it) if c[2][key] is not None else None for c in comps]
    head = ["Comparison", "n"] + [f"Δ{name} | p (Holm)" for _, _, name in BINARY] + ["ΔF1 | 95% CI"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * (2 + 2 * len(BINARY) + 2)]
    for i, (arm, n, tests, bf) in enumerate(comps):
        cells = [f"{printable(arm)} − {printable(ref)}", str(n)]
        for key, _, _ in BINARY:
            t = tests[key]
            cells += ([f"{100 * t.delta:+.1f}", f"{t.p_value:.3g} ({adjusted[key][i]:.3g})"] if t else ["–", "–"])
        cells += ([f"{100 * bf.delta:+.1f}", f"[{100 * bf.ci_low:.1f}, {100 * bf.ci_high:.1f}]"] if bf
                  else ["–", "–"])
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


PLUGIN_WARNING = ("Plug-in arms run in-process from an installed package and can read the store, gold included: "
                  "their figures are as trustworthy as the package's code (docs/plugins.md).")


def arm_origins(store: Store, run_id: str, arms: Sequence[str]) -> dict[str, str]:
    """Each arm's origin: "built-in" (this workbench's), "imported" (``bfr import-run``: a file, no code
    run) or "plug-in" (any other: an arm of an installed package's ``bfr.arms`` entry point)."""
    from bfr_core.evaluation.imported import imported_systems
    from bfr_core.pipeline import BUILTIN_ARMS

    imported = {s.arm for s in imported_systems(store) if s.run_id == run_id}
    return {a: "built-in" if a in BUILTIN_ARMS else "imported" if a in imported else "plug-in" for a in arms}


def budget_table(summary: dict[str, Any], origins: dict[str, str] | None = None) -> str:
    """Each arm's mean evidence-set size and retrieval calls: the budget its figures were bought at; its
    failed questions (an error, or absent from an imported file), scored as empty sets; and its origin."""
    origins = origins or {}
    lines = ["| Method | mean set size | mean calls | failed (scored empty) | origin |", "|---|---|---|---|---|"]
    lines += [f"| {printable(arm)} | {a.get('mean_set_size')} | {a.get('mean_calls')} | {a.get('failed', 0)} | "
              f"{origins.get(arm, '–')} |" for arm, a in summary["arms"].items()]
    if "plug-in" in origins.values():
        lines.append("\n" + PLUGIN_WARNING)
    return "\n".join(lines)


def report(store: Store, run_id: str, ref: str | None = None, k: int | None = None) -> str:
    summary = summarize(store, run_id, k=k)
    arms = list(summary["arms"])
    if ref is not None and ref not in arms:
        raise BfrError(f"--ref {ref!r}: run {run_id} has no such arm (its arms: {', '.join(arms)})")
    ref = ref or ("mem0" if "mem0" in arms else arms[0])
    rows = run_rows(store, run_id, k)
    cut = f" · every set cut to its first {k} ids" if k is not None else ""
    return "\n\n".join([
        f"# Run {printable(run_id)} · {printable(summary['dataset_id'])} · {summary['n_questions']} questions · "
        f"provider: {printable(str(summary['provider']))}{cut}",
        "## By question type (percent)", type_table(summary),
        "## Budgets", budget_table(summary, arm_origins(store, run_id, arms)),
        f"## Paired comparisons against {printable(ref)}", paired_table(rows, arms, ref),
    ]) + "\n"
