"""Paper-style Markdown tables for a finished run, with paired tests (the shapes of Tables 2-5, 12).

Covers: per-type tables of retrieval measures (Gold Hit, ER, CER) and answer measures (F1, judge,
Suff@Set) when present, and paired comparisons of every arm against a reference arm: exact McNemar
on Gold Hit and judge, a paired bootstrap of the F1 difference (10,000 samples, seed 20260908),
Holm-adjusted p-values across the comparisons. Does not cover: LaTeX, cross-run comparisons.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from bfr_core.evaluate import load_results, summarize
from bfr_core.stats import holm, mcnemar_exact, paired_bootstrap
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
        cells = [arm]
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


def paired_table(rows: Sequence[dict[str, Any]], arms: Sequence[str], ref: str) -> str:
    """Each arm minus ``ref``: ΔGold Hit with McNemar p, ΔJ with McNemar p, ΔF1 with bootstrap CI."""
    comps, pvals = [], []
    for arm in arms:
        if arm == ref:
            continue
        pairs = _paired_rows(rows, arm, ref)
        gh = [(a["gold_hit"], b["gold_hit"]) for a, b in pairs if a["gold_hit"] is not None and b["gold_hit"] is not None]
        if not gh:
            continue
        m = mcnemar_exact([x == 1 for x, _ in gh], [y == 1 for _, y in gh])
        j = [(a["judge"], b["judge"]) for a, b in pairs if a["judge"] and b["judge"]]
        mj = mcnemar_exact([x == "CORRECT" for x, _ in j], [y == "CORRECT" for _, y in j]) if j else None
        f = [(a["f1"], b["f1"]) for a, b in pairs if a["f1"] is not None and b["f1"] is not None]
        bf = paired_bootstrap([x for x, _ in f], [y for _, y in f]) if f else None
        comps.append((arm, len(pairs), m, mj, bf))
        pvals.append(m.p_value)
    adjusted = holm(pvals) if pvals else []
    lines = ["| Comparison | n | ΔGold Hit | McNemar p | Holm p | ΔJ | J p | ΔF1 | 95% CI |", "|" + "---|" * 9]
    for (arm, n, m, mj, bf), p_adj in zip(comps, adjusted, strict=True):
        dj = f"{100 * mj.delta:+.1f}" if mj else "–"
        jp = f"{mj.p_value:.3g}" if mj else "–"
        df1 = f"{100 * bf.delta:+.1f}" if bf else "–"
        ci = f"[{100 * bf.ci_low:.1f}, {100 * bf.ci_high:.1f}]" if bf else "–"
        lines.append(f"| {arm} − {ref} | {n} | {100 * m.delta:+.1f} | {m.p_value:.3g} | {p_adj:.3g} | {dj} | {jp} "
                     f"| {df1} | {ci} |")
    return "\n".join(lines)


def report(store: Store, run_id: str, ref: str | None = None) -> str:
    summary = summarize(store, run_id)
    arms = list(summary["arms"])
    ref = ref or ("mem0" if "mem0" in arms else arms[0])
    rows = load_results(store, run_id)
    return "\n\n".join([
        f"# Run {run_id} · {summary['dataset_id']} · {summary['n_questions']} questions · provider: "
        f"{summary['provider']}",
        "## By question type (percent)", type_table(summary),
        f"## Paired comparisons against {ref}", paired_table(rows, arms, ref),
    ]) + "\n"
