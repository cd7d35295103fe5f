"""Paper-style Markdown tables for a finished run, with paired tests (the shapes of Tables 2-5, 12).

Covers: per-type tables of retrieval measures (Gold Hit, ER, CER) and answer measures (F1, judge,
Suff@Set) when present, and paired comparisons of every arm against a reference arm: exact McNemar
on Gold Hit, judge and Suff@Set (uncertain excluded) with Holm-adjusted p-values across the
comparisons, and a paired bootstrap of the F1 difference (10,000 samples, seed 20260908); each arm's
mean set size and calls. Arms are compared at one set size: ``k`` cuts every arm's set to its first
k ids (``summary.cut_rows``); without ``k`` the run is cut to ``summary.common_size`` (the smallest
arm's largest set) unless ``own_budgets`` is asked, which the header then flags; paired tests of
arms at different sizes are refused. Per-type cells of proportions (Gold Hit, CER, J, Suff) carry
their Wilson 95% interval, and a type with fewer than :data:`SMALL_N` questions is marked.
Each arm's origin (:func:`arm_origins`: built-in, plug-in, imported; a plug-in runs in-process and
can read gold, so a warning follows when one is in the run). Every stored name goes through
``errors.printable`` (a terminal never acts on a control character in it).
Does not cover: LaTeX, cross-run comparisons.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from bfr_core.arm_names import canonical_arm
from bfr_core.errors import BfrError, printable
from bfr_core.evaluation.imported import imported_systems
from bfr_core.evaluation.stats import holm, mcnemar_exact, paired_bootstrap, wilson_interval
from bfr_core.evaluation.summary import common_size, describe_sizes, run_rows, set_sizes, summarize
from bfr_core.pipeline import BUILTIN_ARMS
from bfr_core.roles.answer_judge import UNDECIDED
from bfr_core.store import Store

MEASURES = (("gold_hit", "Gold Hit"), ("er", "ER"), ("cer", "CER"), ("f1", "F1"), ("judge", "J"), ("suff", "Suff"))
SMALL_N = 10  # a question type with fewer questions than this is marked: its figures move by 10+ points per question
SMALL_MARK = "†"
# per-row values of the measures that are proportions (one 0/1 outcome per question; None = not scored)
PROPORTION = {
    "gold_hit": lambda r: r["gold_hit"],
    "cer": lambda r: r["cer"],
    "judge": lambda r: None if r.get("judge") in (None, UNDECIDED) else float(r["judge"] == "CORRECT"),
    "suff": lambda r: None if r.get("suff") in (None, "uncertain") else float(r["suff"] == "sufficient"),
}


def _fmt(v: Any) -> str:
    return "–" if v is None else f"{v:.1f}"


def interval(rows: Sequence[dict[str, Any]], key: str) -> tuple[float, float, int] | None:
    """Wilson 95% interval (percent) of a proportion measure over ``rows`` and the n it is over; None
    for a measure that is not a proportion or has no scored row."""
    if key not in PROPORTION:
        return None
    vals = [v for v in (PROPORTION[key](r) for r in rows) if v is not None]
    if not vals:
        return None
    lo, hi = wilson_interval(int(round(sum(vals))), len(vals))
    return 100 * lo, 100 * hi, len(vals)


def type_table(summary: dict[str, Any], rows: Sequence[dict[str, Any]] = ()) -> str:
    """Rows = arms; columns = each question type's measures (with ``n``; a type under :data:`SMALL_N`
    questions marked), then overall (Tables 2, 5 shape), then the arm's mean set size. With ``rows``
    (the rows the summary was computed from), proportions carry their Wilson 95% interval."""
    arms = summary["arms"]
    types = sorted({t for a in arms.values() for t in a["by_type"]})
    n_of = {t: max(a["by_type"].get(t, {}).get("n", 0) for a in arms.values()) for t in types}
    present = [(k, name) for k, name in MEASURES if any(a.get(k) is not None for a in arms.values())]

    def col(t: str) -> str:
        return "overall" if t == "overall" else f"{t} (n={n_of[t]}{SMALL_MARK if n_of[t] < SMALL_N else ''})"

    head = ["Method"] + [f"{col(t)} {name}" for t in [*types, "overall"] for _, name in present] + ["set size"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for arm, a in arms.items():
        cells = [printable(arm)]
        for t in [*types, "overall"]:
            src = a if t == "overall" else a["by_type"].get(t, {})
            sub = [r for r in rows if r["arm"] == arm and (t == "overall" or r["qtype"] == t)]
            for k, _ in present:
                ci = interval(sub, k) if src.get(k) is not None else None
                cells.append(_fmt(src.get(k)) + (f" [{ci[0]:.0f}, {ci[1]:.0f}]" if ci else ""))
        cells.append(str(a.get("mean_set_size")))
        lines.append("| " + " | ".join(cells) + " |")
    notes = []
    if any(n < SMALL_N for n in n_of.values()):
        notes.append(f"{SMALL_MARK} fewer than {SMALL_N} questions: read its figures as anecdotes.")
    if rows:
        notes.append("[lo, hi]: Wilson 95% interval of a proportion (Gold Hit, CER, J, Suff); ER and F1 are means "
                     "of fractions, shown without one.")
    return "\n".join(lines) + ("\n\n" + " ".join(notes) if notes else "")


def type_rows(summary: dict[str, Any], rows: Sequence[dict[str, Any]], key: str) -> list[dict[str, Any]]:
    """One measure per question type (overall last) for a page's table: the type with its n (marked
    under :data:`SMALL_N`), each arm's figure with its Wilson 95% interval when a proportion, and
    each arm's mean set size beside it (for J and Suff, how many rows were decided)."""
    arms = summary["arms"]
    types = sorted({t for a in arms.values() for t in a["by_type"]})
    out = []
    for t in [*types, "overall"]:
        n = max((a if t == "overall" else a["by_type"].get(t, {})).get("n", 0) for a in arms.values())
        row: dict[str, Any] = {"question type": t + (f" {SMALL_MARK}" if n < SMALL_N else ""), "n": n}
        for arm, a in arms.items():
            src = a if t == "overall" else a["by_type"].get(t, {})
            sub = [r for r in rows if r["arm"] == arm and (t == "overall" or r["qtype"] == t)]
            ci = interval(sub, key) if src.get(key) is not None else None
            row[arm] = _fmt(src.get(key)) + (f" [{ci[0]:.0f}, {ci[1]:.0f}]" if ci else "")
            if key in ("judge", "suff"):  # J and Suff are means over the decided rows only: how many
                row[f"{arm} decided"] = f"{ci[2] if ci else 0} of {len(sub)}"
            row[f"{arm} size"] = src.get("mean_set_size")
        out.append(row)
    return out


def arm_figures(summary: dict[str, Any], rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per arm, overall: each present measure (percent) with its Wilson 95% interval when a proportion
    (``<key>_lo`` / ``<key>_hi``), the mean set size and calls: the figures a results panel shows."""
    out = []
    for arm, a in summary["arms"].items():
        sub = [r for r in rows if r["arm"] == arm]
        row: dict[str, Any] = {"arm": arm, "set size": a.get("mean_set_size"), "calls": a.get("mean_calls"),
                               "n": a.get("n")}
        for key, _ in MEASURES:
            if a.get(key) is None:
                continue
            row[key] = a[key]
            ci = interval(sub, key)
            row[f"{key}_lo"], row[f"{key}_hi"] = (ci[0], ci[1]) if ci else (None, None)
        out.append(row)
    return out


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


def paired_table(rows: Sequence[dict[str, Any]], arms: Sequence[str], ref: str, *, own_budgets: bool = False) -> str:
    """Each arm minus ``ref``: ΔGold Hit, ΔJ and ΔSuff with exact McNemar p (Holm-adjusted across
    the comparisons of each measure, in brackets), ΔF1 with its paired-bootstrap 95% CI. Arms whose
    largest sets differ in size are refused (BfrError) unless ``own_budgets``."""
    sizes = {a: n for a, n in set_sizes(rows).items() if a in arms and n > 0}  # an empty arm is empty at any size
    if len(set(sizes.values())) > 1 and not own_budgets:
        raise BfrError(f"arms of different set sizes ({describe_sizes(sizes)}) are not compared: cut them to one "
                       "size (--k) or ask for each arm's own budget (--own-budgets)")
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


def report(store: Store, run_id: str, ref: str | None = None, k: int | None = None, *,
           own_budgets: bool = False) -> str:
    """The run's tables. Without ``k``, every arm is cut to the run's common set size
    (``summary.common_size``) unless ``own_budgets``; the header says which."""
    summarize(store, run_id)  # a clear error for an unknown run before anything else
    sizes = set_sizes(run_rows(store, run_id))
    note = ""
    if k is None and not own_budgets:
        k = common_size(run_rows(store, run_id))
        if k is not None:
            note = (f" · every set cut to its first {k} ids, the smallest arm's largest set ({describe_sizes(sizes)});"
                    " --own-budgets compares each arm at its own size")
    elif k is not None:
        note = f" · every set cut to its first {k} ids"
    if k is not None:
        note += " (F1, J and Suff were computed on each arm's own set)"
    elif len(set(sizes.values())) > 1:
        note = f" · NOT AT EQUAL BUDGET: each arm at its own set size ({describe_sizes(sizes)})"
    summary = summarize(store, run_id, k=k)
    arms = list(summary["arms"])
    if ref is not None and canonical_arm(ref) not in arms:
        raise BfrError(f"--ref {ref!r}: run {run_id} has no such arm (its arms: {', '.join(arms)})")
    ref = canonical_arm(ref) if ref else ("mem0" if "mem0" in arms else arms[0])
    rows = run_rows(store, run_id, k)
    return "\n\n".join([
        f"# Run {printable(run_id)} · {printable(summary['dataset_id'])} · {summary['n_questions']} questions · "
        f"provider: {printable(str(summary['provider']))}{note}",
        "## By question type (percent)", type_table(summary, rows),
        "## Budgets", budget_table(summary, arm_origins(store, run_id, arms)),
        f"## Paired comparisons against {printable(ref)}", paired_table(rows, arms, ref, own_budgets=own_budgets),
    ]) + "\n"
