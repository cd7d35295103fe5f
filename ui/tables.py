"""The Failures page's data: one row per question with every arm side by side, filters, summaries.

No streamlit here (bench/speed/bench_app.py times these functions directly). SQL is parameterised; the
only identifiers built into SQL text are pivot column aliases made from arm names stored in the
runs table, quoted as identifiers (besides ``arm_names.canonical_arm_sql``, built from constants). Arms
are shown by registered name (``arm_names``: a run stored under an alias shows as its arm). Filters are
pandas boolean masks, never query strings.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from bfr_core.arm_names import canonical_arm, canonical_arm_sql
from bfr_core.store import Store

# result column -> pivot suffix; judge and suff become 1 / 0 / NULL so every filter is numeric
METRICS: tuple[tuple[str, str], ...] = (
    ("gold_hit", "GH"), ("er", "ER"), ("cer", "CER"), ("set_size", "size"), ("f1", "F1"),
    ("CASE judge WHEN 'CORRECT' THEN 1 WHEN 'WRONG' THEN 0 END", "J"),
    ("CASE suff WHEN 'sufficient' THEN 1 WHEN 'insufficient' THEN 0 END", "Suff"),
)
# What each number means, shown as column help and under the tables.
MEANING = {
    "Gold Hit": "1 when the evidence set holds at least one gold turn (a turn the benchmark marks as "
                "evidence), else 0; the mean over questions in %. Questions without gold turns are left out.",
    "Turn Hit": "1 when the set holds a turn the answer text occurs in, else 0.",
    "ER": "Evidence Recall: the share of the question's gold turns the set holds (0 to 1; mean in %).",
    "CER": "Complete Evidence Recall: 1 only when the set holds every gold turn, else 0 (mean in %).",
    "set size": "turns in the evidence set.",
    "F1": ("LoCoMo's token F1 of the answer against the reference answer (0 to 1), as its official scorer "
           "computes it: words split at spaces, so a script written without spaces (Chinese, Japanese, Thai) "
           "scores 0 even for the right answer; read J there."),
    "judge": "J: 1 when the judge calls the answer CORRECT, 0 when WRONG; the mean is over decided rows only "
             "(the offline rules leave some UNDECIDED; those are counted apart, not as wrong).",
    "Suff": "Suff@Set: 1 when the judges call the evidence set sufficient for the whole reference answer, 0 when "
            "insufficient; the mean is over decided rows only (uncertain / undecided rows are counted apart).",
}
def judged_by(provider: str | None) -> str:
    """The run's provider as the page names who judged J and Suff (the offline rules said as such)."""
    if provider in (None, ""):
        return "an unrecorded provider"
    return "offline rules (deterministic heuristics, no model)" if provider in ("rules", "offline rules") else provider


ARM = canonical_arm_sql("arm")  # the arm column by registered name, in SQL
SHORT = {"Gold Hit": "GH", "ER": "ER", "CER": "CER", "set size": "size", "F1": "F1", "judge": "J", "Suff": "Suff"}
OPS = ("=", "≠", "<", "≤", ">", "≥", "contains")


def _ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def run_arms(store: Store, run_id: str) -> list[str]:
    row = store.cursor().execute("SELECT arms FROM runs WHERE run_id = ?", [run_id]).fetchone()
    arms = list(row[0]) if row and row[0] else []
    found = [r[0] for r in store.cursor().execute(
        "SELECT DISTINCT arm FROM results WHERE run_id = ? ORDER BY arm", [run_id]).fetchall()]
    return arms + [a for a in found if a not in arms]


def pivot_results(store: Store, run_id: str) -> pd.DataFrame:
    """question_id, qtype, question, then ``<arm> GH|ER|CER|size|F1|J|Suff`` for each arm (by registered
    name, ``arm_names``)."""
    arms = run_arms(store, run_id)
    parts, params = [], []
    for arm in arms:
        for expr, short in METRICS:
            parts.append(f"first({expr}) FILTER (WHERE r.arm = ?) AS {_ident(f'{canonical_arm(arm)} {short}')}")
            params.append(arm)
    cols = (",\n       " + ",\n       ".join(parts)) if parts else ""
    sql = f"""
SELECT r.question_id, any_value(r.qtype) AS qtype, any_value(q.text) AS question{cols}
FROM results r
LEFT JOIN runs ru ON ru.run_id = r.run_id
LEFT JOIN questions q ON q.dataset_id = ru.dataset_id AND q.question_id = r.question_id
WHERE r.run_id = ?
GROUP BY r.question_id
ORDER BY min(q.position), r.question_id"""
    df = store.cursor().execute(sql, [*params, run_id]).df()
    arm_cols = [c for c in df.columns if c not in ("question_id", "qtype", "question")]
    empty = [c for c in arm_cols if df[c].isna().all() and c.rsplit(" ", 1)[-1] in ("F1", "J", "Suff")]
    return df.drop(columns=empty)


def arm_metric(df: pd.DataFrame, arm: str, metric: str) -> str:
    return f"{arm} {SHORT.get(metric, metric)}"


def _compare(series: pd.Series, op: str, value: Any) -> pd.Series:
    if op == "contains":
        return series.astype("string").str.contains(str(value), case=False, regex=False).fillna(False)
    if pd.api.types.is_numeric_dtype(series):
        try:
            value = float(value)
        except (TypeError, ValueError):
            return pd.Series(False, index=series.index)
    fn = {"=": series.eq, "≠": series.ne, "<": series.lt, "≤": series.le, ">": series.gt, "≥": series.ge}[op]
    return fn(value).fillna(False).astype(bool)


def filter_frame(
    df: pd.DataFrame, *, qtypes: Sequence[str] = (), hit_arm: str | None = None, miss_arm: str | None = None,
    metric: str = "Gold Hit", hit_not_suff: str | None = None, column: str | None = None, op: str = "=",
    value: Any = None,
) -> pd.DataFrame:
    """Rows passing every given filter (each argument left empty is no filter)."""
    mask = pd.Series(True, index=df.index)
    if qtypes:
        mask &= df["qtype"].isin(list(qtypes))
    if hit_arm and miss_arm:
        a, b = arm_metric(df, hit_arm, metric), arm_metric(df, miss_arm, metric)
        if a in df and b in df:
            mask &= (df[a] >= 1) & (df[b] < 1)
    if hit_not_suff:
        gh, suff = arm_metric(df, hit_not_suff, "Gold Hit"), arm_metric(df, hit_not_suff, "Suff")
        mask &= (df[gh] == 1) & (df[suff] == 0) if suff in df else pd.Series(False, index=df.index)
    if column and column in df and value not in (None, ""):
        mask &= _compare(df[column], op, value)
    return df[mask.fillna(False)]


def type_summary(store: Store, run_id: str) -> pd.DataFrame:
    """Per arm and question type (and "Overall"): n and mean metrics, percentages 0-100."""
    return store.cursor().execute(f"""
SELECT {ARM} AS arm, coalesce(qtype, 'Overall') AS qtype, count(*) AS n,
       round(100 * avg(gold_hit), 1) AS "Gold Hit", round(100 * avg(er), 1) AS "ER",
       round(100 * avg(cer), 1) AS "CER", round(avg(set_size), 2) AS "set size", round(avg(calls), 2) AS calls,
       round(100 * avg(f1), 1) AS "F1",
       round(100 * avg(CASE judge WHEN 'CORRECT' THEN 1 WHEN 'WRONG' THEN 0 END), 1) AS "judge",
       round(100 * avg(CASE suff WHEN 'sufficient' THEN 1 WHEN 'insufficient' THEN 0 END), 1) AS "Suff",
       count(CASE WHEN judge IN ('CORRECT', 'WRONG') THEN 1 END) AS "judge decided",
       count(CASE WHEN suff IN ('sufficient', 'insufficient') THEN 1 END) AS "Suff decided"
FROM results WHERE run_id = ?
GROUP BY GROUPING SETS (({ARM}, qtype), ({ARM}))
ORDER BY arm, qtype = 'Overall', qtype""", [run_id]).df()


def type_table(summary: pd.DataFrame, metric: str, arms: Sequence[str]) -> pd.DataFrame:
    """Question types as rows (Overall last), n, then one column per arm for ``metric``."""
    if summary.empty:
        return summary
    wide = summary.pivot_table(index="qtype", columns="arm", values=metric, aggfunc="first", dropna=False)
    wide = wide.reindex(columns=[a for a in arms if a in wide.columns])
    n = summary.groupby("qtype")["n"].max()
    out = wide.assign(n=n).reset_index()
    out = out[["qtype", "n", *wide.columns]]
    decided = f"{metric} decided"
    if decided in summary.columns:  # J and Suff: how many rows each mean is over, per arm
        counts = summary.pivot_table(index="qtype", columns="arm", values=decided, aggfunc="first")
        for arm in wide.columns:
            out[f"{arm} decided"] = [f"{int(counts.at[t, arm])} of {int(k)}" if t in counts.index else "0"
                                     for t, k in zip(out["qtype"], out["n"], strict=True)]
    # no "None" cell: a mean over no row (no gold turn, nothing judged) is shown as a dash
    for arm in wide.columns:
        out[arm] = [("—" if pd.isna(x) else f"{x:g}") for x in out[arm]]
    order = sorted(out["qtype"], key=lambda t: (t == "Overall", str(t)))
    return out.set_index("qtype").loc[order].reset_index()


# -- bfr sweep output -----------------------------------------------------------------------------
def sweep_points(data: Any) -> list[dict[str, Any]]:
    """Frontier points ``{arm, budget, calls, set_size, <metrics>}`` from ``bfr sweep`` JSON.

    Accepts ``{"points": [...]}``, a bare list of points, or ``{"arms": {arm: {budget: {...}}}}``
    (each budget entry may itself be the section 4 contract's per-arm object).
    """
    if isinstance(data, dict) and isinstance(data.get("points"), list):
        data = data["points"]
    if isinstance(data, list):
        return [dict(p) for p in data if isinstance(p, dict) and "arm" in p]
    out: list[dict[str, Any]] = []
    arms = data.get("arms", {}) if isinstance(data, dict) else {}
    for arm, budgets in arms.items():
        if not isinstance(budgets, dict):
            continue
        for budget, m in budgets.items():
            if isinstance(m, dict):
                p = dict(m.get("arms", {}).get(arm, m)) if isinstance(m.get("arms"), dict) else dict(m)
                p.setdefault("calls", p.get("mean_calls"))
                p.setdefault("size", p.get("mean_set_size"))
                out.append({"arm": arm, "budget": budget, **p})
    return out


def load_sweep(path: str | Path) -> list[dict[str, Any]]:
    return sweep_points(json.loads(Path(path).read_text(encoding="utf-8")))


def sweep_files(root: Path) -> list[Path]:
    """``bfr sweep --out DIR`` writes DIR/frontier.json; look for those (and *sweep*.json) under bench/out."""
    out = root / "bench" / "out"
    if not out.is_dir():
        return []
    return sorted({*out.rglob("frontier*.json"), *out.rglob("*sweep*.json")})


QUALITY_SKIP = {"calls", "size", "set_size", "n", "paper_calls", "paper_size", "mean_calls", "mean_set_size"}


def quality_keys(points: Sequence[dict[str, Any]]) -> list[str]:
    """Numeric quality columns of sweep points (Gold Hit, ER, CER, ...), costs excluded."""
    keys = {k for p in points for k, v in p.items() if isinstance(v, int | float) and not isinstance(v, bool)}
    return sorted(keys - QUALITY_SKIP)


Q_FRONTIER = """
WITH latest AS (
    SELECT r.* REPLACE ({ARM} AS arm),
           row_number() OVER (PARTITION BY r.question_id, {ARM}, r.budget ORDER BY u.created DESC, u.run_id) AS n
    FROM results r JOIN runs u USING (run_id) JOIN ({versions}) v USING (run_id)
    WHERE u.dataset_id = ? AND u.finished IS NOT NULL AND r.status = 'ok' AND v.current)
SELECT arm, coalesce(nullif(budget, ''), 'top-k') AS budget, count(*) AS n, avg(calls) AS calls,
       avg(set_size) AS size, 100 * avg(gold_hit) AS gold_hit, 100 * avg(er) AS er, 100 * avg(cer) AS cer
FROM latest WHERE n = 1 GROUP BY arm, budget ORDER BY arm, calls, budget
"""


def store_frontier(store: Store, dataset_id: str) -> list[dict[str, Any]]:
    """Budget-frontier points of this store: one per (arm, budget) over the finished runs of
    ``dataset_id`` (each question's latest result), mean realised calls and set size, Gold Hit,
    ER and CER in percent. Arms run at one budget give one point each. Runs on an earlier version of
    the dataset's data (``runs.CURRENT_RUN``) are left out: their rows are never mixed with current ones."""
    from bfr_core.runs import run_versions

    sql = Q_FRONTIER.replace("{versions}", run_versions(store)).replace("{ARM}", canonical_arm_sql("r.arm"))
    cur = store.cursor().execute(sql, [dataset_id])
    names = [d[0] for d in cur.description]
    return [dict(zip(names, r, strict=True)) for r in cur.fetchall()]
