"""Who agrees with whom on sufficiency: the LLM judges' labels beside the annotators', kappa, confusion.

Covers: the LLM judges' labels read from ``results.suff_detail`` (and ``results.suff`` as the final
one; :func:`parse_suff_detail`, :func:`judge_labels`), every rater's current labels with judges
named ``llm:<name>`` (:func:`rater_labels`), Cohen's kappa and observed agreement for every pair of
raters (:func:`agreement`), a confusion matrix (:func:`confusion`) and the disagreement queue
(:func:`disagreements`). Does not cover: the queue, blinding, saving and export of human labels
(``evaluation.labels``), the statistics themselves (``evaluation.stats``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from itertools import combinations
from typing import Any

from bfr_core.evaluation.labels import JUDGE_PREFIX, JUDGED_WHOLE, LABELS, ensure_schema
from bfr_core.evaluation.stats import cohen_kappa, confusion_matrix
from bfr_core.store import Store


# -- LLM judges ---------------------------------------------------------------------------------
def _label_of(value: Any) -> str | None:
    if isinstance(value, dict):
        value = value.get("label", value.get("final"))
    if isinstance(value, str) and value.strip().lower() in LABELS:
        return value.strip().lower()
    return None


SKIP_KEYS = ("judges", "judge_labels", "adjudicator", "adjudication", "adjudicated", "final", "label", "reasons")


def parse_suff_detail(detail: Any, final: str | None = None) -> dict[str, str]:
    """Judge name -> label from a ``results.suff_detail`` value (JSON text or already parsed).

    Accepted shapes: what ``bfr_core.evaluation.answers`` writes (``judge_labels``, ``adjudicated``, ``judges``
    = the three models' labels; judge names become "judge A (<model>)"),
    ``{"judges": [{"name"|"judge"|"model": ..., "label": ...}, ...]}``,
    ``{"judges": {name: label | {"label": ...}}}``, an ``adjudicator`` / ``adjudication`` entry,
    or plain ``{name: label}`` pairs. ``final`` (``results.suff``) is added as ``"final"``.
    """
    if isinstance(detail, str):
        try:
            detail = json.loads(detail)
        except json.JSONDecodeError:
            detail = None
    out: dict[str, str] = {}
    if isinstance(detail, dict):
        judges = detail.get("judges")
        if isinstance(judges, list) and not isinstance(detail.get("judge_labels"), list | tuple):
            for k, j in enumerate(judges):
                name = (j.get("name") or j.get("judge") or j.get("model") or f"judge {k + 1}") if isinstance(j, dict) else f"judge {k + 1}"
                if (lab := _label_of(j)) is not None:
                    out[str(name)] = lab
        elif isinstance(judges, dict):
            out.update({str(n): lab for n, v in judges.items() if (lab := _label_of(v)) is not None})
        pair = detail.get("judge_labels")  # bfr_core.evaluation.answers: the two judges' labels (+ who judged)
        if isinstance(pair, list | tuple):
            who = [str(j) for j in judges] if isinstance(judges, list) and all(isinstance(j, str) for j in judges) else []
            for k, (name, v) in enumerate(zip(("judge A", "judge B"), pair, strict=False)):
                if (lab := _label_of(v)) is not None:
                    out[f"{name} ({who[k]})" if k < len(who) else name] = lab
            final_lab = _label_of(detail.get("label")) or _label_of(final)
            if detail.get("adjudicated") is True and final_lab is not None:
                out[f"adjudicator ({who[2]})" if len(who) > 2 else "adjudicator"] = final_lab
        for key in ("adjudicator", "adjudication"):
            if (lab := _label_of(detail.get(key))) is not None:
                out["adjudicator"] = lab
        for key, v in detail.items():
            if key not in SKIP_KEYS and isinstance(v, str) and (lab := _label_of(v)) is not None:
                out[str(key)] = lab
        if (lab := _label_of(detail.get("final", detail.get("label")))) is not None:
            out["final"] = lab
    if (lab := _label_of(final)) is not None:
        out["final"] = lab
    return out


def judge_labels(store: Store, item_id: str) -> dict[str, str]:
    """LLM judges' labels for an item (from the first of its sources that was judged)."""
    return judged_item(store, item_id)[0]


def judged_item(store: Store, item_id: str) -> tuple[dict[str, str], str]:
    """:func:`judge_labels` and the provider of the run that judged them ("" when none did). Under the
    offline rules provider judge A, B and the adjudicator are one function: they agree by construction,
    so a page must name the provider beside the labels."""
    ensure_schema(store)
    rows = store.cursor().execute(
        "SELECT r.suff_detail, r.suff, coalesce(u.provider, '') FROM label_sources s JOIN label_items i USING (item_id) "
        "JOIN results r ON r.run_id = s.run_id AND r.question_id = i.question_id AND r.arm = s.arm "
        f"LEFT JOIN runs u ON u.run_id = s.run_id WHERE s.item_id = ? AND {JUDGED_WHOLE} "
        "ORDER BY s.run_id, s.arm", [item_id],
    ).fetchall()
    for detail, final, provider in rows:
        found = parse_suff_detail(detail, final)
        if found:
            return found, provider
    return {}, ""


def rater_labels(store: Store) -> dict[str, dict[str, str]]:
    """Rater -> {item_id: current label}; LLM judges appear as ``llm:<name>``."""
    ensure_schema(store)
    out: dict[str, dict[str, str]] = {}
    for item_id, annotator, label in store.cursor().execute(
        "SELECT item_id, annotator, label FROM current_labels").fetchall():
        out.setdefault(annotator, {})[item_id] = label
    rows = store.cursor().execute(
        "SELECT s.item_id, r.suff_detail, r.suff FROM label_sources s JOIN label_items i USING (item_id) "
        "JOIN results r ON r.run_id = s.run_id AND r.question_id = i.question_id AND r.arm = s.arm "
        f"WHERE {JUDGED_WHOLE} ORDER BY s.run_id, s.arm").fetchall()
    for item_id, detail, final in rows:
        for name, label in parse_suff_detail(detail, final).items():
            out.setdefault(JUDGE_PREFIX + name, {}).setdefault(item_id, label)
    return out


# -- agreement ----------------------------------------------------------------------------------
def paired(raters: dict[str, dict[str, str]], a: str, b: str) -> tuple[list[str], list[str]]:
    common = sorted(set(raters.get(a, {})) & set(raters.get(b, {})))
    return [raters[a][i] for i in common], [raters[b][i] for i in common]


def agreement(store: Store, raters: dict[str, dict[str, str]] | None = None) -> list[dict[str, Any]]:
    """Cohen's kappa, observed agreement and n for every pair of raters sharing items."""
    raters = rater_labels(store) if raters is None else raters
    out = []
    for a, b in combinations(sorted(raters), 2):
        la, lb = paired(raters, a, b)
        if not la:
            continue
        cm = confusion_matrix(la, lb, LABELS)
        out.append({"rater_a": a, "rater_b": b, "n": len(la), "agreement": round(cm.agreement, 4),
                    "kappa": round(cohen_kappa(la, lb, LABELS), 4)})
    return out


def confusion(raters: dict[str, dict[str, str]], a: str, b: str) -> tuple[tuple[str, ...], tuple[tuple[int, ...], ...]]:
    """(labels, counts) with ``a`` in rows and ``b`` in columns, over the items both labelled."""
    la, lb = paired(raters, a, b)
    cm = confusion_matrix(la, lb, LABELS)
    return tuple(str(x) for x in cm.labels), cm.counts


def disagreements(
    store: Store, raters: dict[str, dict[str, str]] | None = None, *, among: Iterable[str] | None = None,
) -> list[dict[str, Any]]:
    """Items whose current labels differ between raters (only items ``among`` when given)."""
    raters = rater_labels(store) if raters is None else raters
    keep = None if among is None else set(among)
    by_item: dict[str, dict[str, str]] = {}
    for rater, labs in raters.items():
        for item_id, lab in labs.items():
            if keep is None or item_id in keep:
                by_item.setdefault(item_id, {})[rater] = lab
    return [{"item_id": i, **labs} for i, labs in sorted(by_item.items())
            if len(labs) > 1 and len(set(labs.values())) > 1]
